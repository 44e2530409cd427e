"""The scikit-learn learners of the ESMBO paper's spaces (Lacoste et al., UAI 2014, §6.1;
``docs/esmbo.md``) not defined elsewhere: random forest / extra trees (classification and
regression), gradient boosting (classification; regression with the Huber loss) and the RBF SVR.
The RBF SVM is Chapter 3's ``svm_rbf``; the MLP is :mod:`hpo.learners.mlp`.

* ``forest`` / ``forest_regressor``: ``algorithm`` chooses Breiman's random forest
  (``random_forest``) or extremely randomised trees (``extra_trees``); ``bootstrap`` (``"true"`` /
  ``"false"``); ``max_features_ratio`` in (0, 1], 100 trees;
* ``gradient_boosting``: ``max_depth``, ``learning_rate``, ``max_features_ratio``, 100 trees;
* ``gradient_boosting_regressor``: ``max_depth``, ``learning_rate``, ``alpha`` (the Huber loss's
  quantile: the paper's "convex combination of least squares and least absolute deviation", which
  the authors' code realises as ``loss="huber"``; scikit-learn needs alpha < 1, so the range's
  end 1 is given as 1 - 1e-6), 100 trees, every feature at each split;
* ``svr``: ``SVR(kernel="rbf", C, gamma, epsilon)`` under the fit guard's libsvm limits.

A ``max_features_ratio`` becomes ``max(1, round(ratio · n_features))`` features at fit time (the
authors' code: ``int(round(ratio * n_features))``, at least 1; halves round up), which needs the
training set's width: :class:`FeatureRatio` sets it when fitting. Stochastic learners take
``random_state=seed`` (the evaluator's per-configuration seed, as every stochastic learner here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.svm import SVR

from hpo.learners.guard import FitGuard, libsvm_limits
from hpo.learners.registry import Value, register_learner, typed

N_TREES = 100  # [paper §6.1] every forest and boosting model has 100 trees
# scikit-learn's Huber alpha is in the open interval (0, 1); the space's upper end 1 is given as:
MAX_HUBER_ALPHA = 1.0 - 1e-6
FOREST_ALGORITHMS = ("random_forest", "extra_trees")
BOOLEAN_CHOICES = {"true": True, "false": False}
GRADIENT_BOOSTING_TYPES = {
    "n_estimators": int,
    "max_depth": int,
    "learning_rate": float,
    "subsample": float,
}


def n_features_of(ratio: float, n_features: int) -> int:
    """``max(1, round(ratio · n_features))`` with halves rounded up (Python 2's ``round``)."""
    return max(1, int(np.floor(float(ratio) * n_features + 0.5)))


class FeatureRatio:
    """An estimator whose ``max_features`` is a share of the training set's features, resolved
    when fitting (:func:`n_features_of`). Prediction is the wrapped estimator's."""

    def __init__(self, estimator: Any, ratio: float) -> None:
        self.estimator = estimator
        self.ratio = float(ratio)

    def fit(self, X: np.ndarray, y: np.ndarray) -> FeatureRatio:
        self.estimator.set_params(max_features=n_features_of(self.ratio, X.shape[1]))
        self.estimator.fit(X, y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.estimator.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """The wrapped classifier's probabilities (seed 003's performance index reads them)."""
        return self.estimator.predict_proba(X)

    @property
    def classes_(self) -> np.ndarray:
        return self.estimator.classes_


def _flag(value: Value, name: str) -> bool:
    if str(value) not in BOOLEAN_CHOICES:
        raise ValueError(f"{name} must be one of {', '.join(BOOLEAN_CHOICES)}, got {value!r}")
    return BOOLEAN_CHOICES[str(value)]


def _forest(config: Mapping[str, Value], seed: int, classes: tuple[type, type]) -> FeatureRatio:
    algorithm = str(config["algorithm"])
    if algorithm not in FOREST_ALGORITHMS:
        raise ValueError(
            f"algorithm must be one of {', '.join(FOREST_ALGORITHMS)}, got {algorithm!r}"
        )
    estimator = classes[FOREST_ALGORITHMS.index(algorithm)](
        n_estimators=N_TREES,
        bootstrap=_flag(config["bootstrap"], "bootstrap"),
        random_state=seed,
        n_jobs=1,
    )
    return FeatureRatio(estimator, float(config["max_features_ratio"]))


@register_learner("forest")
def forest(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> FeatureRatio:
    """Random forest or extra trees (classification), 100 trees."""
    return _forest(config, seed, (RandomForestClassifier, ExtraTreesClassifier))


@register_learner("forest_regressor", task="regression")
def forest_regressor(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> FeatureRatio:
    """Random forest or extra trees (regression, squared-error splits), 100 trees."""
    return _forest(config, seed, (RandomForestRegressor, ExtraTreesRegressor))


@register_learner("gradient_boosting")
def gradient_boosting(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> GradientBoostingClassifier | FeatureRatio:
    """Gradient boosting classifier (log loss), 100 trees, depth, rate and feature share tuned.
    Seed 003's tree tunes ``n_estimators`` and ``subsample`` too and no feature share; an absent
    argument keeps scikit-learn's default (100 trees are that default)."""
    estimator = GradientBoostingClassifier(
        random_state=seed,
        **{"n_estimators": N_TREES} | typed(config, GRADIENT_BOOSTING_TYPES),
    )
    if "max_features_ratio" not in config:
        return estimator
    return FeatureRatio(estimator, float(config["max_features_ratio"]))


@register_learner("gradient_boosting_regressor", task="regression")
def gradient_boosting_regressor(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> GradientBoostingRegressor:
    """Gradient boosting regressor with the Huber loss (``alpha`` tuned), 100 trees."""
    return GradientBoostingRegressor(
        loss="huber",
        alpha=min(float(config["alpha"]), MAX_HUBER_ALPHA),
        n_estimators=N_TREES,
        max_depth=int(config["max_depth"]),
        learning_rate=float(config["learning_rate"]),
        random_state=seed,
    )


@register_learner("svr", task="regression")
def svr(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> SVR:
    """``SVR(kernel="rbf", C, gamma, epsilon)`` (deterministic: ``seed`` is not used)."""
    return SVR(
        kernel="rbf",
        C=float(config["C"]),
        gamma=float(config["gamma"]),
        epsilon=float(config["epsilon"]),
        **libsvm_limits(guard, n_train),
    )
