"""Learners: the BLAS prediction and precomputed-kernel paths agree with libsvm; the fit guard;
every registered learner fits its space; failures are recorded, never raised."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.svm import SVC

from experiments.configuration.spaces import load_prior_space, load_space
from hpo.learners import (
    FAILED_LABEL,
    FitGuard,
    SquaredDistanceCache,
    fit_and_predict,
    learner_names,
    learner_parameters,
    make_estimator,
    rbf_svc_predict,
    registry,
    squared_distances,
)
from hpo.space.search_space import Categorical


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("log_gamma", [-3, -1, 0, 1])
def test_rbf_prediction_matches_libsvm(n_classes: int, log_gamma: int) -> None:
    rng = np.random.default_rng(n_classes * 10 + log_gamma)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int) + rng.integers(
        0, n_classes - 1, size=400
    )
    y = y % n_classes
    X_new = rng.normal(size=(3000, 6))
    for C in (0.1, 10.0, 1e3):
        model = SVC(C=C, gamma=10.0**log_gamma).fit(X, y)
        np.testing.assert_array_equal(
            rbf_svc_predict(model, X_new, chunk_rows=700), model.predict(X_new)
        )


def test_labels_need_not_start_at_zero() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 1] > 0, 7, 3)
    model = SVC(gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(rbf_svc_predict(model, X), model.predict(X))


def test_single_class_training_predicts_that_class() -> None:
    X = np.zeros((5, 2))
    outcome = fit_and_predict(
        "svm_rbf",
        {"C": 1.0, "gamma": 1.0},
        FitGuard(),
        X,
        np.full(5, 2),
        [(X, np.array([2, 2, 1, 2, 2]))],
    )
    assert outcome.errors == (0.2,) and not outcome.hit_limit


def _classification(seed: int, n: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.digitize(X[:, 0] + 0.7 * rng.normal(size=n), np.linspace(-1, 1, n_classes - 1))
    return X, y


def test_squared_distances_match_direct_differences() -> None:
    X = np.random.default_rng(0).normal(size=(300, 7)) * 3.0
    direct = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    ours = squared_distances(X)
    np.testing.assert_allclose(ours, direct, atol=1e-12 * direct.max())
    assert (np.diag(ours) == 0.0).all() and (ours >= 0.0).all()


@pytest.mark.parametrize("n_classes", [2, 4])
def test_precomputed_kernel_fits_the_same_model_as_libsvm(n_classes: int) -> None:
    X, y = _classification(n_classes, 600, n_classes)
    train, valid = np.arange(400), np.arange(400, 600)
    cache = SquaredDistanceCache(X, budget_mb=64)
    for C, gamma in [(0.01, 0.1), (1.0, 0.5), (100.0, 0.02), (1e4, 3.0), (3.0, 1e-4)]:
        config = {"C": C, "gamma": gamma}
        sets = [(X[valid], y[valid]), (X[train], y[train])]
        reference = fit_and_predict("svm_rbf", config, FitGuard(), X[train], y[train], sets)
        gram = cache.gram("fold", train, gamma)
        ours = fit_and_predict(
            "svm_rbf", config, FitGuard(), X[train], y[train], sets, train_gram=gram
        )
        assert ours.errors == reference.errors, config
        assert ours.hit_limit == reference.hit_limit


def test_distance_cache_keeps_within_budget_and_checks_rows() -> None:
    X = np.random.default_rng(2).normal(size=(100, 3))
    one_matrix_mb = 60**2 * 8 / 2**20
    cache = SquaredDistanceCache(X, budget_mb=2.5 * one_matrix_mb)
    rows = [np.arange(k, k + 60) for k in range(3)]
    for key, r in enumerate(rows):
        np.testing.assert_allclose(cache.gram(key, r, 0.5), np.exp(-0.5 * squared_distances(X[r])))
    assert list(cache._entries) == [1, 2]  # the least recently used entry was dropped
    with pytest.raises(ValueError, match="reused for different rows"):
        cache.gram(1, rows[0], 0.5)
    assert cache.gram("big", np.arange(100), 0.5) is None  # over budget: libsvm's own kernel


def test_distance_cache_budget_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="distance_cache_mb"):
        FitGuard(distance_cache_mb=-1)


def test_iteration_limit_is_the_smaller_of_iterations_and_work_per_row() -> None:
    guard = FitGuard(max_iter=10**6, max_work=5e8)
    assert guard.iteration_limit(100) == 10**6
    assert guard.iteration_limit(2500) == 200_000
    assert guard.iteration_limit(10**9) == 1
    assert FitGuard(max_work=None).iteration_limit(10**5) == 10**6
    assert guard.for_retraining().iteration_limit(5000) == 10**6
    with pytest.raises(ValueError, match="max_work"):
        FitGuard(max_work=0)


# --- The registry: every learner of every space ----------------------------------------------

SPACE_OF = {
    "svm_rbf": "svm_rbf",
    "random_forest": "random_forest",
    "svm": "svm_kernels",
    "forest": "esmbo_rf",  # the ESMBO paper's classification spaces (UAI 2014)
    "gradient_boosting": "esmbo_gbc",
    "mlp": "esmbo_mlp",
    "ffnn": "ffnn_mrbi",  # seed 002's network (tests/test_ffnn.py tests it further)
}
# regression learners (tests/test_esmbo_spaces.py fits them on a regression set)
REGRESSION_SPACE_OF = {
    "svr": "esmbo_svr",
    "forest_regressor": "esmbo_rf_regression",
    "gradient_boosting_regressor": "esmbo_gbr",
}
# seed 004's CASH learners: their spaces are built from conf/autoweka (tests/test_cash_space.py)
AUTOWEKA_TASK_OF = {
    "autoweka_classification": "classification",
    "autoweka_regression": "regression",
}
REGRESSION_SPACE_OF_ALL = {*REGRESSION_SPACE_OF, "autoweka_regression"}
CLASSIFIERS = tuple(n for n in learner_names() if n not in REGRESSION_SPACE_OF_ALL)
STOCHASTIC = ("random_forest", "decision_tree", "adaboost", "linear_svm")
GUARD = FitGuard(max_work=2e7)


@pytest.fixture(scope="module")
def wine() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's bundled wine data, standardised (as Chapter 5 does), split 120 / 58."""
    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:120], order[120:]
    return X[train], y[train], X[test], y[test]


def _configs(learner: str, n: int, seed: int = 0) -> list[dict]:
    """``n`` configurations of ``learner`` sampled from its space (its branch of Table 5.1's)."""
    rng = np.random.default_rng(seed)
    if learner in SPACE_OF:
        space = load_space(SPACE_OF[learner])
        return [space.sample(rng) for _ in range(n)]
    if learner in AUTOWEKA_TASK_OF:
        from experiments.configuration.spaces import load_cash_library
        from hpo.cash.space import build_cash_space

        cash = build_cash_space(load_cash_library(), AUTOWEKA_TASK_OF[learner], True)
        return [cash.space.sample(rng) for _ in range(n)]
    space = load_space("sklearn_cash")
    choice = space.parameters[0]
    assert isinstance(choice, Categorical)
    if learner not in choice.choices:  # seed 003's learners: their branch of its tree, priors
        tree = load_prior_space("seed003")
        drawn = [tree.learner_config(c) for c in tree.sample_batch(rng, 60 * n)]
        return [c for c in drawn if c["classifier"] == learner][:n]
    u = rng.uniform(size=(n, space.dim))
    u[:, 0] = (choice.choices.index(learner) + 0.5) / len(choice.choices)
    return [space.decode(point) for point in u]


def test_every_learner_has_a_space() -> None:
    cash = load_space("sklearn_cash").parameters[0]
    seed003 = load_space("seed003").parameters[0]  # seed 003's 17 (tests/test_appendix_a_learners)
    assert isinstance(cash, Categorical) and isinstance(seed003, Categorical)
    spaces = set(SPACE_OF) | set(cash.choices) | set(REGRESSION_SPACE_OF) | set(seed003.choices)
    # estimators named by dotted path (learner._target_=...) register when a run composes, so
    # other tests in this process may have added some: the built-in learners are the rest
    built_in = {name for name in learner_names() if "." not in name}
    assert built_in == spaces | set(AUTOWEKA_TASK_OF)


@pytest.mark.parametrize("learner", CLASSIFIERS)
def test_every_learner_fits_and_predicts_sampled_configurations(learner: str, wine) -> None:
    X, y, X_test, y_test = wine
    successes = 0
    for config in _configs(learner, 4):
        outcome = fit_and_predict(learner, config, GUARD, X, y, [(X_test, y_test), (X, y)], seed=3)
        for predictions, (_, labels), error in zip(
            outcome.predictions, [(X_test, y_test), (X, y)], outcome.errors, strict=True
        ):
            assert predictions.shape == labels.shape
            assert set(np.unique(predictions)) <= {FAILED_LABEL, 0, 1, 2}
            assert error == float(np.mean(predictions != labels))
        failed = outcome.failure is not None or outcome.hit_limit
        if outcome.failure is not None:
            assert all((p == FAILED_LABEL).all() for p in outcome.predictions)
        successes += not failed
    assert successes >= 1, learner


@pytest.mark.parametrize("learner", STOCHASTIC)
def test_stochastic_learners_take_the_seed(learner: str, wine) -> None:
    X, y, X_test, y_test = wine
    config = _configs(learner, 1, seed=1)[0]
    assert make_estimator(learner, config, GUARD, seed=17, n_train=len(y)).random_state == 17
    runs = [
        fit_and_predict(learner, config, GUARD, X, y, [(X_test, y_test)], seed=s) for s in (5, 5)
    ]
    np.testing.assert_array_equal(runs[0].predictions[0], runs[1].predictions[0])


def test_random_forests_differ_across_seeds(wine) -> None:
    X, y, X_test, y_test = wine
    config = {"n_estimators": 3, "max_depth": 3, "min_samples_split": 2, "min_samples_leaf": 2}
    sets = [(X_test, y_test), (X, y)]
    first = fit_and_predict("random_forest", config, GUARD, X, y, sets, seed=0)
    assert any(
        not np.array_equal(first.predictions[1], other.predictions[1])
        for other in (fit_and_predict("random_forest", config, GUARD, X, y, sets, seed=s)
                      for s in (1, 2, 3))
    )  # fmt: skip


@pytest.mark.parametrize(("learner", "config"), [
    ("svm_rbf", {"C": 1e5, "gamma": 1.0}),
    ("svm", {"kernel": "poly", "C": 1e5, "degree": 3, "coef0": 10.0}),
    ("linear_svm", {"C": 1e5}),
])  # fmt: skip
def test_libsvm_and_liblinear_learners_run_under_the_iteration_limit(learner, config, wine) -> None:
    X, y, X_test, y_test = wine
    guard = FitGuard(max_iter=2, max_work=None)
    assert make_estimator(learner, config, guard, n_train=len(y)).max_iter == 2
    outcome = fit_and_predict(learner, config, guard, X, y, [(X_test, y_test), (X[:0], y[:0])])
    assert outcome.hit_limit and outcome.failure is None
    assert (outcome.predictions[0] == FAILED_LABEL).all() and outcome.errors[0] == 1.0
    assert outcome.predictions[1].shape == (0,) and np.isnan(outcome.errors[1])


def test_svm_rbf_errors_equal_a_direct_scikit_learn_fit(wine) -> None:
    X, y, X_test, y_test = wine
    for config in _configs("svm_rbf", 10, seed=4) + [{"C": 10.0, "gamma": 0.05}]:
        direct = SVC(C=config["C"], gamma=config["gamma"]).fit(X, y)
        outcome = fit_and_predict("svm_rbf", config, FitGuard(), X, y, [(X_test, y_test)])
        assert outcome.errors[0] == float(np.mean(direct.predict(X_test) != y_test)), config


def test_sklearn_space_parameters_reach_their_learner_without_prefix(wine) -> None:
    config = {"classifier": "svm_rbf", "svm_rbf__C": 3.0, "svm_rbf__gamma": 0.1, "knn__n": 2}
    assert learner_parameters("svm_rbf", config) == {
        "classifier": "svm_rbf",
        "C": 3.0,
        "gamma": 0.1,
    }
    model = make_estimator("svm_rbf", config, FitGuard())
    assert (model.C, model.gamma) == (3.0, 0.1)
    X, y, X_test, y_test = wine
    cache = SquaredDistanceCache(X, budget_mb=8)
    gram = cache.gram("all", np.arange(len(y)), 0.1)
    with_gram = fit_and_predict(
        "svm_rbf", config, FitGuard(), X, y, [(X_test, y_test)], train_gram=gram
    )
    plain = fit_and_predict(
        "svm_rbf", {"C": 3.0, "gamma": 0.1}, FitGuard(), X, y, [(X_test, y_test)]
    )
    np.testing.assert_array_equal(with_gram.predictions[0], plain.predictions[0])


def test_unknown_learner_is_one_line_naming_the_choices() -> None:
    message = r"unknown learner 'svn' \(did you mean 'svr'\?\); valid choices: svr, svm, adaboost"
    with pytest.raises(ValueError, match=message) as e:  # the registries' one line
        make_estimator("svn", {}, FitGuard())
    with pytest.raises(ValueError, match="unknown learner 'svn'"):
        fit_and_predict("svn", {}, FitGuard(), np.zeros((4, 1)), np.arange(4) % 2, [])
    assert "\n" not in str(e.value) and "svm_rbf" in str(e.value)


# --- Failures are results: FAILED_LABEL predictions, error 1.0, the exception in one line -----


def _assert_failed(outcome, fragment: str) -> None:
    assert outcome.failure is not None and fragment in outcome.failure, outcome.failure
    assert "\n" not in outcome.failure
    assert all((p == FAILED_LABEL).all() for p in outcome.predictions)
    assert outcome.errors == tuple(1.0 for _ in outcome.errors)


def test_qda_on_collinear_columns_is_a_recorded_failure(wine) -> None:
    X, y, X_test, y_test = wine
    collinear = np.c_[X, X[:, 0] + X[:, 1]]
    outcome = fit_and_predict(
        "qda", {"reg_param": 0.0}, GUARD, collinear, y, [(np.c_[X_test, X_test[:, 0]], y_test)]
    )
    _assert_failed(outcome, "LinAlgError: The covariance matrix of class 0 is not full rank")


def test_qda_reg_param_above_one_is_given_as_one(wine) -> None:
    X, y, X_test, y_test = wine
    above = fit_and_predict("qda", {"reg_param": 1e3}, GUARD, X, y, [(X_test, y_test)])
    one = fit_and_predict("qda", {"reg_param": 1.0}, GUARD, X, y, [(X_test, y_test)])
    assert above.failure is None
    np.testing.assert_array_equal(above.predictions[0], one.predictions[0])


def test_qda_with_a_one_row_class_is_a_recorded_failure(wine) -> None:
    X, y, X_test, y_test = wine
    y_odd = y.copy()
    y_odd[0] = 3
    outcome = fit_and_predict("qda", {"reg_param": 0.1}, GUARD, X, y_odd, [(X_test, y_test)])
    _assert_failed(outcome, "ValueError: y has only 1 sample in class 3")


def test_a_tree_on_one_class_predicts_that_class(wine) -> None:
    X, _, X_test, y_test = wine
    config = {"max_depth": 3, "min_samples_split": 2, "min_samples_leaf": 2}
    outcome = fit_and_predict(
        "decision_tree", config, GUARD, X, np.full(len(X), 1), [(X_test, y_test)]
    )
    assert outcome.failure is None and (outcome.predictions[0] == 1).all()


def test_knn_with_more_neighbours_than_rows_is_a_recorded_failure(wine) -> None:
    X, y, X_test, y_test = wine
    outcome = fit_and_predict("knn", {"n_neighbors": 30}, GUARD, X[:20], y[:20], [(X_test, y_test)])
    _assert_failed(outcome, "ValueError: Expected n_neighbors <= n_samples_fit")


def test_an_exception_in_fit_or_predict_is_a_recorded_failure(monkeypatch, wine) -> None:
    X, y, X_test, y_test = wine

    class Broken:
        def __init__(self, where: str) -> None:
            self.where = where

        def fit(self, X, y):
            if self.where == "fit":
                raise RuntimeError("cannot\nfit")
            return self

        def predict(self, X):
            raise ArithmeticError("cannot predict")

    for where, message in (
        ("fit", "RuntimeError: cannot fit"),
        ("predict", "ArithmeticError: cannot predict"),
    ):
        broken = registry.Learner(lambda c, g, s, n, w=where: Broken(w))
        monkeypatch.setitem(registry.LEARNERS, "broken", broken)
        sets = [(X_test, y_test), (X[:0], y[:0])]
        outcome = fit_and_predict("broken", {}, GUARD, X, y, sets)
        assert outcome.failure == message and outcome.predictions[1].shape == (0,)
        assert (outcome.predictions[0] == FAILED_LABEL).all() and outcome.errors[0] == 1.0
        assert np.isnan(outcome.errors[1])


def test_the_evaluator_scores_a_table_5_1_rbf_svm_like_chapter_3s() -> None:
    """The evaluator's precomputed-kernel path reads the prefixed ``svm_rbf__gamma``."""
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.protocol import ProtocolSettings

    data = load_dataset("sklearn-wine")
    cash, chapter3 = load_space("sklearn_cash"), load_space("svm_rbf")
    losses = []
    for space, config in [
        (cash, {"classifier": "svm_rbf", "svm_rbf__C": 30.0, "svm_rbf__gamma": 0.02}),
        (chapter3, {"C": 30.0, "gamma": 0.02}),
    ]:
        evaluator = Evaluator(
            data, ProtocolSettings(validation="cv"), space.learner_of, GUARD, 0, 0
        )
        losses.append(evaluator.validate(config, batch=0).valid_loss)
    assert losses[0] == losses[1]


def _tied_columns(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows where columns 0 and 1 are equal (a tree's choice between them is the seed's)
    and test rows where they disagree, so the choice shows in the predictions."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=200)
    X = np.c_[signal, signal, rng.normal(size=(200, 2))]
    X_test = np.c_[rng.normal(size=(200, 2)), rng.normal(size=(200, 2))]
    return X, (signal > 0).astype(int), X_test


@pytest.mark.parametrize(("learner", "config"), [
    ("decision_tree", {"max_depth": 1, "min_samples_split": 2, "min_samples_leaf": 2}),
    ("adaboost", {"n_estimators": 1}),
])  # fmt: skip
def test_seeded_trees_differ_across_seeds(learner: str, config: dict) -> None:
    X, y, X_test = _tied_columns()
    sets = [(X_test, np.zeros(len(X_test), dtype=int))]
    predictions = {
        fit_and_predict(learner, config, GUARD, X, y, sets, seed=s).predictions[0].tobytes()
        for s in range(6)
    }
    assert len(predictions) == 2


def test_linear_svm_coordinate_descent_differs_across_seeds(wine) -> None:
    X, y, _, _ = wine
    guard = FitGuard(max_iter=3, max_work=None)  # stopped early, the visiting order shows
    models = []
    for seed in (0, 0, 1):
        model = make_estimator("linear_svm", {"C": 100.0}, guard, seed=seed, n_train=len(y))
        models.append(model.set_params(dual=True).fit(X, y).coef_)
    np.testing.assert_array_equal(models[0], models[1])
    assert not np.array_equal(models[0], models[2])


@pytest.mark.parametrize(("retrain_on_limit", "scored_one"), [("keep", False), ("error_one", True)])
def test_a_final_retraining_that_hits_the_limit_is_kept_by_default_and_recorded(
    retrain_on_limit: str, scored_one: bool
) -> None:
    """The search's fits that reach libsvm's limit score 1.0 (steering the search away),
    but the chosen model's retraining on D_TVS keeps the truncated model's predictions by default;
    the hit is recorded either way."""
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.protocol import ProtocolSettings

    guard = FitGuard(max_iter=3, max_work=None, retrain_on_limit=retrain_on_limit)
    evaluator = Evaluator(
        load_dataset("sklearn-wine"), ProtocolSettings(), lambda c: "svm_rbf", guard, 0, 0
    )
    config = {"C": 1e5, "gamma": 0.02}
    assert evaluator.validate(config, batch=0).valid_loss == 1.0  # the search's rule: error_one
    tested = evaluator.test(config)
    assert tested.hit_limit
    assert (tested.error == 1.0) == scored_one
    assert FitGuard().retrain_on_limit == "keep"


def test_an_unknown_retraining_rule_is_one_line_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown retrain_on_limit 'drop'; valid: error_one, keep"):
        FitGuard(retrain_on_limit="drop")


# --- space parameters that no learner reads (a misspelt name must not be searched in vain) ----


def test_every_shipped_space_hands_each_parameter_to_a_learner_that_reads_it() -> None:
    from experiments.configuration.spaces import space_choices, space_config, unread_parameters

    for name in space_choices():
        assert unread_parameters(space_config(name)) == [], name


def test_a_misspelt_or_misplaced_parameter_is_found() -> None:
    from experiments.configuration.spaces import space_config, unread_parameters
    from hpo.learners import parameters_read

    assert parameters_read("svm_rbf", {"C": 1.0, "gamma": 0.1, "other": 3}) == {"C", "gamma"}
    single = space_config("svm_rbf")
    single["parameters"]["gama"] = single["parameters"].pop("gamma")  # a misspelt name
    assert [(p, learner) for p, learner, _ in unread_parameters(single)] == [("gama", "svm_rbf")]
    choice = space_config("seed003")  # a k-NN parameter handed to the decision tree
    choice["parameters"]["n_neighbors"] = {
        "type": "integer", "low": 1, "high": 50, "condition": {"classifier": ["decision_tree"]},
    }  # fmt: skip
    found = [(p, learner) for p, learner, _ in unread_parameters(choice)]
    assert found == [("n_neighbors", "decision_tree")]
    choice["parameters"]["n_neighbors"]["condition"] = {"classifier": ["knn"]}
    assert unread_parameters(choice) == []  # where it belongs, it is read
