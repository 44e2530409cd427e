"""The classifiers of seed 003's Appendix A (Bermúdez-Chacón 2014) not registered elsewhere:
radius neighbours, nearest centroid, stochastic gradient descent, logistic regression, Nu-SVM,
extra trees, ridge and passive-aggressive. The other nine of the 17 are ``knn``, ``svm``,
``linear_svm``, ``decision_tree``, ``random_forest``, ``lda``, ``qda``, ``gradient_boosting`` and
``gaussian_nb`` (:mod:`hpo.learners.sklearn_cash`, :mod:`hpo.learners.svm`,
:mod:`hpo.learners.random_forest`, :mod:`hpo.learners.uai2014`).

Every factory takes the parameters the tree of ``conf/space/seed003.yaml`` tunes; an absent one
keeps scikit-learn's default, so ``{}`` is the learner at its defaults (the seed's baseline,
§5). The seed used scikit-learn 0.14 (2013); two classes changed since, and are built as their
current equivalents [decision, docs/hierarchical.md]:

* ``PassiveAggressiveClassifier`` is deprecated (scikit-learn 1.8, removed in 1.10): it is built
  as scikit-learn's stated equivalent, ``SGDClassifier(loss="hinge", penalty=None,
  learning_rate="pa1" | "pa2", eta0=C)`` (PA-I for the hinge loss, PA-II for the squared hinge);
* ``LogisticRegression(penalty=...)`` is deprecated (1.8): ``penalty`` l2 / l1 is given as
  ``l1_ratio`` 0 / 1, with the ``saga`` solver for l1 (lbfgs does not support it).

``RadiusNeighborsClassifier`` gets ``outlier_label="most_frequent"`` [decision]: with
scikit-learn's default (None) one test row without a neighbour inside the radius makes the whole
prediction raise. Stochastic learners take ``random_state=seed``; libsvm's Nu-SVM runs under the
fit guard's limits as the other libsvm learners.
"""

from __future__ import annotations

from collections.abc import Mapping

from sklearn.ensemble import ExtraTreesClassifier
from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
from sklearn.neighbors import NearestCentroid, RadiusNeighborsClassifier
from sklearn.svm import NuSVC

from hpo.learners.guard import FitGuard, libsvm_limits
from hpo.learners.random_forest import FOREST_ARGUMENTS
from hpo.learners.registry import Value, as_bool, given, register_learner, typed

PASSIVE_AGGRESSIVE_RATES = {"hinge": "pa1", "squared_hinge": "pa2"}  # PA-I, PA-II
LOGISTIC_PENALTIES = {"l2": 0.0, "l1": 1.0}  # as l1_ratio


@register_learner("radius_neighbors")
def radius_neighbors(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> RadiusNeighborsClassifier:
    """Neighbours within ``radius``, ``weights`` uniform or by distance (deterministic)."""
    return RadiusNeighborsClassifier(
        outlier_label="most_frequent", n_jobs=1, **typed(config, {"radius": float, "weights": str})
    )


@register_learner("nearest_centroid")
def nearest_centroid(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> NearestCentroid:
    """The class of the nearest centroid; ``shrink_threshold`` when the tree's virtual switch
    ``shrink_centroids`` turns it on (absent: no shrinking, the default)."""
    return NearestCentroid(**typed(config, {"shrink_threshold": float}))


@register_learner("sgd")
def sgd(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> SGDClassifier:
    """A linear classifier fitted by stochastic gradient descent: loss, penalty, alpha and (under
    elastic net) l1_ratio tuned."""
    types = {"loss": str, "penalty": str, "alpha": float, "l1_ratio": float}
    return SGDClassifier(random_state=seed, **typed(config, types))


@register_learner("logistic_regression")
def logistic_regression(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> LogisticRegression:
    """Logistic regression, ``C`` and the penalty (l2 or l1, given as ``l1_ratio``) tuned."""
    arguments = typed(config, {"C": float})
    penalty = str(config.get("penalty", "l2"))
    if penalty not in LOGISTIC_PENALTIES:
        raise ValueError(f"penalty must be one of {', '.join(LOGISTIC_PENALTIES)}, got {penalty!r}")
    if penalty != "l2":
        arguments |= {"l1_ratio": LOGISTIC_PENALTIES[penalty], "solver": "saga"}
    return LogisticRegression(random_state=seed, **arguments)


@register_learner("nu_svm")
def nu_svm(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> NuSVC:
    """libsvm's Nu-SVM: ``nu``, the kernel and its parameters tuned (deterministic)."""
    types = {"nu": float, "kernel": str, "gamma": float, "degree": int, "coef0": float}
    arguments = typed(config, types) | typed(config, {"shrinking": as_bool})
    return NuSVC(**arguments, **libsvm_limits(guard, n_train))


@register_learner("extra_trees")
def extra_trees(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> ExtraTreesClassifier:
    """Extremely randomised trees, the forest's arguments tuned as the random forest's."""
    return ExtraTreesClassifier(random_state=seed, n_jobs=1, **given(config, FOREST_ARGUMENTS))


@register_learner("ridge")
def ridge(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> RidgeClassifier:
    """Ridge regression on ±1 targets as a classifier, ``alpha`` tuned (deterministic)."""
    return RidgeClassifier(**typed(config, {"alpha": float}))


@register_learner("passive_aggressive")
def passive_aggressive(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> SGDClassifier:
    """Passive-aggressive (Crammer et al. 2006) as scikit-learn's equivalent SGD: ``C`` (the step
    bound, ``eta0``) and the loss (hinge: PA-I, squared hinge: PA-II) tuned."""
    loss = str(config.get("loss", "hinge"))
    if loss not in PASSIVE_AGGRESSIVE_RATES:
        raise ValueError(f"loss must be one of {', '.join(PASSIVE_AGGRESSIVE_RATES)}, got {loss!r}")
    return SGDClassifier(
        loss="hinge",
        penalty=None,
        learning_rate=PASSIVE_AGGRESSIVE_RATES[loss],
        eta0=float(config.get("C", 1.0)),
        random_state=seed,
    )
