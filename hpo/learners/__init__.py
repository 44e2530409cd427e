"""Learners: scikit-learn estimators built from a configuration, fitted under a guard.

The configuration names the learner; :func:`make_estimator` builds it from the registry and
:func:`fit_and_predict` fits it under the :class:`FitGuard` and predicts every evaluation set.
Modules: ``guard`` (the work limit), ``registry`` (names -> factories), ``fit`` (one guarded
fit), ``svm_rbf`` (Chapter 3), ``svm`` (Chapter 4's kernels), ``random_forest`` (Table 2.1),
``sklearn_cash`` (the rest of Table 5.1), ``appendix_a`` (seed 003's Appendix A), ``uai2014``
and ``mlp`` (the ESMBO paper's spaces, regression learners included: each learner is registered
with its task), ``ffnn`` (seed 002's PyTorch network, resumable; ``torch_network`` is its PyTorch
side, imported only when it fits), ``autoweka`` (seed 004's CASH space, classification and
regression). Importing this package registers every learner.
"""

from hpo.learners import (  # noqa: F401  (registration)
    appendix_a,
    autoweka,
    ffnn,
    mlp,
    random_forest,
    sklearn_cash,
    svm,
    uai2014,
)
from hpo.learners.fit import (
    FAILED_LABEL,
    ConstantClassifier,
    FitOutcome,
    failed_predictions,
    fit_and_predict,
)
from hpo.learners.guard import ON_LIMIT_CHOICES, FitGuard
from hpo.learners.registry import (
    LearnerFactory,
    check_learner_parameters,
    check_learner_settings,
    factory_of,
    learner_batch_trainer,
    learner_gram_parameter,
    learner_names,
    learner_parameters,
    learner_resources,
    learner_task,
    make_estimator,
    parameters_read,
    register_estimator,
    register_learner,
)
from hpo.learners.svm_rbf import SquaredDistanceCache, rbf_svc_predict, squared_distances

__all__ = [
    "FAILED_LABEL",
    "ON_LIMIT_CHOICES",
    "ConstantClassifier",
    "FitGuard",
    "FitOutcome",
    "LearnerFactory",
    "check_learner_parameters",
    "check_learner_settings",
    "factory_of",
    "failed_predictions",
    "SquaredDistanceCache",
    "fit_and_predict",
    "learner_batch_trainer",
    "learner_gram_parameter",
    "learner_names",
    "learner_parameters",
    "learner_resources",
    "learner_task",
    "make_estimator",
    "parameters_read",
    "rbf_svc_predict",
    "register_estimator",
    "register_learner",
    "squared_distances",
]
