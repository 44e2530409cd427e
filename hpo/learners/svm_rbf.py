"""Chapter 3's learner: libsvm's RBF-SVM through scikit-learn (thesis §3.3), and its fast paths.

``SVC(kernel="rbf", C, gamma)``, other arguments default, under the fit guard's iteration limit.
This learner is also the RBF SVM of the scikit-learn space (thesis Table 5.1).

RBF kernels can be precomputed: a run fits hundreds of SVMs on the same few training sets, so
:class:`SquaredDistanceCache` keeps each training set's squared distances (one BLAS product) and
a fit hands libsvm ``exp(-gamma D)`` as a precomputed kernel instead of having libsvm evaluate
``exp(-gamma |x - x'|^2)`` entry by entry. libsvm's optimisation is unchanged; only the kernel
values' last bits can differ (both use ``|x|^2 + |x'|^2 - 2 x.x'``, summed in a different order).
Prediction is by BLAS too (:func:`rbf_svc_predict`), for the same reason.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

import numpy as np
from sklearn.svm import SVC

from hpo.learners.guard import FitGuard, libsvm_limits
from hpo.learners.registry import Value, register_learner


def _exp_neg_scaled(values: np.ndarray, gamma: float, out: np.ndarray) -> np.ndarray:
    """``exp(-gamma * values)`` into ``out`` (:func:`hpo.gp.elementwise.exp_neg_scaled`),
    imported on the first kernel: numba's import costs every process that never fits an SVM
    (a refused command, ``--help``) about half a second."""
    from hpo.gp.elementwise import exp_neg_scaled

    return exp_neg_scaled(values, gamma, out)


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
        return _exp_neg_scaled(entry[1], gamma, out)

    def _used_bytes(self) -> int:
        return sum(distances.nbytes for _, distances in self._entries.values())


@register_learner("svm_rbf", gram_parameter="gamma")
def rbf_svm(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> SVC:
    """``SVC(kernel="rbf", C, gamma)`` (deterministic: ``seed`` is not used)."""
    return SVC(
        kernel="rbf",
        C=float(config["C"]),
        gamma=float(config["gamma"]),
        **libsvm_limits(guard, n_train),
    )


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
        kernel = _exp_neg_scaled(sq_dist, gamma, out=sq_dist)
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


def rbf_predictor(
    model: SVC, X_train: np.ndarray, config: Mapping[str, Value]
) -> Callable[[np.ndarray], np.ndarray] | None:
    """BLAS prediction for a fitted RBF ``SVC`` (also one fitted on a precomputed RBF kernel at
    ``config["gamma"]``, whose support vectors are rows of ``X_train``); None for other models."""
    if not isinstance(model, SVC):
        return None
    if model.kernel == "rbf":
        return functools.partial(rbf_svc_predict, model)
    if model.kernel == "precomputed":
        support, gamma = X_train[model.support_], float(config["gamma"])
        return functools.partial(rbf_svc_predict, model, support=support, gamma=gamma)
    return None
