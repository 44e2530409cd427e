"""GP posterior, likelihood and gradients against scikit-learn and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel

from hpo.gp.acquisition import ExpectedImprovement, NegativePosteriorMean
from hpo.gp.kernels import make_kernel
from hpo.gp.model import JITTER, GPPosterior, Hypers

SKLEARN_KERNELS = {
    "matern52": lambda ls: Matern(length_scale=ls, nu=2.5),
    "se_ard": lambda ls: RBF(length_scale=ls),
}


def _problem(seed: int, n: int = 12, d: int = 3, S: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(3 * X).sum(axis=1) + 0.05 * rng.standard_normal(n)
    hypers = Hypers(
        mean=rng.uniform(y.min(), y.max(), S),
        amp2=rng.uniform(0.3, 2.0, S),
        noise=rng.uniform(1e-4, 1e-1, S),
        ls=rng.uniform(0.2, 1.5, (S, d)),
    )
    return X, y, hypers, rng.random((25, d))


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_posterior_and_likelihood_match_sklearn(kernel: str) -> None:
    X, y, hypers, Xs = _problem(0)
    posterior = GPPosterior(make_kernel(kernel), X, y, hypers)
    mean, var = posterior.mean_var(Xs)
    loglik = posterior.log_likelihood()
    for s in range(hypers.n_samples):
        amp2, noise = hypers.amp2[s], hypers.noise[s]
        sk_kernel = ConstantKernel(amp2) * SKLEARN_KERNELS[kernel](hypers.ls[s]) + WhiteKernel(
            noise + JITTER * amp2
        )
        gpr = GaussianProcessRegressor(sk_kernel, alpha=0.0, optimizer=None, normalize_y=False)
        gpr.fit(X, y - hypers.mean[s])
        sk_mean, sk_std = gpr.predict(Xs, return_std=True)
        np.testing.assert_allclose(mean[s], sk_mean + hypers.mean[s], rtol=0, atol=1e-8)
        # sklearn's predictive variance includes the white noise; ours is the latent variance.
        np.testing.assert_allclose(var[s], sk_std**2 - noise, rtol=0, atol=1e-8)
        np.testing.assert_allclose(loglik[s], gpr.log_marginal_likelihood_value_, atol=1e-8)


def _finite_difference(f, Xs: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of ``f: (m, d) -> (..., m)`` w.r.t. each point: ``(..., m, d)``."""
    grads = []
    for j in range(Xs.shape[1]):
        step = np.zeros_like(Xs)
        step[:, j] = h
        grads.append((f(Xs + step) - f(Xs - step)) / (2 * h))
    return np.stack(grads, axis=-1)


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_posterior_gradients_match_finite_differences(kernel: str) -> None:
    X, y, hypers, Xs = _problem(1)
    posterior = GPPosterior(make_kernel(kernel), X, y, hypers)
    _, _, dmean, dvar = posterior.mean_var_grad(Xs)
    fd_mean = _finite_difference(lambda Z: posterior.mean_var(Z)[0], Xs)
    fd_var = _finite_difference(lambda Z: posterior.mean_var(Z)[1], Xs)
    np.testing.assert_allclose(dmean, fd_mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dvar, fd_var, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_acquisition_gradients_match_finite_differences(kernel: str) -> None:
    X, y, hypers, Xs = _problem(2)
    posterior = GPPosterior(make_kernel(kernel), X, y, hypers)
    for acquisition in (ExpectedImprovement(posterior, y.min()), NegativePosteriorMean(posterior)):
        value, grad = acquisition.value_and_grad(Xs)
        np.testing.assert_allclose(value, acquisition(Xs), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grad, _finite_difference(acquisition, Xs), rtol=1e-5, atol=1e-8)


def test_expected_improvement_is_sample_average_of_closed_form() -> None:
    X, y, hypers, Xs = _problem(3)
    posterior = GPPosterior(make_kernel("matern52"), X, y, hypers)
    mean, var = posterior.mean_var(Xs)
    best = y.min()
    # Monte Carlo EI of each sample's Gaussian, averaged over samples.
    z = np.random.default_rng(0).standard_normal((200_000, 1, 1))
    mc = np.maximum(best - (mean + np.sqrt(var) * z), 0.0).mean(axis=0).mean(axis=0)
    np.testing.assert_allclose(ExpectedImprovement(posterior, best)(Xs), mc, rtol=0.02, atol=2e-4)


def test_chunked_evaluation_equals_single_chunk() -> None:
    X, y, hypers, _ = _problem(4)
    posterior = GPPosterior(make_kernel("matern52"), X, y, hypers)
    Xs = np.random.default_rng(5).random((1000, X.shape[1]))
    acquisition = ExpectedImprovement(posterior, y.min())
    whole = acquisition._values(Xs)
    acquisition.chunk = 37
    np.testing.assert_allclose(acquisition(Xs), whole, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("d", [2, 6])
def test_pruned_top_k_equals_exhaustive_top_k(d: int) -> None:
    rng = np.random.default_rng(d)
    X = rng.random((90, d))
    y = np.sin(5 * X).sum(axis=1) + 0.01 * rng.standard_normal(90)
    hypers = Hypers(
        mean=np.full(5, y.mean()),
        amp2=rng.uniform(0.5, 2.0, 5),
        noise=np.full(5, 1e-4),
        ls=rng.uniform(0.1, 0.6, (5, d)),
    )
    acquisition = ExpectedImprovement(GPPosterior(make_kernel("matern52"), X, y, hypers), y.min())
    Xs = rng.random((6000, d))
    top, values = acquisition.top_k(Xs, 20)
    full = acquisition(Xs)
    np.testing.assert_array_equal(top, np.argsort(-full, kind="stable")[:20])
    np.testing.assert_allclose(values, full[top], rtol=1e-10)


def test_compiled_profiles_match_numpy_formulas() -> None:
    from hpo.gp import elementwise

    t = np.concatenate([[0.0, 1e-300, 1e-12], np.geomspace(1e-8, 7e5, 4000), [4.9e5, 1e9, 1e300]])
    s = np.sqrt(t)
    cases = {
        "matern52": (elementwise.matern52_inplace(t.copy()), (1 + s + t / 3) * np.exp(-s)),
        "matern52_grad": (elementwise.matern52_grad(t), -(1 + s) * np.exp(-s) / 6),
        "exp_neg": (elementwise.exp_neg_inplace(t.copy()), np.exp(-t)),
        "minus_exp_neg": (elementwise.exp_neg_inplace(t.copy(), sign=-1.0), -np.exp(-t)),
        "exp_neg_scaled": (elementwise.exp_neg_scaled(t / 3.0, 3.0), np.exp(-3.0 * (t / 3.0))),
    }
    for name, (ours, reference) in cases.items():
        flushed = (s if name.startswith("matern") else t) > 700.0
        assert (ours[flushed] == 0.0).all(), name
        assert np.all(np.abs(reference[flushed]) < 1e-290), name
        np.testing.assert_allclose(ours[~flushed], reference[~flushed], rtol=6e-16, err_msg=name)
    # non-contiguous input: computed on a copy, the input left as it was
    grid = np.linspace(0.0, 30.0, 20).reshape(4, 5)
    view = grid.T
    np.testing.assert_allclose(
        elementwise.matern52_inplace(view),
        make_kernel("matern52").profile(np.ascontiguousarray(view)),
        rtol=6e-16,
    )
    np.testing.assert_array_equal(grid, np.linspace(0.0, 30.0, 20).reshape(4, 5))
