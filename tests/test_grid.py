"""Grid search (thesis §3.3): the 10 x 10 log grid of C and gamma, in a random order."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from hpo.optimizers import make_optimizer
from hpo.optimizers.grid import GridSearch


def _all(optimizer: GridSearch) -> list:
    proposals = []
    while True:
        try:
            proposals.append(optimizer.ask())
        except StopIteration:
            return proposals


def test_budget_100_is_the_10_by_10_logspace_grid_of_c_and_gamma() -> None:
    space = load_space("svm_rbf")
    proposals = _all(make_optimizer("grid", space, 100, np.random.default_rng(0)))
    assert [p.batch for p in proposals] == list(range(1, 101))
    configs = [space.decode(p.u) for p in proposals]
    for name in ("C", "gamma"):
        values = sorted({c[name] for c in configs})
        np.testing.assert_allclose(values, np.logspace(-5, 5, 10), rtol=1e-12)
    assert len({(c["C"], c["gamma"]) for c in configs}) == 100


def test_smaller_budget_takes_the_largest_grid_that_fits_and_stops_there() -> None:
    proposals = _all(GridSearch(load_space("svm_rbf"), 30, np.random.default_rng(0)))
    assert len(proposals) == 25  # 5 x 5
    axis = sorted({float(p.u[0]) for p in proposals})
    np.testing.assert_allclose(axis, np.linspace(0, 1, 5))


def test_order_is_a_random_permutation_by_default_and_row_major_without_shuffle() -> None:
    space = load_space("svm_rbf")
    first = [p.u.tolist() for p in _all(GridSearch(space, 9, np.random.default_rng(0)))]
    other = [p.u.tolist() for p in _all(GridSearch(space, 9, np.random.default_rng(1)))]
    plain = [
        p.u.tolist() for p in _all(GridSearch(space, 9, np.random.default_rng(0), shuffle=False))
    ]
    assert plain == [[a, b] for a in (0.0, 0.5, 1.0) for b in (0.0, 0.5, 1.0)]
    assert sorted(first) == sorted(plain) and first != plain and first != other


def test_exhausted_grid_raises_stop_iteration() -> None:
    grid = GridSearch(load_space("svm_rbf"), 4, np.random.default_rng(0))
    assert len(_all(grid)) == 4
    with pytest.raises(StopIteration, match="grid exhausted"):
        grid.ask()
