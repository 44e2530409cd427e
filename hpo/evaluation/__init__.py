"""Evaluation: the split protocol (:mod:`~hpo.evaluation.protocol`), the evaluator that validates
a configuration on a batch's folds and tests chosen ones (:mod:`~hpo.evaluation.evaluator`), one
fit (:mod:`~hpo.evaluation.fitting`), checkpoints and networks trained together
(:mod:`~hpo.evaluation.pretraining`), a choice's test error (:mod:`~hpo.evaluation.choices`), a
time budget's clock (:mod:`~hpo.evaluation.clock`), what a fold is scored by
(:mod:`~hpo.evaluation.objective`), a configuration's loss on one instance
(:mod:`~hpo.evaluation.instances`), fits in a limited child process
(:mod:`~hpo.evaluation.isolation`), learning tasks and their losses (:mod:`~hpo.tasks`) and the
performance index of Bermúdez-Chacón 2014 (:mod:`~hpo.evaluation.performance_index`)."""
