"""The shrinking-hypercube optimizer (seed 003 §3.4, Algorithm 1; Gonnet et al. 2010)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from hpo.optimizers import make_optimizer
from hpo.optimizers.hypercube import MAX_SIDE, ShrinkingHypercube, next_side


def test_next_side_doubles_on_success_and_shrinks_on_failure() -> None:
    assert next_side(0.2, improved=True) == pytest.approx(0.4)
    assert next_side(0.2, improved=False) == pytest.approx(0.18)
    assert next_side(0.7, improved=True) == MAX_SIDE  # never beyond the unit cube
    assert next_side(0.2, improved=False, shrink=0.5) == pytest.approx(0.1)


def test_the_cube_grows_and_moves_on_success_and_shrinks_in_place_on_failure() -> None:
    space = load_space("svm_rbf")
    opt = ShrinkingHypercube(space, 100, np.random.default_rng(0), initial_side=0.4)
    start = opt.ask()
    opt.tell(start, 0.5)  # the start point becomes the centre
    (cube,) = opt.cubes.values()
    np.testing.assert_array_equal(cube.centre, start.u)
    assert cube.side == 0.4
    worse = opt.ask()
    assert np.all(np.abs(worse.u - cube.centre) <= 0.2 + 1e-12)  # inside the cube of side 0.4
    opt.tell(worse, 0.6)
    assert cube.side == pytest.approx(0.36) and np.array_equal(cube.centre, start.u)
    better = opt.ask()
    assert np.all(np.abs(better.u - cube.centre) <= 0.18 + 1e-12)
    opt.tell(better, 0.1)
    assert cube.side == pytest.approx(0.72) and np.array_equal(cube.centre, better.u)
    assert cube.loss == 0.1 and cube.history == [(0.4, False), (pytest.approx(0.36), True)]


def test_a_cube_restarts_when_it_has_shrunk_below_its_minimum() -> None:
    space = load_space("svm_rbf")
    opt = ShrinkingHypercube(space, 1000, np.random.default_rng(1), 0.5, 0.5, min_side=0.01)
    opt.tell(opt.ask(), 0.0)
    failures = math.ceil(math.log(0.01 / 0.5) / math.log(0.5))  # 0.5 * 0.5^6 < 0.01
    for _ in range(failures):
        opt.tell(opt.ask(), 1.0)
    (cube,) = opt.cubes.values()
    assert cube.restarts == 1 and cube.centre is None and cube.side == 0.5
    fresh = opt.ask()
    opt.tell(fresh, 2.0)  # the restart point is the new centre, whatever its loss
    np.testing.assert_array_equal(cube.centre, fresh.u)


def test_each_signature_keeps_its_own_cube_over_its_own_numeric_dimensions() -> None:
    space = load_space("svm_kernels")  # kernel, C, gamma | rbf/sigmoid, degree | poly, coef0
    opt = ShrinkingHypercube(space, 200, np.random.default_rng(2))
    for _ in range(80):
        proposal = opt.ask()
        opt.tell(proposal, float(np.sum((proposal.u - 0.3) ** 2)))
    assert set(opt.cubes) == {(("kernel", k),) for k in ("linear", "rbf", "poly", "sigmoid")}
    sizes = {key[0][1]: len(cube.centre) for key, cube in opt.cubes.items()}
    assert sizes == {"linear": 1, "rbf": 2, "poly": 3, "sigmoid": 3}


def test_it_finds_the_minimum_of_a_smooth_function() -> None:
    space = load_space("svm_rbf")
    opt = make_optimizer("hypercube", space, 300, np.random.default_rng(3))
    losses = []
    for _ in range(300):
        proposal = opt.ask()
        losses.append(float(np.sum((proposal.u - np.array([0.3, 0.7])) ** 2)))
        opt.tell(proposal, losses[-1])
    random = np.random.default_rng(3).uniform(size=(300, 2))
    assert min(losses) < 1e-4 < np.min(np.sum((random - [0.3, 0.7]) ** 2, axis=1))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"shrink": 1.0}, "shrink=1.0 must be in"),
        ({"initial_side": 0.0}, "initial_side=0.0 must be in"),
        ({"grow": 0.5}, "grow=0.5 must be >= 1"),
        ({"min_side": 0.6}, "min_side=0.6 must be in"),
    ],
)
def test_bad_settings_are_refused(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_optimizer("hypercube", load_space("svm_rbf"), 10, np.random.default_rng(0), **settings)
