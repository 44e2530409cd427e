"""Learners: the BLAS prediction path agrees with libsvm; the fit guard."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from hpo.learners import FitGuard, fit_and_score, rbf_svc_predict


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
