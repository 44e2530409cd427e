"""GPEIOptimizer: Spearmint's initial design, determinism, posterior-mean selection, quality."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.gp.acquisition_optimizers import GridLBFGS, sobol_grid
from hpo.gp.kernels import make_kernel
from hpo.gp.model import GPPosterior, Hypers
from hpo.gp.slice_sampler import HyperChain, SpearmintPriors
from hpo.optimizers import make_optimizer
from hpo.optimizers.base import Proposal
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Real, Space

FAST = {"grid_size": 1000, "burnin": 20, "n_samples": 5}


def _space(d: int) -> Space:
    return Space("unit", tuple(Real(f"x{i}", 0.0, 1.0) for i in range(d)))


def branin(u: np.ndarray) -> float:
    """Branin on the unit square, divided by 100 (the O(1) scale Spearmint's priors expect)."""
    x1, x2 = 15.0 * u[0] - 5.0, 15.0 * u[1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return float((x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10) / 100


BRANIN_MIN = 0.00397887


def _run(optimizer, objective, budget: int, pm_every_step: bool = False) -> list[np.ndarray]:
    proposals = []
    for t in range(1, budget + 1):
        proposal = optimizer.ask()
        assert proposal.batch == t
        optimizer.tell(proposal, objective(proposal.u))
        proposals.append(proposal.u)
        if pm_every_step:
            optimizer.posterior_mean_argmin()
    return proposals


def test_initial_design_is_first_two_sobol_points() -> None:
    opt = make_optimizer("gp", _space(3), 10, np.random.default_rng(0), **FAST)
    assert isinstance(opt, GPEIOptimizer)
    first = opt.ask()
    opt.tell(first, 1.0)
    second = opt.ask()
    np.testing.assert_array_equal(first.u, np.zeros(3))
    np.testing.assert_array_equal(second.u, np.full(3, 0.5))
    assert (first.batch, second.batch) == (1, 2)


def test_random_initial_design_and_bad_settings() -> None:
    opt = GPEIOptimizer(_space(2), 5, np.random.default_rng(0), initial_design="random", **FAST)
    assert not np.array_equal(opt.ask().u, np.zeros(2))
    with pytest.raises(ValueError, match="initial_design"):
        GPEIOptimizer(_space(2), 5, np.random.default_rng(0), initial_design="lhs")
    with pytest.raises(KeyError, match="kernel"):
        GPEIOptimizer(_space(2), 5, np.random.default_rng(0), kernel="rbf")


def test_same_seed_same_proposals_with_or_without_posterior_mean_calls() -> None:
    def run(pm: bool) -> list[np.ndarray]:
        opt = GPEIOptimizer(_space(2), 8, np.random.default_rng(42), **FAST)
        return _run(opt, branin, 8, pm_every_step=pm)

    plain, again, with_pm = run(False), run(False), run(True)
    for a, b, c in zip(plain, again, with_pm, strict=True):
        assert a.tobytes() == b.tobytes() == c.tobytes()
    other = GPEIOptimizer(_space(2), 8, np.random.default_rng(43), **FAST)
    assert not np.array_equal(_run(other, branin, 8)[-1], plain[-1])


def test_proposals_avoid_evaluated_grid_points_and_stay_in_cube() -> None:
    grid = sobol_grid(2, 64)
    search = GridLBFGS(grid, n_refine=0, n_jitter=0)
    cand = search.candidates(grid[:5], None, np.random.default_rng(0))
    assert len(cand) == 59 and not any((cand == g).all(axis=1).any() for g in grid[:5])
    opt = GPEIOptimizer(_space(2), 12, np.random.default_rng(0), **FAST)
    for u in _run(opt, branin, 12):
        assert np.all((u >= 0) & (u <= 1))


def _quadratic_optimizer(seed: int = 0) -> GPEIOptimizer:
    opt = GPEIOptimizer(_space(2), 30, np.random.default_rng(seed), **FAST)
    rng = np.random.default_rng(seed + 100)
    for i, u in enumerate(rng.random((30, 2))):
        loss = float(np.sum((u - [0.3, 0.7]) ** 2) + 0.01 * rng.standard_normal())
        opt.tell(Proposal(u, i + 1), loss)
    return opt


def test_posterior_mean_argmin_finds_the_smooth_minimum() -> None:
    opt = _quadratic_optimizer()
    u_space = opt.posterior_mean_argmin("space")
    u_observed = opt.posterior_mean_argmin("observed")
    assert np.linalg.norm(u_space - [0.3, 0.7]) < 0.1
    assert any(np.array_equal(u_observed, x) for x in opt.X)
    np.testing.assert_array_equal(opt.posterior_mean_argmin("space"), u_space)  # cached, stable


def test_posterior_mean_observed_ties_go_to_the_earliest() -> None:
    opt = _quadratic_optimizer()
    best = opt.posterior_mean_argmin("observed")
    index = next(i for i, x in enumerate(opt.X) if np.array_equal(x, best))
    opt.tell(Proposal(best.copy(), 31), opt.y[index])  # an exact duplicate, evaluated later
    chosen = opt.posterior_mean_argmin("observed")
    first = next(i for i, x in enumerate(opt.X) if np.array_equal(x, chosen))
    assert first == index


def test_posterior_mean_with_one_observation_returns_it() -> None:
    opt = GPEIOptimizer(_space(2), 5, np.random.default_rng(0), **FAST)
    with pytest.raises(ValueError, match="at least one"):
        opt.posterior_mean_argmin()
    p = opt.ask()
    opt.tell(p, 0.3)
    np.testing.assert_array_equal(opt.posterior_mean_argmin(), p.u)


def test_constant_losses_do_not_break_the_sampler() -> None:
    opt = GPEIOptimizer(_space(2), 5, np.random.default_rng(0), **FAST)
    for _ in range(4):
        p = opt.ask()
        opt.tell(p, 0.0)
    assert np.all(np.isfinite(opt.ask().u))


def test_beats_random_search_on_branin() -> None:
    budget, seeds = 25, range(3)
    gp_regret, rs_regret = [], []
    for seed in seeds:
        for family, regrets, settings in (("gp", gp_regret, FAST), ("rs", rs_regret, {})):
            opt = make_optimizer(family, _space(2), budget, np.random.default_rng(seed), **settings)
            _run(opt, branin, budget)
            regrets.append(min(opt.y) - BRANIN_MIN)
    assert np.median(gp_regret) < 1e-3
    assert np.median(gp_regret) < np.median(rs_regret) / 5


@pytest.mark.parametrize("settings", [{"standardize": True}, {"log_hypers": True},
                                      {"standardize": True, "log_hypers": True}])  # fmt: skip
def test_standardized_and_log_hyper_variants_are_deterministic_and_sound(settings: dict) -> None:
    def run(pm: bool) -> list[np.ndarray]:
        opt = GPEIOptimizer(_space(2), 12, np.random.default_rng(7), **FAST, **settings)
        return _run(opt, branin, 12, pm_every_step=pm)

    plain, with_pm = run(False), run(True)
    for a, b in zip(plain, with_pm, strict=True):
        assert a.tobytes() == b.tobytes()
        assert np.all((a >= 0) & (a <= 1))
    opt = GPEIOptimizer(_space(2), 5, np.random.default_rng(0), **FAST, **settings)
    for _ in range(4):  # constant losses: standardisation must not divide by zero
        p = opt.ask()
        opt.tell(p, 0.5)
    assert np.all(np.isfinite(opt.ask().u))


def test_change_units_describes_the_same_gp_over_the_raw_losses() -> None:
    rng = np.random.default_rng(0)
    X, Xs = rng.uniform(size=(10, 2)), rng.uniform(size=(5, 2))
    y = np.array([branin(x) for x in X])
    kernel = make_kernel("matern52")
    chain = HyperChain(kernel, SpearmintPriors())
    units0, units1 = (y[:6].mean(), y[:6].std()), (y.mean(), y.std())
    chain.state = Hypers(mean=np.array([0.3]), amp2=np.array([1.7]), noise=np.array([1e-3]),
                         ls=np.array([[0.4, 0.9]]))  # fmt: skip
    before = GPPosterior(kernel, X, (y - units0[0]) / units0[1], chain.state).mean_var(Xs)
    chain.change_units(*units0, *units1)
    after = GPPosterior(kernel, X, (y - units1[0]) / units1[1], chain.state).mean_var(Xs)
    np.testing.assert_allclose(units0[0] + units0[1] * before[0], units1[0] + units1[1] * after[0])
    np.testing.assert_allclose(units0[1] ** 2 * before[1], units1[1] ** 2 * after[1], rtol=1e-6)


def test_lockstep_lbfgsb_equals_scipy_minimize_per_start() -> None:
    from scipy.optimize import minimize

    from hpo.gp.acquisition import ExpectedImprovement
    from hpo.gp.acquisition_optimizers import LockstepLBFGSB, refine_lbfgsb

    rng = np.random.default_rng(3)
    X = rng.random((30, 3))
    y = np.array([branin(x[:2]) + x[2] for x in X])
    hypers = Hypers(
        mean=np.full(3, y.mean()),
        amp2=np.full(3, 1.0),
        noise=np.full(3, 1e-3),
        ls=rng.uniform(0.2, 0.8, (3, 3)),
    )
    acquisition = ExpectedImprovement(GPPosterior(make_kernel("matern52"), X, y, hypers), y.min())
    starts = np.concatenate([rng.random((12, 3)), np.zeros((1, 3)), np.ones((1, 3))])

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = acquisition.value_and_grad(x[None])
        return -float(value[0]), -grad[0]

    bounds = [(0.0, 1.0)] * 3
    expected = [minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=bounds) for x0 in starts]
    np.testing.assert_array_equal(refine_lbfgsb(acquisition, starts), [r.x for r in expected])
    runs = LockstepLBFGSB(starts, 0.0, 1.0)
    runs.minimize(lambda Z: tuple(-a for a in acquisition.value_and_grad(Z)))
    np.testing.assert_array_equal(runs.n_iterations, [r.nit for r in expected])
    np.testing.assert_array_equal(runs.n_evaluations, [r.nfev for r in expected])


def test_expected_improvement_is_taken_below_the_lowest_observed_loss() -> None:
    optimizer = GPEIOptimizer(_space(2), 8, np.random.default_rng(0), **FAST)
    losses = [0.9, 0.2, 0.5, 0.7, 0.35]  # median 0.5, mean 0.53, minimum 0.2
    for loss in losses:
        optimizer.tell(optimizer.ask(), loss)
    optimizer.ask()
    assert optimizer.last_acquisition.best_f == min(losses)
