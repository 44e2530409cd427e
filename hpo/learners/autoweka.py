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
is approximate; small custom estimators (fidelity C) and adapters are
:mod:`hpo.learners.weka_estimators`'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
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
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, DotProduct
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (
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
from hpo.learners.weka_estimators import (
    AdditiveRegression,
    CappedNeighbours,
    HiddenLayer,
    OneR,
    Ranker,
    ResolvedFeatures,
    SimpleLinearRegression,
    SubsetSearch,
    Vote,
    WekaLog2Features,
    WithHiddenLayer,
)

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
    hidden = HiddenLayer(str(p["H"]))
    model = MLPClassifier if cls else MLPRegressor
    return WithHiddenLayer(
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
    return CappedNeighbours(model(n_neighbors=_int(p["K"]), weights=weights))


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
    features = _int(p["K"]) if str(p.get("K_HIDDEN", "0")) == "1" else WekaLog2Features()
    depth = _int(p["depth"]) if str(p.get("depth_HIDDEN", "0")) == "1" else None
    return ResolvedFeatures(
        model(n_estimators=_int(p["I"]), max_depth=depth, random_state=seed, n_jobs=1), features
    )


def make_random_tree(p: Params, cls: bool, seed: int) -> Any:
    model = DecisionTreeClassifier if cls else DecisionTreeRegressor
    features = _int(p["K"]) if str(p.get("K_HIDDEN", "0")) == "1" else WekaLog2Features()
    depth = _int(p["depth"]) if str(p.get("depth_HIDDEN", "0")) == "1" else None
    return ResolvedFeatures(
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
