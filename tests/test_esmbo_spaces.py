"""The ESMBO paper's spaces, regression support and protocol (UAI 2014, §6.1-6.2; docs/esmbo.md):
losses and the weighted-mean ensemble against their formulas, the MLP's gradient against finite
differences, every space sampled and fitted, the 0.4/0.3/0.3 split, the binarisation rule, and
the bad command lines (one line, exit 2, nothing written)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from experiments.configuration.spaces import load_space, spaces_for_task
from experiments.run.runner import run
from hpo.data.binary import binarize
from hpo.data.catalog import dataset_task, load_dataset
from hpo.ensembles.agnostic_bayes import ensemble_predict, pool_losses
from hpo.evaluation.protocol import RepetitionSplits
from hpo.learners import FitGuard, fit_and_predict, learner_task
from hpo.learners import mlp as mlp_module
from hpo.learners.uai2014 import n_features_of
from hpo.records import FoldPredictions
from hpo.tasks import example_losses, mean_loss

REPO = Path(__file__).resolve().parents[1]
CLASSIFICATION_SPACES = ["esmbo_gbc", "esmbo_mlp", "esmbo_rf", "esmbo_svm"]
REGRESSION_SPACES = ["esmbo_gbr", "esmbo_rf_regression", "esmbo_svr"]


def test_losses_follow_the_targets_dtype() -> None:
    y = np.array([0.5, -1.0, 2.0])
    predictions = np.array([1.0, -1.0, 0.0])
    np.testing.assert_array_equal(example_losses(predictions, y), [0.25, 0.0, 4.0])
    assert mean_loss(predictions, y) == pytest.approx((0.25 + 0 + 4) / 3)
    labels = np.array([0, 1, 1])
    np.testing.assert_array_equal(example_losses(np.array([0, 0, -1]), labels), [0, 1, 1])
    assert mean_loss(np.array([0, 0, -1]), labels) == 2 / 3


def test_regression_ensemble_is_the_weighted_mean() -> None:
    members = np.array([[1.0, 2.0], [3.0, 6.0], [0.0, 1.0]])
    weights = np.array([2.0, 1.0, 1.0])
    expected = (2 * members[0] + members[1] + members[2]) / 4
    np.testing.assert_allclose(ensemble_predict(members, weights, "regression"), expected)


def test_pool_losses_of_regression_models_are_squared_errors() -> None:
    rows, y = np.arange(3), np.array([0.0, 1.0, 2.0])
    models = [(FoldPredictions(rows, y, y + d, np.empty(0)),) for d in (0.0, 0.5, -2.0)]
    np.testing.assert_allclose(pool_losses(models), np.array([[0, 0.25, 4.0]] * 3))


def test_mlp_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 4)), rng.integers(0, 3, 12)
    shapes = mlp_module.layer_shapes(4, (5, 3), 3)
    l2 = (0.3, 0.01, 2.0)  # distinct per layer: a swapped penalty shows in the gradient
    theta = rng.normal(scale=0.5, size=sum(a * b + b for a, b in shapes))
    value, grad = mlp_module.objective(theta, X, y, shapes, l2)
    numeric = approx_fprime(theta, lambda t: mlp_module.objective(t, X, y, shapes, l2)[0], 1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)
    # each layer's penalty is its own: l2 on layer 3 only changes the value by l2_3 ||W_3||^2
    w3 = mlp_module.unpack(theta, shapes)[2][0]
    other, _ = mlp_module.objective(theta, X, y, shapes, (0.3, 0.01, 0.0))
    assert value - other == pytest.approx(2.0 * np.sum(w3**2))


def test_mlp_learns_a_separable_problem() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    model = mlp_module.PerLayerL2MLP((1e-4, 1e-4, 1e-4), (8, 8), random_state=0).fit(X, y)
    assert np.mean(model.predict(X) == y) > 0.95


def test_feature_ratio_rounds_half_up_and_keeps_one() -> None:
    assert n_features_of(1e-4, 10) == 1 and n_features_of(0.25, 10) == 3
    assert n_features_of(0.5, 9) == 5 and n_features_of(1.0, 7) == 7


def test_spaces_by_task() -> None:
    # every regression space: ESMBO's and Auto-WEKA's CASH space
    assert spaces_for_task("regression") == ["autoweka_regression", *REGRESSION_SPACES]
    assert set(CLASSIFICATION_SPACES) <= set(spaces_for_task("classification"))
    assert learner_task("svr") == "regression" and learner_task("mlp") == "classification"


@pytest.mark.parametrize("space_name", CLASSIFICATION_SPACES + REGRESSION_SPACES)
def test_every_space_samples_valid_configurations_that_fit(space_name: str) -> None:
    space = load_space(space_name)
    regression = space_name in REGRESSION_SPACES
    data = load_dataset("sklearn-diabetes" if regression else "sklearn-breast-cancer")
    X, y = data.X[:150], data.y[:150]
    rng = np.random.default_rng(0)
    for _ in range(3):
        config = space.sample(rng)
        assert space.decode(space.encode(config)) == pytest.approx(config)
        outcome = fit_and_predict(
            space.learner_of(config), config, FitGuard(), X[:100], y[:100], [(X[100:], y[100:])]
        )
        assert outcome.failure is None, (config, outcome.failure)
        predictions = outcome.predictions[0]
        assert predictions.dtype.kind == ("f" if regression else "i")
        assert outcome.errors[0] == pytest.approx(mean_loss(predictions, y[100:]))


def test_regression_run_scores_the_weighted_mean_from_the_sidecar() -> None:
    spec = compose_run(
        ["optimizer=ers", "dataset=sklearn-diabetes", "space=esmbo_svr", "budget=6"]
        + ["predictions=true"]
    )
    result = run(spec)
    data = load_dataset("sklearn-diabetes")
    test = result.predictions[result.predictions.split == 2]
    rows = np.sort(test.row.unique())
    assert test.prediction.dtype == np.float64
    for _, outcome in result.outcomes[result.outcomes.method == "ers"].iterrows():
        parts = [p.split(":") for p in outcome.members.split(",")]
        weights: dict[int, float] = {}
        for part in parts:
            weights[int(part[0])] = weights.get(int(part[0]), 0.0) + (
                float(part[1]) if len(part) == 2 else 1.0
            )
        stacked = np.stack(
            [test[test.model == m].sort_values("row").prediction.to_numpy() for m in weights]
        )
        mean = np.average(stacked, axis=0, weights=list(weights.values()))
        expected = np.mean((mean - data.y[rows]) ** 2)
        assert outcome.test_error == pytest.approx(expected, rel=1e-6)
    trace = result.trace
    valid = result.predictions[result.predictions.split == 0]
    first = valid[valid.model == 1]
    assert trace.valid_loss[0] == pytest.approx(
        np.mean((first.prediction - data.y[first.row]) ** 2)
    )


def test_esmbo_protocol_is_a_40_30_30_partition() -> None:
    spec = compose_run(["optimizer=esmbo", "dataset=sklearn-friedman1"] + ["space=esmbo_svr"])
    splits = RepetitionSplits(np.zeros(2000), 2000, False, spec.task.protocol, 0, "x", 0)
    sizes = splits.sizes()
    assert (sizes["n_test"], sizes["n_valid"], sizes["n_train"]) == (600, 600, 800)
    assert sizes["n_selection"] == 0


def test_binary_merges_every_class_but_the_most_frequent() -> None:
    data = load_dataset("sklearn-iris")
    skewed = type(data)("x", data.X[10:], data.y[10:])  # class 0 has 40 rows, 1 and 2 have 50
    merged = binarize(skewed)
    np.testing.assert_array_equal(merged.y, (skewed.y != 1).astype(np.int64))
    assert merged.name == "binary:x" and dataset_task("binary:sklearn-iris") == "classification"
    assert dataset_task("sklearn-diabetes") == "regression"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["dataset=sklearn-diabetes", "space=esmbo_svm"],
            "space=esmbo_svm is a classification space but dataset=sklearn-diabetes is a "
            "regression dataset; valid spaces for it: autoweka_regression, esmbo_gbr, "
            "esmbo_rf_regression, esmbo_svr",
        ),
        (
            ["dataset=sklearn-iris", "space=esmbo_gbr"],
            "space=esmbo_gbr is a regression space but dataset=sklearn-iris is a classification",
        ),
        (["+optimizer.settings.essr=0"], "essr must be in (0, 1], got 0"),
        (
            ["+optimizer.settings.n_bootstraps=0"],
            "the number of bootstraps N must be an integer >= 1, got 0",
        ),
    ],
)
def test_bad_inputs_are_one_line(overrides: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_method(compose_run(["optimizer=esmbo", "budget=10", *overrides]))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_bad_command_line_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    command = [sys.executable, "run.py", "optimizer=esmbo", "dataset=sklearn-diabetes"]
    command += [f"results_dir={tmp_path / 'runs'}", "+optimizer.settings.essr=1.5"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: space=esmbo_svm is a classification space but dataset=sklearn-diabetes is a "
        "regression dataset; valid spaces for it: autoweka_regression, esmbo_gbr, "
        "esmbo_rf_regression, esmbo_svr"
    ]
    assert not (tmp_path / "runs").exists()
