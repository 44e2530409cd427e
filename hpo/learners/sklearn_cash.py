"""The classifiers of the scikit-learn space (thesis §4.4.2 and §5.5, Table 5.1) not defined
elsewhere: k nearest neighbours, linear SVM, decision tree, AdaBoost, Gaussian naive Bayes, LDA
and QDA. (The RBF SVM is Chapter 3's ``svm_rbf``; the random forest is ``random_forest``.)

Every argument Table 5.1 does not tune keeps scikit-learn's default. Stochastic learners (linear
SVM's coordinate descent, the tree's feature order, AdaBoost's stumps) take ``random_state=seed``.
The linear SVM is liblinear's ``LinearSVC``, under the fit guard's iteration limit (a liblinear
iteration is a pass over the training rows, so the guard's work limit means the same as for
libsvm). QDA's ``reg_param`` range, ``[1e-3, 1e3]``, exceeds scikit-learn's valid ``[0, 1]``:
values above 1 are given as 1 (each class's covariance is then the identity; see
``docs/learners.md``), and a QDA whose covariance is singular or whose decision values are not
finite raises, so that the fit is recorded as a failure.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.ensemble import AdaBoostClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from hpo.learners.guard import FitGuard
from hpo.learners.random_forest import TREE_ARGUMENTS
from hpo.learners.registry import Value, given, register_learner, typed

KNN_TYPES = {"n_neighbors": int, "weights": str, "p": int}
QDA_MAX_REG_PARAM = 1.0  # scikit-learn's bound: (1 - r) S^2 + r, a variance for r in [0, 1]


class CheckedQDA(QuadraticDiscriminantAnalysis):
    """QDA that raises instead of warning on collinear variables or predicting from non-finite
    decision values (so the fit becomes a recorded failure, never a silent arbitrary label)."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> CheckedQDA:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="Variables are collinear")
            return super().fit(X, y)

    def predict(self, X: np.ndarray) -> np.ndarray:
        if not np.isfinite(self.decision_function(X)).all():
            raise FloatingPointError("QDA decision values are not finite")
        return super().predict(X)


@register_learner("knn")
def nearest_neighbours(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> KNeighborsClassifier:
    """k nearest neighbours, ``n_neighbors`` tuned (deterministic); seed 003's tree also tunes
    the distance ``weights`` and the Minkowski ``p`` (absent ones keep scikit-learn's default)."""
    return KNeighborsClassifier(n_jobs=1, **typed(config, KNN_TYPES))


@register_learner("linear_svm")
def linear_svm(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> LinearSVC:
    """liblinear's linear SVM, ``C`` tuned (seed 003: and the ``penalty``), under the guard's
    iteration limit."""
    return LinearSVC(
        random_state=seed,
        max_iter=guard.iteration_limit(n_train),
        **typed(config, {"C": float, "penalty": str}),
    )


@register_learner("decision_tree")
def decision_tree(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> DecisionTreeClassifier:
    """A CART tree, depth and split/leaf sizes tuned."""
    return DecisionTreeClassifier(random_state=seed, **given(config, TREE_ARGUMENTS))


@register_learner("adaboost")
def adaboost(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> AdaBoostClassifier:
    """AdaBoost (SAMME) over decision stumps, the number of weak learners tuned."""
    return AdaBoostClassifier(n_estimators=int(config["n_estimators"]), random_state=seed)


@register_learner("gaussian_nb")
def gaussian_nb(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> GaussianNB:
    """Gaussian naive Bayes (Table 5.1: no hyperparameter; seed 003: ``var_smoothing``)."""
    return GaussianNB(**typed(config, {"var_smoothing": float}))


@register_learner("lda")
def lda(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> LinearDiscriminantAnalysis:
    """Linear discriminant analysis (no hyperparameter)."""
    return LinearDiscriminantAnalysis()


@register_learner("qda")
def qda(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> CheckedQDA:
    """Quadratic discriminant analysis, ``reg_param`` tuned (given as at most 1; absent: 0,
    scikit-learn's default)."""
    return CheckedQDA(reg_param=min(float(config.get("reg_param", 0.0)), QDA_MAX_REG_PARAM))
