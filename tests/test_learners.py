"""Learners: the BLAS prediction and precomputed-kernel paths agree with libsvm; the fit guard."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from hpo.learners import (
    FitGuard,
    SquaredDistanceCache,
    fit_and_score,
    rbf_svc_predict,
    squared_distances,
)


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
    outcome = fit_and_score(
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
        reference = fit_and_score("svm_rbf", config, FitGuard(), X[train], y[train], sets)
        gram = cache.gram("fold", train, gamma)
        ours = fit_and_score(
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
