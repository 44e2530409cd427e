"""Unit-cube encoding of search spaces."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.space import Categorical, Condition, Integer, Real, Space, get_space


def test_svm_space_is_log_uniform_over_ten_decades() -> None:
    space = get_space("svm_rbf")
    assert space.decode([0.0, 1.0]) == {"C": pytest.approx(1e-5), "gamma": pytest.approx(1e5)}
    assert space.decode([0.5, 0.6])["gamma"] == pytest.approx(10.0)
    np.testing.assert_allclose(space.encode({"C": 1.0, "gamma": 1e-3}), [0.5, 0.2])


def test_integer_and_categorical_use_equal_width_bins() -> None:
    space = get_space("random_forest")
    low = space.decode(np.zeros(5))
    high = space.decode(np.ones(5))
    assert low == {
        "n_estimators": 2,
        "criterion": "gini",
        "max_depth": 2,
        "min_samples_split": 2,
        "min_samples_leaf": 1,
    }
    assert high == {
        "n_estimators": 50,
        "criterion": "entropy",
        "max_depth": 150,
        "min_samples_split": 30,
        "min_samples_leaf": 30,
    }
    counts = np.bincount([Integer("k", 0, 3).from_unit(u) for u in np.linspace(0, 1, 4000)])
    assert counts.min() >= 999  # four equal bins
    for config in (low, high):
        assert space.decode(space.encode(config)) == config


def test_conditional_parameters_are_imputed_when_inactive() -> None:
    space = Space(
        "toy",
        (
            Categorical("model", ("svm", "tree")),
            Real("C", 1e-3, 1e3, log=True, condition=Condition("model", ("svm",))),
            Integer("depth", 1, 10, condition=Condition("model", ("tree",))),
        ),
    )
    config = space.decode([0.1, 0.5, 0.9])
    assert config == {"model": "svm", "C": pytest.approx(1.0)}
    np.testing.assert_allclose(space.encode(config), [0.25, 0.5, 0.5])
    assert space.active_mask(np.array([0.9, 0.1, 0.1])).tolist() == [True, False, True]


def test_bad_spaces_are_rejected() -> None:
    with pytest.raises(ValueError, match="log scale needs low > 0"):
        Real("C", 0.0, 1.0, log=True)
    with pytest.raises(KeyError, match="valid choices: random_forest, svm_rbf"):
        get_space("svm")
