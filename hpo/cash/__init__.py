"""Seed 004 (Thornton 2014, Auto-WEKA): combined algorithm selection and hyperparameter
optimisation under time budgets, evaluated instance by instance (CV folds, nested subsamples,
random splits).

Modules: ``budget`` (a run's budget in CPU or wall seconds), ``objective`` (a configuration's
loss on one instance, through :class:`hpo.evaluation.evaluator.Evaluator` and its limits), ``base``
(the
ask/tell protocol on (configuration, instance) requests), one module per method family
(``baselines``: Ex-Def, grid, random search; ``smac_instances``: SMAC with instances;
``tpe``: hyperopt's TPE; ``irace``: iterated F-Race), ``methods`` (the registry of method
names), ``run`` (the loop and its timestamped trajectory).
"""
