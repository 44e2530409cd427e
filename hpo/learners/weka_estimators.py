"""Small estimators the Auto-WEKA space needs that scikit-learn lacks (spec C1, fidelity C: WEKA's
SimpleLinearRegression, OneR, AdditiveRegression, Vote, the attribute-selection Ranker and
subset search with CFS merit) and adapters that give scikit-learn's estimators WEKA's semantics
(a hidden layer of WEKA's size, WEKA's log2 feature counts, neighbours capped by the rows);
:mod:`hpo.learners.autoweka` builds the space's estimators from them."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin, clone
from sklearn.feature_selection import mutual_info_classif, mutual_info_regression
from sklearn.linear_model import (
    LinearRegression,
)
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier


class SimpleLinearRegression(RegressorMixin, BaseEstimator):
    """WEKA's SimpleLinearRegression: least squares on the one attribute with the lowest
    squared error."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> SimpleLinearRegression:
        errors = [
            np.sum((LinearRegression().fit(X[:, [j]], y).predict(X[:, [j]]) - y) ** 2)
            for j in range(X.shape[1])
        ]
        self.feature_ = int(np.argmin(errors))
        self.model_ = LinearRegression().fit(X[:, [self.feature_]], y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict(X[:, [self.feature_]])


class OneR(ClassifierMixin, BaseEstimator):
    """WEKA's OneR (Holte 1993), approximately: for each attribute a tree on that attribute
    alone with leaves of at least ``min_bucket`` rows; the attribute with the lowest training
    error wins."""

    def __init__(self, min_bucket: int = 6) -> None:
        self.min_bucket = min_bucket

    def fit(self, X: np.ndarray, y: np.ndarray) -> OneR:
        best = None
        for j in range(X.shape[1]):
            tree = DecisionTreeClassifier(min_samples_leaf=self.min_bucket, random_state=0)
            tree.fit(X[:, [j]], y)
            error = float(np.mean(tree.predict(X[:, [j]]) != y))
            if best is None or error < best[0]:
                best = (error, j, tree)
        assert best is not None
        _, self.feature_, self.tree_ = best
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.tree_.predict(X[:, [self.feature_]])


class AdditiveRegression(RegressorMixin, BaseEstimator):
    """WEKA's AdditiveRegression: the mean, then ``n_iterations`` copies of ``base`` each fitted
    to the residuals, added with ``shrinkage`` (forward-stagewise, Friedman 2002)."""

    def __init__(self, base: Any, n_iterations: int = 10, shrinkage: float = 1.0) -> None:
        self.base = base
        self.n_iterations = n_iterations
        self.shrinkage = shrinkage

    def fit(self, X: np.ndarray, y: np.ndarray) -> AdditiveRegression:
        self.offset_ = float(np.mean(y))
        residual = y - self.offset_
        self.models_ = []
        for _ in range(self.n_iterations):
            model = clone(self.base).fit(X, residual)
            residual = residual - self.shrinkage * model.predict(X)
            self.models_.append(model)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.full(len(X), self.offset_)
        for model in self.models_:
            out += self.shrinkage * model.predict(X)
        return out


class Vote(BaseEstimator):
    """WEKA's Vote: members combined by AVG, PROD, MIN or MAX of class probabilities (a member
    without probabilities votes one-hot), or MAJ (majority of labels); for regression AVG/PROD
    average, MAJ takes the median, MIN and MAX the extremes."""

    def __init__(self, members: list[Any], rule: str = "AVG") -> None:
        self.members = members
        self.rule = rule

    def fit(self, X: np.ndarray, y: np.ndarray) -> Vote:
        self.fitted_ = [clone(m).fit(X, y) for m in self.members]
        self.classes_ = np.unique(y) if y.dtype.kind in "iub" else None
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        if self.classes_ is None:
            out = np.stack([m.predict(X) for m in self.fitted_])
            combine = {"MAJ": np.median, "MIN": np.min, "MAX": np.max}.get(self.rule, np.mean)
            return combine(out, axis=0)
        scores = np.stack([self._probabilities(m, X) for m in self.fitted_])
        if self.rule == "MAJ":
            scores = (scores == scores.max(axis=2, keepdims=True)).astype(float)
        combine = {"PROD": np.prod, "MIN": np.min, "MAX": np.max}.get(self.rule, np.mean)
        return self.classes_[np.argmax(combine(scores, axis=0), axis=1)]

    def _probabilities(self, model: Any, X: np.ndarray) -> np.ndarray:
        out = np.zeros((len(X), len(self.classes_)))
        if hasattr(model, "predict_proba"):
            try:
                proba = model.predict_proba(X)
            except AttributeError:  # e.g. SVC without probability estimates
                proba = None
            if proba is not None:
                out[:, np.searchsorted(self.classes_, model.classes_)] = proba
                return out
        out[np.arange(len(X)), np.searchsorted(self.classes_, model.predict(X))] = 1.0
        return out


class Ranker(TransformerMixin, BaseEstimator):
    """WEKA's Ranker with a single-attribute evaluator: attributes whose score is at least
    ``threshold`` times the best score are kept (at least one). ``evaluator``: ``info_gain``
    (mutual information) or ``pearson`` (|r| with the target; for classes the largest |r| with
    a one-vs-rest indicator)."""

    def __init__(
        self, evaluator: str, threshold: float = 0.1, classification: bool = True, seed: int = 0
    ) -> None:
        self.evaluator = evaluator
        self.threshold = threshold
        self.classification = classification
        self.seed = seed

    def fit(self, X: np.ndarray, y: np.ndarray) -> Ranker:
        if self.evaluator == "info_gain":
            info = mutual_info_classif if self.classification else mutual_info_regression
            scores = info(X, y, random_state=self.seed)
        else:
            scores = _abs_correlations(X, y, self.classification)
        top = float(np.max(scores)) if len(scores) else 0.0
        keep = scores >= self.threshold * top if top > 0 else np.ones(len(scores), bool)
        keep[int(np.argmax(scores))] = True
        self.support_ = keep
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return X[:, self.support_]


class SubsetSearch(TransformerMixin, BaseEstimator):
    """Greedy Stepwise (``patience=1``) and Best First (a greedy path that tolerates
    ``patience`` non-improving steps and keeps the best subset seen) over CFS's merit
    (Hall 1999): ``k r_cf / sqrt(k + k (k - 1) r_ff)``, correlations in absolute value."""

    def __init__(
        self, backward: bool = False, patience: int = 1, max_features: int = 0, cls: bool = True
    ) -> None:
        self.backward = backward
        self.patience = patience
        self.max_features = max_features
        self.cls = cls

    def fit(self, X: np.ndarray, y: np.ndarray) -> SubsetSearch:
        r_cf = _abs_correlations(X, y, self.cls)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_ff = np.nan_to_num(np.abs(np.corrcoef(X, rowvar=False)).reshape(X.shape[1], -1))
        n = X.shape[1]
        current = set(range(n)) if self.backward else set()
        best, best_merit, stale = set(current), _merit(current, r_cf, r_ff), 0
        limit = self.max_features or n
        while stale < self.patience:
            moves = [current - {j} for j in current] if self.backward else []
            if not self.backward and len(current) < limit:
                moves = [current | {j} for j in range(n) if j not in current]
            moves = [m for m in moves if m]
            if not moves:
                break
            current = max(moves, key=lambda s: (_merit(s, r_cf, r_ff), -min(s)))
            merit = _merit(current, r_cf, r_ff)
            if merit > best_merit:
                best, best_merit, stale = set(current), merit, 0
            else:
                stale += 1
        self.support_ = np.zeros(n, bool)
        self.support_[sorted(best) or [int(np.argmax(r_cf))]] = True
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return X[:, self.support_]


def _merit(subset: set[int], r_cf: np.ndarray, r_ff: np.ndarray) -> float:
    if not subset:
        return -np.inf
    index = sorted(subset)
    k = len(index)
    mean_cf = float(np.mean(r_cf[index]))
    block = r_ff[np.ix_(index, index)]
    mean_ff = float((block.sum() - np.trace(block)) / (k * (k - 1))) if k > 1 else 0.0
    return k * mean_cf / np.sqrt(k + k * (k - 1) * mean_ff)


def _abs_correlations(X: np.ndarray, y: np.ndarray, cls: bool) -> np.ndarray:
    targets = [(y == c).astype(float) for c in np.unique(y)] if cls else [y.astype(float)]
    Xc = X - X.mean(axis=0)
    norms = np.sqrt((Xc**2).sum(axis=0))
    out = np.zeros(X.shape[1])
    for t in targets:
        tc = t - t.mean()
        denominator = norms * np.sqrt((tc**2).sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.nan_to_num(np.abs(Xc.T @ tc) / denominator)
        out = np.maximum(out, r)
    return out


class HiddenLayer:
    """WEKA's hidden-layer wildcards: a = (attributes + classes) / 2, i = attributes,
    o = classes, t = attributes + classes."""

    def __init__(self, code: str) -> None:
        self.code = code

    def size(self, n_features: int, n_outputs: int) -> int:
        sizes = {
            "a": (n_features + n_outputs) // 2,
            "i": n_features,
            "o": n_outputs,
            "t": n_features + n_outputs,
        }
        return max(1, sizes[self.code])


class Delegating(BaseEstimator):
    """A wrapper that predicts with its fitted ``model_`` and carries its model's tags (so a
    wrapped regressor is a regressor to scikit-learn's stacking)."""

    model: Any

    def __sklearn_tags__(self) -> Any:
        return self.model.__sklearn_tags__()

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict_proba(X)


class WithHiddenLayer(Delegating):
    """An MLP whose one hidden layer's size is resolved from the data at fit time."""

    def __init__(self, model: Any, hidden: HiddenLayer) -> None:
        self.model = model
        self.hidden = hidden

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: Any = None) -> WithHiddenLayer:
        outputs = len(np.unique(y)) if isinstance(self.model, MLPClassifier) else 1
        size = self.hidden.size(X.shape[1], outputs)
        model = clone(self.model).set_params(hidden_layer_sizes=(size,))
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self


class WekaLog2Features:
    """WEKA's default number of random features, int(log2(M) + 1)."""

    def resolve(self, n_features: int) -> int:
        return int(np.log2(max(1, n_features)) + 1)


class ResolvedFeatures(Delegating):
    """A tree model whose ``max_features`` is resolved at fit time (capped at the columns)."""

    def __init__(self, model: Any, features: int | WekaLog2Features) -> None:
        self.model = model
        self.features = features

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: Any = None) -> ResolvedFeatures:
        n = X.shape[1]
        k = (
            self.features.resolve(n)
            if isinstance(self.features, WekaLog2Features)
            else self.features
        )
        model = clone(self.model).set_params(max_features=max(1, min(n, int(k))))
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self


class CappedNeighbours(Delegating):
    """k-NN with k capped at the training rows (WEKA's IBk does the same)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def fit(self, X: np.ndarray, y: np.ndarray) -> CappedNeighbours:
        k = min(self.model.n_neighbors, len(X))
        self.model_ = clone(self.model).set_params(n_neighbors=k).fit(X, y)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self
