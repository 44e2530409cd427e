"""Seed 004's CASH space (Thornton 2014, Ch. 3, Fig. 3.1) built from conf/autoweka/components.yaml,
and the scikit-learn estimators its configurations name (spec C1)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_wine

from experiments.configuration.spaces import load_cash_library
from hpo.cash.space import ComponentLibrary, build_cash_space, space_size_log10
from hpo.learners import FitGuard, fit_and_predict
from hpo.learners.autoweka import build_estimator
from hpo.learners.weka_estimators import OneR, SimpleLinearRegression, SubsetSearch, _merit
from hpo.space.search_space import SpaceError


@pytest.fixture(scope="module")
def library():
    return load_cash_library()


def _n_params(components):
    return sum(len(c.parameters) for c in components)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_the_hyperparameter_count_follows_fig_3_1(library, task):
    cash = build_cash_space(library, task, nonnegative_inputs=True)
    base = [library["base"][n] for n in cash.base]
    meta = [library["meta"][n] for n in cash.meta]
    ens = [library["ensemble"][n] for n in cash.ensemble]
    searches = [library["search"][n] for n in cash.searches]
    evaluators = [c for c in library["evaluator"].values() if task in c.tasks]
    kinds = {c.kind for c in evaluators}
    expected = (
        1  # learner
        + _n_params(base)  # the base learners' own subtrees
        + _n_params(meta)
        + 1
        + _n_params(base)  # meta-methods, meta_base and its subtree
        + _n_params(ens)
        + 1
        + 5 * (1 + _n_params(base))  # ens_size, five full slots
        + 1
        + _n_params(searches)
        + len(kinds)
        + _n_params(evaluators)  # feature selection
    )
    assert cash.n_hyperparameters == expected
    assert "786" in cash.summary() or "472" in cash.summary()


def test_log10_size_counts_the_tree_as_the_seed_does():
    tiny = ComponentLibrary(
        {
            "base": {
                "a": {
                    "parameters": {
                        "x": {"type": "categorical", "choices": ["0", "1"], "default": "0"}
                    }
                },
                "b": {"parameters": {}},
            },
            "ensemble": {"e": {"parameters": {}}},
        }
    )
    cash = build_cash_space(tiny, "classification", max_ensemble=2)
    # learner a: 2; b: 1; e with one member: 2 + 1 = 3, with two: 3 x 3 = 9 -> 2 + 1 + 12 = 15
    assert space_size_log10(cash.space) == pytest.approx(math.log10(15))
    real = ComponentLibrary(
        {"base": {"a": {"parameters": {"r": {"type": "real", "low": 0, "high": 1, "default": 0}}}}}
    )
    assert space_size_log10(build_cash_space(real, "regression").space) == pytest.approx(1.0)


def test_learners_that_cannot_apply_are_filtered(library):
    regression = build_cash_space(library, "regression", nonnegative_inputs=True)
    assert "j48" not in regression.base and "adaboost" not in regression.meta
    assert "gaussian_process" in regression.base
    signed = build_cash_space(library, "classification", nonnegative_inputs=False)
    assert "naive_bayes_multinomial" not in signed.base
    assert "naive_bayes_multinomial (negative inputs)" in signed.filtered
    only = build_cash_space(library, "classification", include=["knn", "bagging"])
    assert only.learners == ("knn", "bagging")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"include": ["m5p"]}, "unknown learner 'm5p'; valid choices: naive_bayes"),
        ({"max_ensemble": 6}, "max_ensemble must be in 1..5"),
        ({"task": "ranking"}, "unknown task 'ranking'"),
    ],
)
def test_bad_space_settings_are_refused(library, kwargs, message):
    kwargs = {"task": "classification", **kwargs}
    task = kwargs.pop("task")
    with pytest.raises(SpaceError, match=message):
        build_cash_space(library, task, **kwargs)


def test_ensemble_slots_are_active_up_to_the_ensemble_size(library):
    space = build_cash_space(library, "classification", nonnegative_inputs=True).space
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(400):
        config = space.sample(rng)
        if config["learner"] not in ("vote", "stacking"):
            assert "ens_size" not in config
            continue
        seen += 1
        size = int(config["ens_size"])
        for i in range(1, 6):
            assert (f"ens_base_{i}" in config) == (i <= size)
            slot = config.get(f"ens_base_{i}")
            own = [k for k in config if k.startswith(f"ens_base_{i}.")]
            assert all(k.startswith(f"ens_base_{i}.{slot}.") for k in own)
    assert seen > 10


def _shuffled(loader):
    X, y = loader(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    return X[order], y[order]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_every_learner_at_its_defaults_fits_and_beats_zero_r_or_matches_it(library, task):
    X, y = _shuffled(load_wine if task == "classification" else load_diabetes)
    cash = build_cash_space(library, task, nonnegative_inputs=True)
    cut = 2 * len(y) // 3
    errors = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for learner in cash.learners:
            outcome = fit_and_predict(
                f"autoweka_{task}",
                cash.default_config(learner),
                FitGuard(),
                X[:cut],
                y[:cut],
                [(X[cut:], y[cut:])],
                0,
            )
            assert outcome.failure is None, (learner, outcome.failure)
            errors[learner] = outcome.errors[0]
    assert min(errors.values()) < errors["zero_r"]


def test_a_configuration_builds_the_components_it_names(library):
    config = {
        "learner": "bagging",
        "meta.bagging.P": 150,
        "meta.bagging.I": 7.4,
        "meta_base": "knn",
        "meta_base.knn.K": 3.2,
        "meta_base.knn.I": "true",
        "fs_search": "ranker",
        "fs_search.ranker.T": 5.0,
        "fs_eval_single": "pearson",
    }
    pipeline = build_estimator(config, True, seed=1)
    assert [name for name, _ in pipeline.steps] == ["impute", "scale", "select", "model"]
    bagging = pipeline.named_steps["model"]
    assert bagging.n_estimators == 7 and bagging.max_samples == 1.0  # 150 % capped at 100 %
    knn = bagging.estimator.model
    assert knn.n_neighbors == 3 and knn.weights == "distance"
    assert pipeline.named_steps["select"].threshold == 0.5


def test_cfs_merit_and_greedy_forward_search_by_hand():
    r_cf = np.array([0.8, 0.7, 0.1])
    r_ff = np.array([[1, 0.9, 0.0], [0.9, 1, 0.0], [0.0, 0.0, 1]])
    # {0, 2}: 2 * 0.45 / sqrt(2 + 2 * 0) = 0.6364; {0, 1}: 2 * 0.75 / sqrt(2 + 2 * 0.9) = 0.7695
    assert _merit({0, 2}, r_cf, r_ff) == pytest.approx(0.9 / math.sqrt(2))
    assert _merit({0, 1}, r_cf, r_ff) == pytest.approx(1.5 / math.sqrt(3.8))
    rng = np.random.default_rng(0)
    signal = rng.normal(size=300)
    X = np.column_stack([signal + 0.1 * rng.normal(size=300), rng.normal(size=(300, 3))])
    y = (signal > 0).astype(int)
    search = SubsetSearch(cls=True).fit(X, y)
    assert search.support_.tolist() == [True, False, False, False]


def test_simple_linear_regression_and_one_r_use_the_best_single_attribute():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = 3 * X[:, 2] + 0.01 * rng.normal(size=200)
    assert SimpleLinearRegression().fit(X, y).feature_ == 2
    labels = (X[:, 1] > 0.3).astype(int)
    one_r = OneR(min_bucket=6).fit(X, labels)
    assert one_r.feature_ == 1 and np.mean(one_r.predict(X) == labels) == 1.0


def test_a_default_configuration_holds_the_children_its_parents_defaults_activate(library):
    """Ex-Def (seed §4.1) is each learner at its WEKA defaults: a conditional parameter is in it
    only when its parent's default activates it (the Gaussian process's kernel defaults to
    poly: its exponent E is set, the RBF width G is not)."""
    config = build_cash_space(library, "regression").default_config("gaussian_process")
    assert config["base.gaussian_process.K"] == "poly"
    assert config["base.gaussian_process.E"] == 1.0
    assert "base.gaussian_process.G" not in config


def test_only_the_parameters_marked_round_are_rounded(library):
    """A real parameter with ``round: true`` is an integer on a log scale (the random forest's
    tree count I and feature count K); the others stay real or are integers already."""
    assert library.component("random_forest").rounded == ("I", "K")


def test_ex_def_gives_a_meta_method_its_weka_default_base_learner(library):
    """Ex-Def (seed §4.1): a meta-method runs with WEKA's own default base learner
    (``default_base``: Bagging's is REPTree, AdaBoost's DecisionStump), not the list's first."""
    space = build_cash_space(library, "classification")
    assert space.base[0] not in ("rep_tree", "decision_stump")  # the fallback would differ
    assert space.default_config("bagging")["meta_base"] == "rep_tree"
    assert space.default_config("adaboost")["meta_base"] == "decision_stump"
    assert space.default_config("vote")["ens_base_1"] == library.component("vote").default_base


def test_each_component_keeps_its_group_and_weka_class_from_the_library_file(library):
    """Every component knows the group it is declared under and the WEKA class it stands for
    (``weka``; empty when the file names none)."""
    for group in ("base", "meta", "ensemble"):
        for name, component in library[group].items():
            assert component.group == group and component.name == name
    assert library.component("adaboost").weka == "meta.AdaBoostM1"
    assert ComponentLibrary({"base": {"zero_r": {}}})["base"]["zero_r"].weka == ""
