"""The estimators of the Auto-WEKA CASH space (seed 004, Thornton 2014; spec C1's WEKA ->
scikit-learn mapping), built from a configuration of :func:`hpo.cash.space.build_cash_space`.

Registered as the learners ``autoweka_classification`` and ``autoweka_regression``: the
configuration's ``learner`` picks a base learner, a meta-method (its base learner in
``meta_base``) or an ensemble (``ens_size`` members in ``ens_base_1..5``), and ``fs_search`` an
optional feature selection (a search with an evaluator, spec B2.2). Every estimator is the same
fixed preprocessing followed by the optional selection and the model (spec C1, "Further notes"):

    median imputation -> min-max scaling to [0, 1] (clipped) -> [feature selection] -> model

Min-max scaling is WEKA's own default normalisation (SMO, MLP, ``N = 0``), and it keeps the
inputs non-negative, so Multinomial NB applies everywhere. The datasets reach the framework
numerically encoded, so the one-hot step of the spec has nothing to encode (docs/autoweka.md).
Each ``make_*`` function below maps one component's WEKA options to scikit-learn and says what
is approximate; small custom estimators (fidelity C) are the classes at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin, clone
from sklearn.decomposition import PCA
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import (
    AdaBoostClassifier,
    BaggingClassifier,
    BaggingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    StackingClassifier,
    StackingRegressor,
)
from sklearn.feature_selection import mutual_info_classif, mutual_info_regression
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, DotProduct
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    Perceptron,
    Ridge,
    SGDClassifier,
    SGDRegressor,
)
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier, OutputCodeClassifier
from sklearn.naive_bayes import CategoricalNB, GaussianNB, MultinomialNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, MinMaxScaler
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from hpo.learners.guard import FitGuard
from hpo.learners.registry import Value, register_learner

Params = Mapping[str, Value]
Builder = Callable[[Params, bool, int], Any]  # (parameters, is_classification, seed)
NONE = "none"


def _int(value: Value) -> int:
    return int(round(float(value)))


def _true(value: Value) -> bool:
    return str(value) == "true"


def component_parameters(config: Mapping[str, Value], prefix: str) -> dict[str, Value]:
    """The parameters ``<prefix>.<p>`` of ``config`` as ``{p: value}``."""
    start = prefix + "."
    return {k[len(start) :]: v for k, v in config.items() if k.startswith(start)}


# --- base learners (Table 3.1; spec C1) ---------------------------------------------------------


def make_naive_bayes(p: Params, cls: bool, seed: int) -> Any:
    if _true(p.get("D", "false")):  # supervised discretisation -> 10 equal-frequency bins
        bins = KBinsDiscretizer(n_bins=10, encode="ordinal", strategy="quantile")
        return make_pipeline(bins, CategoricalNB(min_categories=10))
    return GaussianNB()


def make_naive_bayes_multinomial(p: Params, cls: bool, seed: int) -> Any:
    return MultinomialNB()


def make_gaussian_process(p: Params, cls: bool, seed: int) -> Any:
    if p.get("K", "poly") == "rbf":  # WEKA: exp(-G |x - y|^2) -> length scale 1 / sqrt(2 G)
        kernel = RBF(length_scale=1.0 / np.sqrt(2 * float(p["G"])), length_scale_bounds="fixed")
    else:
        kernel = DotProduct(sigma_0=1.0, sigma_0_bounds="fixed") ** float(p.get("E", 1.0))
    return GaussianProcessRegressor(kernel=kernel, alpha=float(p["L"]), optimizer=None)


def make_linear_regression(p: Params, cls: bool, seed: int) -> Any:
    return Ridge(alpha=float(p["R"]))


def make_logistic(p: Params, cls: bool, seed: int) -> Any:
    return LogisticRegression(C=1.0 / float(p["R"]), max_iter=1000)


def make_perceptron(p: Params, cls: bool, seed: int) -> Any:
    hidden = _HiddenLayer(str(p["H"]))
    model = MLPClassifier if cls else MLPRegressor
    return _WithHiddenLayer(
        model(
            solver="sgd",
            learning_rate_init=float(p["L"]),
            momentum=float(p["M"]),
            learning_rate="invscaling" if _true(p["D"]) else "constant",
            max_iter=500,  # WEKA: N = 500 epochs
            random_state=seed,
        ),
        hidden,
    )


def make_sgd(p: Params, cls: bool, seed: int) -> Any:
    if cls:
        loss = {"hinge": "hinge", "log": "log_loss", "squared": "squared_error"}[str(p["F"])]
        return SGDClassifier(
            loss=loss,
            learning_rate="constant",
            eta0=float(p["L"]),
            alpha=float(p["R"]),
            random_state=seed,
        )
    loss = {"hinge": "epsilon_insensitive", "log": "huber", "squared": "squared_error"}[str(p["F"])]
    return SGDRegressor(
        loss=loss,
        learning_rate="constant",
        eta0=float(p["L"]),
        alpha=float(p["R"]),
        random_state=seed,
    )


def make_svm(p: Params, cls: bool, seed: int) -> Any:
    model = SVC if cls else SVR
    if p.get("K", "poly") == "rbf":
        return model(C=float(p["C"]), kernel="rbf", gamma=float(p["G"]))
    degree = max(1, _int(p.get("E", 1.0)))  # WEKA allows a real exponent; rounded
    coef0 = 1.0 if _true(p.get("L", "false")) else 0.0
    return model(C=float(p["C"]), kernel="poly", degree=degree, gamma=1.0, coef0=coef0)


def make_simple_linear_regression(p: Params, cls: bool, seed: int) -> Any:
    return SimpleLinearRegression()


def make_simple_logistic(p: Params, cls: bool, seed: int) -> Any:
    return LogisticRegression(penalty="l1", solver="saga", max_iter=1000, random_state=seed)


def make_voted_perceptron(p: Params, cls: bool, seed: int) -> Any:
    return Perceptron(max_iter=_int(p["I"]), tol=None, random_state=seed)


def make_knn(p: Params, cls: bool, seed: int) -> Any:
    model = KNeighborsClassifier if cls else KNeighborsRegressor
    weights = "distance" if _true(p.get("I", "false")) else "uniform"
    return _CappedNeighbours(model(n_neighbors=_int(p["K"]), weights=weights))


def make_one_r(p: Params, cls: bool, seed: int) -> Any:
    return OneR(min_bucket=_int(p["B"]))


def make_zero_r(p: Params, cls: bool, seed: int) -> Any:
    return DummyClassifier(strategy="most_frequent") if cls else DummyRegressor()


def make_decision_stump(p: Params, cls: bool, seed: int) -> Any:
    model = DecisionTreeClassifier if cls else DecisionTreeRegressor
    return model(max_depth=1, random_state=seed)


def make_j48(p: Params, cls: bool, seed: int) -> Any:
    alpha = 0.0 if _true(p.get("U", "false")) else 1e-3
    return DecisionTreeClassifier(
        criterion="entropy", min_samples_leaf=_int(p["M"]), ccp_alpha=alpha, random_state=seed
    )


def make_random_forest(p: Params, cls: bool, seed: int) -> Any:
    model = RandomForestClassifier if cls else RandomForestRegressor
    features = _int(p["K"]) if str(p.get("K_HIDDEN", "0")) == "1" else _WekaLog2Features()
    depth = _int(p["depth"]) if str(p.get("depth_HIDDEN", "0")) == "1" else None
    return _ResolvedFeatures(
        model(n_estimators=_int(p["I"]), max_depth=depth, random_state=seed, n_jobs=1), features
    )


def make_random_tree(p: Params, cls: bool, seed: int) -> Any:
    model = DecisionTreeClassifier if cls else DecisionTreeRegressor
    features = _int(p["K"]) if str(p.get("K_HIDDEN", "0")) == "1" else _WekaLog2Features()
    depth = _int(p["depth"]) if str(p.get("depth_HIDDEN", "0")) == "1" else None
    return _ResolvedFeatures(
        model(min_samples_leaf=_int(p["M"]), max_depth=depth, random_state=seed), features
    )


def make_rep_tree(p: Params, cls: bool, seed: int) -> Any:
    model = DecisionTreeClassifier if cls else DecisionTreeRegressor
    depth = _int(p["L"]) if str(p.get("L_HIDDEN", "0")) == "1" else None
    return model(
        min_samples_leaf=_int(p["M"]),
        max_depth=depth,
        min_impurity_decrease=float(p["V"]) * 0.01,  # [decision] WEKA's V is a variance share
        random_state=seed,
    )


# --- meta-methods (one base learner) and ensembles (up to five) ----------------------------------


def make_adaboost(p: Params, base: Any, cls: bool, seed: int) -> Any:
    return AdaBoostClassifier(estimator=base, n_estimators=_int(p["I"]), random_state=seed)


def make_additive_regression(p: Params, base: Any, cls: bool, seed: int) -> Any:
    shrinkage = float(p["S"]) if str(p.get("S_HIDDEN", "0")) == "1" else 1.0
    return AdditiveRegression(base, n_iterations=_int(p["I"]), shrinkage=shrinkage)


def make_bagging(p: Params, base: Any, cls: bool, seed: int) -> Any:
    model = BaggingClassifier if cls else BaggingRegressor
    share = min(int(p["P"]), 100) / 100  # WEKA allows > 100 %; scikit-learn does not
    return model(estimator=base, n_estimators=_int(p["I"]), max_samples=share, random_state=seed)


def make_multiclass(p: Params, base: Any, cls: bool, seed: int) -> Any:
    method = str(p["M"])
    if method == "one_vs_one":
        return OneVsOneClassifier(base)
    if method == "random_code":
        return OutputCodeClassifier(base, code_size=float(p["R"]), random_state=seed)
    return OneVsRestClassifier(base)


def make_random_committee(p: Params, base: Any, cls: bool, seed: int) -> Any:
    model = BaggingClassifier if cls else BaggingRegressor  # all rows, different seeds
    return model(
        estimator=base,
        n_estimators=_int(p["I"]),
        bootstrap=False,
        max_samples=1.0,
        random_state=seed,
    )


def make_random_subspace(p: Params, base: Any, cls: bool, seed: int) -> Any:
    model = BaggingClassifier if cls else BaggingRegressor
    return model(
        estimator=base,
        n_estimators=_int(p["I"]),
        bootstrap=False,
        max_samples=1.0,
        max_features=float(p["P"]),
        random_state=seed,
    )


def make_vote(p: Params, members: list[Any], cls: bool, seed: int) -> Any:
    return Vote(members, rule=str(p["R"]))


def make_stacking(p: Params, members: list[Any], cls: bool, seed: int) -> Any:
    named = [(f"m{i}", m) for i, m in enumerate(members)]
    return StackingClassifier(named, cv=10) if cls else StackingRegressor(named, cv=10)


BASE: dict[str, Builder] = {
    "naive_bayes": make_naive_bayes,
    "naive_bayes_multinomial": make_naive_bayes_multinomial,
    "gaussian_process": make_gaussian_process,
    "linear_regression": make_linear_regression,
    "logistic": make_logistic,
    "perceptron": make_perceptron,
    "sgd": make_sgd,
    "svm": make_svm,
    "simple_linear_regression": make_simple_linear_regression,
    "simple_logistic": make_simple_logistic,
    "voted_perceptron": make_voted_perceptron,
    "knn": make_knn,
    "one_r": make_one_r,
    "zero_r": make_zero_r,
    "decision_stump": make_decision_stump,
    "j48": make_j48,
    "random_forest": make_random_forest,
    "random_tree": make_random_tree,
    "rep_tree": make_rep_tree,
}
META = {
    "adaboost": make_adaboost,
    "additive_regression": make_additive_regression,
    "bagging": make_bagging,
    "multiclass": make_multiclass,
    "random_committee": make_random_committee,
    "random_subspace": make_random_subspace,
}
ENSEMBLE = {"vote": make_vote, "stacking": make_stacking}


# --- feature selection (Table 3.2) -----------------------------------------------------------


def make_selector(config: Mapping[str, Value], cls: bool, seed: int) -> Any | None:
    """The feature-selection step of ``config`` (``None`` for ``fs_search = none``)."""
    search = str(config.get("fs_search", NONE))
    if search == NONE:
        return None
    sp = component_parameters(config, f"fs_search.{search}")
    if search == "ranker":
        evaluator = str(config["fs_eval_single"])
        ep = component_parameters(config, f"fs_eval.{evaluator}")
        if evaluator == "principal_components":
            return PCA(
                n_components=float(ep["R"]) if float(ep["R"]) < 1 else None, svd_solver="full"
            )
        return Ranker(evaluator, threshold=float(sp["T"]) / 10, classification=cls, seed=seed)
    if search == "greedy_stepwise":
        backward = _true(sp.get("B", "false"))
        return SubsetSearch(backward=backward, patience=1, max_features=_int(sp["N"]), cls=cls)
    if search == "best_first":
        direction = str(sp.get("D", "forward"))
        return SubsetSearch(backward=direction == "backward", patience=int(sp["N"]), cls=cls)
    raise ValueError(
        f"unknown fs_search {search!r}; valid: none, ranker, greedy_stepwise, best_first"
    )


# --- the whole estimator --------------------------------------------------------------------------


def build_model(config: Mapping[str, Value], cls: bool, seed: int) -> Any:
    """The model (without preprocessing) of a CASH configuration."""
    learner = str(config["learner"])
    if learner in BASE:
        return BASE[learner](component_parameters(config, f"base.{learner}"), cls, seed)
    if learner in META:
        base = _slot(config, "meta_base", cls, seed)
        return META[learner](component_parameters(config, f"meta.{learner}"), base, cls, seed)
    if learner in ENSEMBLE:
        size = int(config["ens_size"])
        members = [_slot(config, f"ens_base_{i}", cls, seed + i) for i in range(1, size + 1)]
        params = component_parameters(config, f"ens.{learner}")
        return ENSEMBLE[learner](params, members, cls, seed)
    valid = ", ".join([*BASE, *META, *ENSEMBLE])
    raise ValueError(f"unknown Auto-WEKA learner {learner!r}; valid choices: {valid}")


def _slot(config: Mapping[str, Value], slot: str, cls: bool, seed: int) -> Any:
    base = str(config[slot])
    return BASE[base](component_parameters(config, f"{slot}.{base}"), cls, seed)


def build_estimator(config: Mapping[str, Value], cls: bool, seed: int) -> Pipeline:
    """The fixed preprocessing, the optional feature selection and the model (module docstring)."""
    steps: list[tuple[str, Any]] = [
        ("impute", SimpleImputer(strategy="median", keep_empty_features=True)),
        ("scale", MinMaxScaler(clip=True)),
    ]
    selector = make_selector(config, cls, seed)
    if selector is not None:
        steps.append(("select", selector))
    steps.append(("model", build_model(config, cls, seed)))
    return Pipeline(steps)


@register_learner("autoweka_classification")
def autoweka_classification(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> Pipeline:
    """Seed 004's classification CASH space (``conf/autoweka/components.yaml``)."""
    return build_estimator(config, True, seed)


@register_learner("autoweka_regression", task="regression")
def autoweka_regression(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> Pipeline:
    """Seed 004's regression CASH space (``conf/autoweka/components.yaml``)."""
    return build_estimator(config, False, seed)


# --- small custom estimators (spec C1 fidelity C) and adapters ----------------------------------


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


class _HiddenLayer:
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


class _Delegating(BaseEstimator):
    """A wrapper that predicts with its fitted ``model_`` and carries its model's tags (so a
    wrapped regressor is a regressor to scikit-learn's stacking)."""

    model: Any

    def __sklearn_tags__(self) -> Any:
        return self.model.__sklearn_tags__()

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict_proba(X)


class _WithHiddenLayer(_Delegating):
    """An MLP whose one hidden layer's size is resolved from the data at fit time."""

    def __init__(self, model: Any, hidden: _HiddenLayer) -> None:
        self.model = model
        self.hidden = hidden

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: Any = None) -> _WithHiddenLayer:
        outputs = len(np.unique(y)) if isinstance(self.model, MLPClassifier) else 1
        size = self.hidden.size(X.shape[1], outputs)
        model = clone(self.model).set_params(hidden_layer_sizes=(size,))
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self


class _WekaLog2Features:
    """WEKA's default number of random features, int(log2(M) + 1)."""

    def resolve(self, n_features: int) -> int:
        return int(np.log2(max(1, n_features)) + 1)


class _ResolvedFeatures(_Delegating):
    """A tree model whose ``max_features`` is resolved at fit time (capped at the columns)."""

    def __init__(self, model: Any, features: int | _WekaLog2Features) -> None:
        self.model = model
        self.features = features

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: Any = None) -> _ResolvedFeatures:
        n = X.shape[1]
        k = (
            self.features.resolve(n)
            if isinstance(self.features, _WekaLog2Features)
            else self.features
        )
        model = clone(self.model).set_params(max_features=max(1, min(n, int(k))))
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self


class _CappedNeighbours(_Delegating):
    """k-NN with k capped at the training rows (WEKA's IBk does the same)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def fit(self, X: np.ndarray, y: np.ndarray) -> _CappedNeighbours:
        k = min(self.model.n_neighbors, len(X))
        self.model_ = clone(self.model).set_params(n_neighbors=k).fit(X, y)
        self.classes_ = getattr(self.model_, "classes_", None)
        return self
