"""Evaluation: the split protocol (:mod:`~hpo.evaluation.protocol`), the evaluator that fits and
scores a configuration (:mod:`~hpo.evaluation.evaluator`), what a fold is scored by
(:mod:`~hpo.evaluation.objective`), a configuration's loss on one instance
(:mod:`~hpo.evaluation.instances`), fits in a limited child process
(:mod:`~hpo.evaluation.isolation`), learning tasks and their losses (:mod:`~hpo.tasks`) and the
performance index of Bermúdez-Chacón 2014 (:mod:`~hpo.evaluation.performance_index`)."""
