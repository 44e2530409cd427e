"""Learners: scikit-learn estimators built from a configuration, fitted under a guard.

Chapter 3's learner is libsvm's RBF-SVM through scikit-learn (``SVC(kernel="rbf", C, gamma)``, other
arguments default; thesis §3.3). With C up to 1e5 libsvm can run for minutes (measured here: 37 M
iterations, 225 s, on 5000 abalone rows), so every fit runs under a deterministic limit instead of
a wall-clock limit, which would make results depend on machine load. A libsvm iteration costs
time in proportion to the training rows, so the limit is on work, iterations x rows
(``max_work``), as a time limit would be, and on iterations (``max_iter``): a fit on ``n`` rows may
run ``min(max_iter, max_work / n)`` iterations. Retraining a chosen configuration on all of D_TVS
has no work limit (it needs more iterations than the search's fits on fewer rows, and happens a
few times per run). ``benchmarks/fit_cap.py`` measures what the limits change.
What a fit that hits the limit scores is a setting: ``error_one`` (spec §7.7, the author's later
code: loss 1.0) or ``keep`` (the truncated model's own predictions). Every hit is recorded.

RBF kernels can be precomputed: a run fits hundreds of SVMs on the same few training sets, so
:class:`SquaredDistanceCache` keeps each training set's squared distances (one BLAS product) and
a fit hands libsvm ``exp(-gamma D)`` as a precomputed kernel instead of having libsvm evaluate
``exp(-gamma |x - x'|^2)`` entry by entry. libsvm's optimisation is unchanged; only the kernel
values' last bits can differ (both use ``|x|^2 + |x'|^2 - 2 x.x'``, summed in a different order).
"""

from __future__ import annotations

import dataclasses
import functools
import time
import warnings
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from hpo.gp.elementwise import exp_neg_scaled

ON_LIMIT_CHOICES = ("error_one", "keep")


@dataclass(frozen=True)
class FitGuard:
    """The per-fit limit (libsvm iterations, and iterations x training rows), what a fit that
    reaches it scores, and libsvm's memory."""

    max_iter: int = 1_000_000
    max_work: float | None = 5e8  # iterations x training rows; None: max_iter alone
    on_limit: str = "error_one"
    cache_size_mb: float = 500.0  # spec §7.7: libsvm kernel cache of at least 500 MB
    distance_cache_mb: float = 1024.0  # squared distances kept per run; 0: libsvm's own kernel

    def __post_init__(self) -> None:
        if self.on_limit not in ON_LIMIT_CHOICES:
            raise ValueError(f"unknown on_limit {self.on_limit!r}; valid: {ON_LIMIT_CHOICES}")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter}")
        if self.max_work is not None and self.max_work < 1:
            raise ValueError(f"max_work must be >= 1 or null, got {self.max_work}")
        if self.distance_cache_mb < 0:
            raise ValueError(f"distance_cache_mb must be >= 0, got {self.distance_cache_mb}")

    def iteration_limit(self, n_train: int) -> int:
        """libsvm's ``max_iter`` for a fit on ``n_train`` rows."""
        if self.max_work is None:
            return self.max_iter
        return max(1, min(self.max_iter, int(self.max_work // max(1, n_train))))

    def for_retraining(self) -> FitGuard:
        """The guard of the final retraining on all of D_TVS: the iteration limit alone."""
        return dataclasses.replace(self, max_work=None)


def squared_distances(X: np.ndarray) -> np.ndarray:
    """``|x_i|^2 + |x_j|^2 - 2 x_i.x_j`` for all row pairs of ``X`` (libsvm's formula, by BLAS),
    clipped at 0, with an exactly zero diagonal."""
    norms = np.einsum("ij,ij->i", X, X)
    distances = X @ X.T
    distances *= -2.0
    distances += norms[:, None]
    distances += norms[None, :]
    np.maximum(distances, 0.0, out=distances)
    np.fill_diagonal(distances, 0.0)
    return distances


class SquaredDistanceCache:
    """Squared distances among the rows of each training set a run fits on, for RBF Gram matrices.

    Entries are keyed by the caller (a fold's identity) and checked against the rows they were
    computed for. The oldest-used entries are dropped to stay within ``budget_mb``; a training set
    too large for the budget gets no entry (libsvm then computes its kernel itself).
    """

    def __init__(self, X: np.ndarray, budget_mb: float) -> None:
        self.X = X
        self.budget_bytes = int(budget_mb * 2**20)
        self._entries: OrderedDict[Hashable, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._scratch = np.empty(0)

    def gram(self, key: Hashable, rows: np.ndarray, gamma: float) -> np.ndarray | None:
        """``exp(-gamma D)`` for the training rows ``rows`` (None if over budget). The result
        lives in a buffer that the next call overwrites."""
        size = len(rows) ** 2 * 8
        if size > self.budget_bytes:
            return None
        entry = self._entries.get(key)
        if entry is not None and not np.array_equal(entry[0], rows):
            raise ValueError(f"distance cache key {key!r} reused for different rows")
        if entry is None:
            while self._entries and self._used_bytes() + size > self.budget_bytes:
                self._entries.popitem(last=False)
            entry = (np.array(rows), squared_distances(self.X[rows]))
            self._entries[key] = entry
        self._entries.move_to_end(key)
        if self._scratch.size < len(rows) ** 2:
            self._scratch = np.empty(len(rows) ** 2)
        out = self._scratch[: len(rows) ** 2].reshape(len(rows), len(rows))
        return exp_neg_scaled(entry[1], gamma, out)

    def _used_bytes(self) -> int:
        return sum(distances.nbytes for _, distances in self._entries.values())


def make_estimator(
    learner: str, config: Mapping[str, object], guard: FitGuard, seed: int = 0, n_train: int = 0
) -> ClassifierMixin:
    """The estimator for ``learner`` ("svm_rbf" or "random_forest") at ``config``, to be fitted
    on ``n_train`` rows (which sets the SVM's iteration limit)."""
    if learner == "svm_rbf":
        return SVC(
            kernel="rbf",
            C=float(config["C"]),
            gamma=float(config["gamma"]),
            cache_size=guard.cache_size_mb,
            max_iter=guard.iteration_limit(n_train),
        )
    if learner == "random_forest":
        return RandomForestClassifier(random_state=seed, n_jobs=1, **dict(config))
    raise KeyError(f"unknown learner {learner!r}; valid choices: random_forest, svm_rbf")


def rbf_svc_predict(
    model: SVC,
    X: np.ndarray,
    chunk_rows: int = 2048,
    support: np.ndarray | None = None,
    gamma: float | None = None,
) -> np.ndarray:
    """``model.predict(X)`` for a fitted RBF ``SVC``, with the kernel computed by BLAS.

    libsvm predicts one row at a time without BLAS; on large validation sets (tens of thousands
    of rows, up to 5000 support vectors) that dominates a run. This computes the same one-vs-one
    decision values (``sum coef K - rho`` per class pair; a positive value votes for the first
    class) and libsvm's vote (ties go to the lowest class index). Decision values agree with
    libsvm's to rounding (~1e-12), so a label differs only for a point that far from a boundary.
    A model fitted on a precomputed RBF kernel passes its support vectors' rows and ``gamma``.
    """
    support = model.support_vectors_ if support is None else support
    gamma = float(model._gamma) if gamma is None else gamma
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
        np.maximum(sq_dist, 0.0, out=sq_dist)
        kernel = exp_neg_scaled(sq_dist, gamma, out=sq_dist)
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


FAILED_LABEL = -1


@dataclass(frozen=True)
class FitOutcome:
    """Predictions and zero-one errors of one fitted model on each evaluation set, with its cost."""

    predictions: tuple[np.ndarray, ...]
    errors: tuple[float, ...]
    fit_seconds: float
    hit_limit: bool
    failure: str | None = None


def fit_and_predict(
    learner: str,
    config: Mapping[str, object],
    guard: FitGuard,
    X_train: np.ndarray,
    y_train: np.ndarray,
    eval_sets: Sequence[tuple[np.ndarray, np.ndarray]],
    seed: int = 0,
    train_gram: np.ndarray | None = None,
) -> FitOutcome:
    """Fit on the training data, return the zero-one error (fraction) on every evaluation set.

    An empty evaluation set scores NaN. A fit that reaches the guard's limit scores 1.0 everywhere
    when ``guard.on_limit == "error_one"``. ``train_gram``, the RBF kernel among the training rows
    at ``config["gamma"]`` (an ``svm_rbf`` learner only), makes libsvm use it as precomputed.
    """
    start = time.perf_counter()
    hit_limit = False
    if np.unique(y_train).size < 2:
        model: object = ConstantClassifier(int(y_train[0]))
    else:
        model = make_estimator(learner, config, guard, seed, n_train=len(y_train))
        fit_input = X_train
        if train_gram is not None:
            if learner != "svm_rbf":
                raise ValueError(f"a precomputed Gram needs learner svm_rbf, not {learner!r}")
            model.set_params(kernel="precomputed")
            fit_input = train_gram
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(fit_input, y_train)
        hit_limit = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    fit_seconds = time.perf_counter() - start
    if hit_limit and guard.on_limit == "error_one":
        predictions = tuple(np.full(len(y), FAILED_LABEL) for _, y in eval_sets)
    else:
        if isinstance(model, SVC) and model.kernel == "precomputed":
            support, gamma = X_train[model.support_], float(config["gamma"])
            predict = functools.partial(rbf_svc_predict, model, support=support, gamma=gamma)
        else:
            predict = functools.partial(_predict, model)
        predictions = tuple(predict(X) if len(y) else np.empty(0, int) for X, y in eval_sets)
    errors = tuple(
        float(np.mean(p != y)) if len(y) else float("nan")
        for p, (_, y) in zip(predictions, eval_sets, strict=True)
    )
    return FitOutcome(predictions, errors, fit_seconds, hit_limit)
