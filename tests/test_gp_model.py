"""GP posterior, likelihood and gradients against scikit-learn and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel

from hpo.gp.acquisition import (
    ExpectedImprovement,
    NegativePosteriorMean,
    _Screen,
    variance_basis,
)
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


def _screening_problem(d: int, noise: float, n: int = 90):
    rng = np.random.default_rng(d)
    X = rng.random((n, d))
    y = np.sin(5 * X).sum(axis=1) + 0.01 * rng.standard_normal(n)
    hypers = Hypers(
        mean=np.full(5, y.mean()),
        amp2=rng.uniform(0.5, 2.0, 5),
        noise=np.full(5, noise),
        ls=rng.uniform(0.1, 0.6, (5, d)),
    )
    acquisition = ExpectedImprovement(GPPosterior(make_kernel("matern52"), X, y, hypers), y.min())
    return acquisition, rng.random((6000, d))


# noise 1e-9: an ill-conditioned K (as Spearmint's chain reaches on smooth functions), where
# the float32 bound is loose and the float64 bound does the pruning
@pytest.mark.parametrize(("d", "noise"), [(2, 1e-4), (6, 1e-4), (2, 1e-9)])
def test_screened_top_k_equals_exhaustive_top_k(d: int, noise: float) -> None:
    acquisition, Xs = _screening_problem(d, noise)
    full = acquisition(Xs)
    expected = np.argsort(-full, kind="stable")[:20]
    good_hints = expected[::2]
    poor_hints = np.argsort(full, kind="stable")[:30]  # the worst candidates, and repeats
    for hints in (None, good_hints, np.concatenate([poor_hints, poor_hints[:5]])):
        top, values = acquisition.top_k(Xs, 20, hints=hints)
        np.testing.assert_array_equal(top, expected)
        np.testing.assert_allclose(values, full[top], rtol=1e-10)


@pytest.mark.parametrize(("d", "noise"), [(2, 1e-4), (6, 1e-4), (2, 1e-9)])
def test_screening_bounds_are_upper_bounds(d: int, noise: float) -> None:
    acquisition, Xs = _screening_problem(d, noise)
    posterior = acquisition.posterior
    exact = acquisition(Xs)
    for rows, prefixes in [(8, (8,)), (32, (8,)), (32, (4, 16))]:
        basis = variance_basis(posterior, Xs[:rows])
        bound = _Screen(posterior, basis, prefixes).ei_upper_bound(Xs, acquisition.best_f)
        assert np.all(bound >= exact), (rows, prefixes)
    bound = _Screen(posterior, variance_basis(posterior, Xs[:8])).ei_upper_bound(
        Xs, acquisition.best_f
    )
    if noise > 1e-6:  # and informative: most candidates are bounded well below the maximum
        assert np.mean(bound < np.sort(exact)[-20]) > 0.5


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_float32_correlations_within_their_error_bound(kernel: str) -> None:
    k = make_kernel(kernel)
    rng = np.random.default_rng(7)
    for d, ls_low in [(2, 0.001), (2, 0.1), (10, 0.05), (10, 1.0)]:
        X1 = rng.random((40, d))
        X2 = np.concatenate([X1 + rng.normal(0, 1e-5, X1.shape), rng.random((500, d))])
        ls = rng.uniform(ls_low, 2 * ls_low, (3, d))
        corr32, error = k.corr_f32(ls, X1, np.clip(X2, 0, 1))
        assert corr32.dtype == np.float32
        deviation = np.abs(corr32 - k(ls, X1, np.clip(X2, 0, 1))).max(axis=(1, 2))
        assert np.all(deviation <= error), (d, ls_low, deviation / error)


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_compiled_ei_gradient_equals_numpy_path(kernel: str) -> None:
    X, y, hypers, Xs = _problem(8)
    acquisition = ExpectedImprovement(GPPosterior(make_kernel(kernel), X, y, hypers), y.min())
    value, grad = acquisition.value_and_grad(Xs)
    reference_value, reference_grad = acquisition.numpy_value_and_grad(Xs)
    np.testing.assert_allclose(value, reference_value, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grad, reference_grad, rtol=1e-8, atol=1e-12)


def test_compiled_ei_of_a_point_does_not_depend_on_its_batch() -> None:
    X, y, hypers, Xs = _problem(8)
    acquisition = ExpectedImprovement(GPPosterior(make_kernel("matern52"), X, y, hypers), y.min())
    value, grad = acquisition.value_and_grad(Xs)  # split across the threads
    one_by_one = [acquisition.value_and_grad(x[None]) for x in Xs]
    np.testing.assert_array_equal(value, [v[0] for v, _ in one_by_one])
    np.testing.assert_array_equal(grad, [g[0] for _, g in one_by_one])


@pytest.mark.parametrize("kernel", ["matern52", "se_ard"])
def test_pairwise_gram_and_lower_covariance_equal_direct_kernel(kernel: str) -> None:
    k = make_kernel(kernel)
    X, _, hypers, _ = _problem(9, n=15)
    terms = k.gram_terms(X)
    direct = k(hypers.ls, X, X)
    np.testing.assert_allclose(k.gram(hypers.ls, terms), direct, rtol=1e-14, atol=1e-15)
    lower = np.tril_indices(len(X))
    cov = k.covariance_lower(hypers.ls[0], terms, 0.7, 0.01)
    expected = 0.7 * direct[0] + 0.01 * np.eye(len(X))
    np.testing.assert_allclose(cov[lower], expected[lower], rtol=1e-14, atol=1e-15)


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
