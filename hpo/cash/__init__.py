"""Thornton 2014 (Auto-WEKA): the CASH space, one conditional space over WEKA's learners,
meta-methods, ensembles and feature selection, built from the component library of
``conf/autoweka/components.yaml`` (:mod:`hpo.cash.space`).

The study's other parts live with their concepts: its method families in :mod:`hpo.optimizers`
(``instances``, the base of optimizers that race over instances; ``cash_baselines``,
``smac_instances``, ``cash_tpe``, ``irace``), the instance-wise objective in
:mod:`hpo.evaluation.instances`, and a run's trials over instances in
``experiments/run/instances.py`` (through the one trial loop, ``experiments/run/trial_loop.py``).
"""

METHOD_PREFIX = "aw_"  # conf/optimizer/aw_<the paper's method name>.yaml


def paper_method_name(method: str) -> str:
    """The paper's name of an Auto-WEKA method (``aw_smac`` -> ``smac``): what the study's
    report calls it and the name of the random stream its optimizer draws from, so that a run
    proposes what it proposed before the methods were method files."""
    return method.removeprefix(METHOD_PREFIX)
