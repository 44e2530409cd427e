"""GP-EI's settings for noisy observations (docs/reshuffling.md, "Ablations"): EI's incumbent
value (``ei_incumbent``) and a fixed noise variance (``fixed_noise``), each off by default and
doing what it says when on."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.gp.kernels import make_kernel
from hpo.gp.slice_sampler import HyperChain, SpearmintPriors
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Real, Space

FAST = {"grid_size": 500, "burnin": 10, "n_samples": 3}


def _space() -> Space:
    return Space("unit", (Real("x0", 0.0, 1.0), Real("x1", 0.0, 1.0)))


def _run(budget: int, **settings: object) -> tuple[GPEIOptimizer, np.ndarray]:
    """A run on a smooth bowl plus binomial-sized noise (SD 0.04): the optimizer after its last
    ``ask`` and the proposals."""
    opt = GPEIOptimizer(_space(), budget + 1, np.random.default_rng(3), **FAST, **settings)
    noise = np.random.default_rng(11)
    out = []
    for _ in range(budget):
        proposal = opt.ask()
        u = proposal.u
        loss = 0.1 + 0.2 * float((u[0] - 0.3) ** 2 + (u[1] - 0.6) ** 2)
        opt.tell(proposal, loss + 0.04 * noise.standard_normal())
        out.append(u)
    opt.ask()  # the last acquisition sees all ``budget`` observations
    return opt, np.array(out)


def test_defaults_are_spearmints_and_leave_the_proposals_unchanged() -> None:
    _, default = _run(8)
    _, explicit = _run(8, ei_incumbent="observed_min", fixed_noise=None)
    np.testing.assert_array_equal(default, explicit)


def test_observed_min_incumbent_is_the_lowest_observed_loss() -> None:
    opt, _ = _run(8)
    assert opt.last_acquisition is not None
    assert opt.last_acquisition.best_f == min(opt.y)


def test_posterior_mean_incumbent_is_the_lowest_mean_at_observed_points() -> None:
    opt, proposals = _run(8, ei_incumbent="posterior_mean_min")
    acquisition = opt.last_acquisition
    assert acquisition is not None
    X = np.array(opt.X)
    mean = acquisition.posterior.mean(X).mean(axis=0)  # averaged over the samples
    assert acquisition.best_f == pytest.approx(mean.min(), rel=1e-12)
    assert acquisition.best_f > min(opt.y)  # the noisy lowest draw is shrunk toward the mean
    _, default = _run(8)
    np.testing.assert_array_equal(proposals[:3], default[:3])  # same until EI's bar differs
    assert not np.allclose(proposals, default)


def test_fixed_noise_holds_the_noise_and_still_samples_mean_and_amplitude() -> None:
    opt, proposals = _run(8, fixed_noise=1e-6)
    hypers = opt.last_acquisition.posterior.hypers  # type: ignore[union-attr]
    np.testing.assert_array_equal(hypers.noise, 1e-6)
    assert np.ptp(hypers.amp2) > 0 and np.ptp(hypers.mean) > 0
    default_opt, default = _run(8)
    assert np.ptp(default_opt.last_acquisition.posterior.hypers.noise) > 0  # type: ignore[union-attr]
    assert not np.allclose(proposals, default)


@pytest.mark.parametrize("log_hypers", [False, True])
def test_fixed_noise_chain_with_equal_observations_pins_the_mean(log_hypers: bool) -> None:
    space = _space()
    chain = HyperChain(
        make_kernel("matern52", space),
        SpearmintPriors(),
        burnin=5,
        log_hypers=log_hypers,
        fixed_noise=1e-3,
    )
    X = np.random.default_rng(0).uniform(size=(5, 2))
    hypers = chain.sample(X, np.full(5, 0.2), 4, np.random.default_rng(1))
    np.testing.assert_array_equal(hypers.mean, 0.2)
    np.testing.assert_array_equal(hypers.noise, 1e-3)
    assert np.ptp(hypers.amp2) > 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"ei_incumbent": "mean"}, r"ei_incumbent must be one of \('observed_min', "),
        ({"fixed_noise": 0.0}, r"fixed_noise must be > 0 or None, got 0.0"),
    ],
)
def test_bad_settings_are_one_clear_error(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GPEIOptimizer(_space(), 5, np.random.default_rng(0), **settings)
