"""Learners: scikit-learn estimators built from a configuration, fitted under a guard.

Chapter 3's learner is libsvm's RBF-SVM through scikit-learn (``SVC(kernel="rbf", C, gamma)``, other
arguments default; thesis §3.3). With C up to 1e5 libsvm can run for minutes (measured here: 37 M
iterations, 225 s, on 5000 abalone rows), so every fit runs under a deterministic iteration limit
(``max_iter``) instead of a wall-clock limit, which would make results depend on machine load.
What a fit that hits the limit scores is a setting: ``error_one`` (spec §7.7, the author's later
code: loss 1.0) or ``keep`` (the truncated model's own predictions). Every hit is recorded.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

ON_LIMIT_CHOICES = ("error_one", "keep")


@dataclass(frozen=True)
class FitGuard:
    """The per-fit limit: libsvm iterations, and what a fit that reaches it scores."""

    max_iter: int = 1_000_000
    on_limit: str = "error_one"
    cache_size_mb: float = 500.0  # spec §7.7: libsvm kernel cache of at least 500 MB

    def __post_init__(self) -> None:
        if self.on_limit not in ON_LIMIT_CHOICES:
            raise ValueError(f"unknown on_limit {self.on_limit!r}; valid: {ON_LIMIT_CHOICES}")


def make_estimator(
    learner: str, config: Mapping[str, object], guard: FitGuard, seed: int = 0
) -> ClassifierMixin:
    """The estimator for ``learner`` ("svm_rbf" or "random_forest") at ``config``."""
    if learner == "svm_rbf":
        return SVC(
            kernel="rbf",
            C=float(config["C"]),
            gamma=float(config["gamma"]),
            cache_size=guard.cache_size_mb,
            max_iter=guard.max_iter,
        )
    if learner == "random_forest":
        return RandomForestClassifier(random_state=seed, n_jobs=1, **dict(config))
    raise KeyError(f"unknown learner {learner!r}; valid choices: random_forest, svm_rbf")


def rbf_svc_predict(model: SVC, X: np.ndarray, chunk_rows: int = 2048) -> np.ndarray:
    """``model.predict(X)`` for a fitted RBF ``SVC``, with the kernel computed by BLAS.

    libsvm predicts one row at a time without BLAS; on large validation sets (tens of thousands
    of rows, up to 5000 support vectors) that dominates a run. This computes the same one-vs-one
    decision values (``sum coef K - rho`` per class pair; a positive value votes for the first
    class) and libsvm's vote (ties go to the lowest class index). Decision values agree with
    libsvm's to rounding (~1e-12), so a label differs only for a point that far from a boundary.
    """
    support = model.support_vectors_
    gamma = float(model._gamma)
    coef = model._dual_coef_  # libsvm's sign convention (sklearn flips dual_coef_ for 2 classes)
    intercept = model._intercept_
    bounds = np.concatenate([[0], np.cumsum(model.n_support_)])
    n_classes = len(model.classes_)
    support_sq = np.einsum("ij,ij->i", support, support)
    labels = np.empty(len(X), dtype=model.classes_.dtype)
    for start in range(0, len(X), chunk_rows):
        rows = X[start : start + chunk_rows]
        sq_dist = np.einsum("ij,ij->i", rows, rows)[:, None] + support_sq[None, :]
        sq_dist -= 2.0 * rows @ support.T
        kernel = np.exp(-gamma * np.maximum(sq_dist, 0.0))
        votes = np.zeros((len(rows), n_classes), dtype=np.int64)
        pair = 0
        for i in range(n_classes):
            for j in range(i + 1, n_classes):
                si, sj = slice(bounds[i], bounds[i + 1]), slice(bounds[j], bounds[j + 1])
                decision = kernel[:, si] @ coef[j - 1, si] + kernel[:, sj] @ coef[i, sj]
                wins_i = decision + intercept[pair] > 0
                votes[:, i] += wins_i
                votes[:, j] += ~wins_i
                pair += 1
        labels[start : start + len(rows)] = model.classes_[np.argmax(votes, axis=1)]
    return labels


def _predict(model: object, X: np.ndarray) -> np.ndarray:
    if isinstance(model, SVC) and model.kernel == "rbf":
        return rbf_svc_predict(model, X)
    return model.predict(X)


class ConstantClassifier:
    """Predicts the single class seen in training (libsvm refuses one-class training sets)."""

    def __init__(self, label: int) -> None:
        self.label = label

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(len(X), self.label)


@dataclass(frozen=True)
class FitOutcome:
    """Zero-one errors of one fitted model on each evaluation set, with its cost."""

    errors: tuple[float, ...]
    fit_seconds: float
    hit_limit: bool


def fit_and_score(
    learner: str,
    config: Mapping[str, object],
    guard: FitGuard,
    X_train: np.ndarray,
    y_train: np.ndarray,
    eval_sets: Sequence[tuple[np.ndarray, np.ndarray]],
    seed: int = 0,
) -> FitOutcome:
    """Fit on the training data, return the zero-one error (fraction) on every evaluation set.

    An empty evaluation set scores NaN. A fit that reaches the guard's limit scores 1.0 everywhere
    when ``guard.on_limit == "error_one"``.
    """
    start = time.perf_counter()
    hit_limit = False
    if np.unique(y_train).size < 2:
        model: object = ConstantClassifier(int(y_train[0]))
    else:
        model = make_estimator(learner, config, guard, seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(X_train, y_train)
        hit_limit = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    fit_seconds = time.perf_counter() - start
    if hit_limit and guard.on_limit == "error_one":
        errors = tuple(1.0 if len(y) else float("nan") for _, y in eval_sets)
    else:
        errors = tuple(
            float(np.mean(_predict(model, X) != y)) if len(y) else float("nan")
            for X, y in eval_sets
        )
    return FitOutcome(errors, fit_seconds, hit_limit)
