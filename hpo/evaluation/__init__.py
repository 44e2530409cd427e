"""Evaluation: the split protocol (:mod:`~hpo.evaluation.protocol`), the evaluator that fits and
scores a configuration (:mod:`~hpo.evaluation.evaluator`), fits in a limited child process
(:mod:`~hpo.evaluation.isolation`), learning tasks and their losses (:mod:`~hpo.tasks`)
and the performance index of Bermúdez-Chacón 2014 (:mod:`~hpo.evaluation.performance_index`)."""
