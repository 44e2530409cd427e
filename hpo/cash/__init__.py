"""Seed 004 (Thornton 2014, Auto-WEKA): combined algorithm selection and hyperparameter
optimisation under time budgets, evaluated instance by instance (CV folds, nested subsamples,
random splits).

Modules: ``objective`` (a configuration's loss on one instance, through
:class:`hpo.evaluation.evaluator.Evaluator` and its limits), ``base`` (the seed's optimisers on the
one
ask/tell protocol of :mod:`hpo.optimizers.base`: proposals that carry an instance), one module
per method family, each registered in :data:`hpo.optimizers.CLASSES` as ``cash_*``
(``baselines``: Ex-Def, grid, random search; ``smac_instances``: SMAC with instances and
SMAC-10-Batch; ``tpe``: hyperopt's TPE; ``irace``: iterated F-Race), ``run`` (the loop over
instances and its timestamped trajectory, the final CV and test errors and the overfitting
diagnostic).
"""
