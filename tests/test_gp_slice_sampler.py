"""Slice sampler against known targets; the hyperparameter chain's burn-in and continuation."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.gp.kernels import make_kernel
from hpo.gp.model import covariance, log_likelihood
from hpo.gp.slice_sampler import HyperChain, SpearmintPriors, SpectralLikelihood, slice_sample


def _chain(logprob, x0: np.ndarray, n: int, compwise: bool, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    samples, x = [], np.asarray(x0, dtype=float)
    for _ in range(n):
        x = slice_sample(x, logprob, rng, compwise=compwise)
        samples.append(x)
    return np.array(samples)


@pytest.mark.parametrize("compwise", [False, True])
def test_one_dimensional_gamma_with_bounded_support(compwise: bool) -> None:
    # Gamma(shape 3, scale 1): mean 3, variance 3; -inf below 0 exercises the support handling.
    def logprob(x: np.ndarray) -> float:
        return -np.inf if x[0] <= 0 else float(2 * np.log(x[0]) - x[0])

    samples = _chain(logprob, np.array([1.0]), 4000, compwise)[:, 0]
    assert abs(samples.mean() - 3.0) < 0.15
    assert abs(samples.var() - 3.0) < 0.4
    assert samples.min() > 0


@pytest.mark.parametrize("compwise", [False, True])
def test_two_dimensional_correlated_gaussian(compwise: bool) -> None:
    mean = np.array([1.0, -2.0])
    cov = np.array([[1.0, 0.8], [0.8, 2.0]])
    precision = np.linalg.inv(cov)

    def logprob(x: np.ndarray) -> float:
        r = x - mean
        return float(-0.5 * r @ precision @ r)

    samples = _chain(logprob, np.zeros(2), 6000, compwise)[500:]
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.15)
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.2)


def test_same_rng_same_samples() -> None:
    def logprob(x: np.ndarray) -> float:
        return float(-0.5 * x @ x)

    a = _chain(logprob, np.zeros(3), 50, compwise=False, seed=7)
    b = _chain(logprob, np.zeros(3), 50, compwise=False, seed=7)
    np.testing.assert_array_equal(a, b)


def _gp_data(seed: int = 0, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = 0.3 * np.sin(6 * X[:, 0]) + 0.1 * X[:, 1] + 0.2 + 0.01 * rng.standard_normal(n)
    return X, y


def test_chain_respects_priors_and_burns_in_once(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = _gp_data()
    chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=7)
    transitions = []
    original = HyperChain._transition
    monkeypatch.setattr(
        HyperChain, "_transition", lambda self, *a: transitions.append(1) or original(self, *a)
    )
    rng = np.random.default_rng(0)
    first = chain.sample(X, y, 4, rng)
    assert len(transitions) == 7 + 4
    second = chain.sample(X, y, 4, rng)
    assert len(transitions) == 7 + 8  # continued, not burnt in again
    for hypers in (first, second):
        assert hypers.ls.shape == (4, 2)
        assert np.all((hypers.ls > 0) & (hypers.ls <= 2.0))
        assert np.all((hypers.mean >= y.min()) & (hypers.mean <= y.max()))
        assert np.all(hypers.amp2 > 0) and np.all(hypers.noise > 0)
    assert not np.array_equal(first.ls, second.ls)


def test_chain_recovers_small_noise_of_smooth_data() -> None:
    X, y = _gp_data(n=40)
    chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=100)
    hypers = chain.sample(X, y, 30, np.random.default_rng(1))
    # True noise variance 1e-4; data variance ~0.05: the posterior must separate the two.
    assert 1e-6 < np.median(hypers.noise) < 1e-3
    assert np.median(hypers.ls[:, 0]) < np.median(hypers.ls[:, 1])  # x0 is the wiggly input


def test_chain_copy_is_independent() -> None:
    X, y = _gp_data()
    chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=3)
    chain.sample(X, y, 1, np.random.default_rng(0))
    before = chain.state
    chain.copy().sample(X, y, 5, np.random.default_rng(1))
    assert chain.state is before


def test_spectral_likelihood_equals_cholesky_likelihood() -> None:
    rng = np.random.default_rng(3)
    X, y = rng.random((30, 3)), rng.random(30)
    kernel = make_kernel("matern52")
    corr = kernel.gram(np.array([[0.3, 0.5, 0.9]]), kernel.gram_terms(X))
    spectral = SpectralLikelihood(corr[0], y)
    for mean, amp2, noise in [(0.5, 1.0, 1e-3), (0.2, 0.05, 1e-8), (0.9, 3.0, 0.5)]:
        expected = log_likelihood(covariance(corr, amp2, noise)[0], y - mean)
        np.testing.assert_allclose(spectral.log_likelihood(mean, amp2, noise), expected, rtol=1e-9)
    assert spectral.log_likelihood(0.5, 1.0, -1.0) == -np.inf


def test_log_hypers_chain_targets_the_same_posterior() -> None:
    # Noisy data, where Spearmint's raw parameterisation mixes too: both chains must agree on the
    # posterior means of (mean, log amp2, log noise) within MCMC error (0.3 sd); without the
    # log-Jacobian the log-noise mean moves by some 60 units.
    rng = np.random.default_rng(11)
    X = rng.random((12, 1))
    y = np.sin(6 * X[:, 0]) + 0.3 * rng.standard_normal(12)
    moments = []
    for log_hypers in (False, True):
        chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=50)
        chain.log_hypers = log_hypers
        samples = chain.sample(X, y, 3000, np.random.default_rng(5))
        draws = np.column_stack([samples.mean, np.log(samples.amp2), np.log(samples.noise)])
        moments.append((draws.mean(axis=0), draws.std(axis=0)))
    (mean_raw, sd_raw), (mean_log, _) = moments
    assert np.all(np.abs(mean_log - mean_raw) <= 0.3 * sd_raw), (mean_log, mean_raw, sd_raw)


def test_joint_likelihood_survives_a_matrix_eigh_fails_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # A correlation matrix met in a run on svm:pima, on which numpy's eigh (numpy 2.x, OpenBLAS)
    # raised "Eigenvalues did not converge" and stopped the run.
    from pathlib import Path

    from hpo.gp import slice_sampler

    corr = np.load(Path(__file__).parent / "data" / "eigh_nonconvergent_corr.npy")
    y = np.linspace(0.2, 0.4, len(corr))
    expected = log_likelihood(covariance(corr[None], 0.5, 1e-4)[0], y - 0.3)
    value = slice_sampler.joint_log_likelihood(corr, y)(0.3, 0.5, 1e-4)
    assert value == pytest.approx(expected, rel=1e-9)

    def no_convergence(*args: object) -> None:
        raise np.linalg.LinAlgError("Eigenvalues did not converge")

    monkeypatch.setattr(slice_sampler.SpectralLikelihood, "__init__", no_convergence)
    fallback = slice_sampler.joint_log_likelihood(corr, y)(0.3, 0.5, 1e-4)
    assert fallback == pytest.approx(expected, rel=1e-12)


def test_horseshoe_noise_prior_and_lognormal_amp2_prior_values() -> None:
    priors, y = SpearmintPriors(noise_scale=0.1, amp2_scale=1.0), np.array([0.1, 0.5])
    for amp2, noise in [(1.0, 1e-3), (1.0, 0.5), (2.0, 1e-2)]:
        expected = np.log(np.log1p((0.1 / noise) ** 2)) - 0.5 * np.log(amp2) ** 2
        assert priors.log_joint(0.3, amp2, noise, y) == pytest.approx(expected, rel=1e-12)


def test_chain_targets_likelihood_plus_priors_on_mean_amp2_noise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first slice-sampling target of a fresh chain is log p(y | mean, amp2, noise, ls = 1)
    plus the horseshoe and log-normal priors (Spearmint's GPEIOptChooser)."""
    import hpo.gp.slice_sampler as sampler

    X, y = _gp_data()
    kernel, priors = make_kernel("matern52"), SpearmintPriors()
    targets = []
    original = sampler.slice_sample
    monkeypatch.setattr(
        sampler, "slice_sample", lambda x, f, *a, **k: targets.append(f) or original(x, f, *a, **k)
    )
    HyperChain(kernel, priors, burnin=0).sample(X, y, 1, np.random.default_rng(0))
    corr = kernel.gram(np.ones((1, 2)), kernel.gram_terms(X))[0]
    likelihood = sampler.joint_log_likelihood(corr, y)
    for theta in [(0.3, 0.05, 1e-3), (0.3, 0.05, 0.2), (0.25, 1.5, 1e-2)]:
        expected = likelihood(*theta) + priors.log_joint(*theta, y)
        assert targets[0](np.array(theta)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("value", [0.0, 0.25])
@pytest.mark.parametrize("log_hypers", [False, True])
def test_equal_observations_pin_the_mean_instead_of_stopping_the_chain(
    log_hypers: bool, value: float
) -> None:
    """All losses equal (EO's re-scored pool when one model outvotes the rest): the mean's prior
    support [min y, max y] is one point; the chain samples amplitude and noise around it."""
    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    y = np.full(12, value)  # 0.0: every re-scored ensemble perfect
    chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=20, log_hypers=log_hypers)
    hypers = chain.sample(X, y, 5, rng)
    np.testing.assert_array_equal(hypers.mean, value)
    assert (hypers.amp2 > 0).all() and (hypers.noise > 0).all()
    assert len(np.unique(hypers.amp2)) > 1  # amplitude and noise still move
    y_new = np.linspace(0.1, 0.3, 12)  # a continued chain leaves the point once y varies
    assert chain.sample(X, y_new, 5, rng).mean.std() > 0
