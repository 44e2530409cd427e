"""Compiled expected improvement with its gradient: the inner loop of the L-BFGS-B refinement.

:meth:`hpo.gp.acquisition.ExpectedImprovement.value_and_grad` is called some 10-40 times per BO
iteration on the batch of points that the unfinished L-BFGS-B runs ask for
(:class:`~hpo.gp.acquisition_optimizers.LockstepLBFGSB`). In numpy each call is some forty small
array operations, dominated by their overhead; here it is one compiled pass per sample: the
correlations ``rho_i`` between each point and the ``n`` training inputs and their derivatives,
``v = K^-1 rho``, the latent mean ``m + amp2 alpha . rho`` and variance
``amp2 (1 + 1e-6) - amp2^2 rho . v``, EI and, by the chain rule,
``dEI/dx = sum_i rho'_i dt_i/dx (dEI/dmean amp2 alpha_i - 2 dEI/dvar amp2^2 v_i)``.
Samples are the outer loop, so each sample's ``K^-1`` is read once per batch, and every
point's result is independent of the batch it came in (no BLAS, fixed summation orders).

Only for kernels of the scaled squared distance (:class:`~hpo.gp.kernels.ScaledDistanceKernel`,
profile ids of :mod:`hpo.gp.elementwise`); the numpy path in :mod:`hpo.gp.model` stays the
reference, and ``tests/test_gp_model.py`` checks the two agree.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from hpo.gp.elementwise import MATERN52, PROFILES, exp_neg_scalar
from hpo.gp.kernels import Kernel, ScaledDistanceKernel
from hpo.gp.model import MIN_VAR, GPPosterior

_JIT = {"nogil": True, "cache": True, "fastmath": {"contract"}}
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


@numba.njit(nogil=True, cache=True, fastmath={"contract", "reassoc"})
def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a . b``, reassociated so that it runs in vector lanes (a chain of scalar additions
    costs one floating-point latency per term)."""
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


@numba.njit(nogil=True, cache=True, fastmath={"contract", "reassoc"})
def _sum(a: np.ndarray) -> float:
    """Sum of ``a``, reassociated like :func:`_dot`."""
    total = 0.0
    for i in range(a.size):
        total += a[i]
    return total


@numba.njit(**_JIT)
def _ei_value_and_grad(
    profile: int,
    X_t: np.ndarray,
    Z: np.ndarray,
    inv_ls2: np.ndarray,
    mean: np.ndarray,
    amp2: np.ndarray,
    prior_var: np.ndarray,
    alpha: np.ndarray,
    cov_inv: np.ndarray,
    best_f: float,
    out_value: np.ndarray,
    out_grad: np.ndarray,
) -> None:
    dim, n = X_t.shape
    n_samples = mean.shape[0]
    m = Z.shape[0]
    corr = np.empty((m, n))
    slope = np.empty((m, n))  # d rho / d t
    solved = np.empty((m, n))  # K^-1 rho
    weight = np.empty(n)
    out_value[:] = 0.0
    out_grad[:, :] = 0.0
    # samples outer: the points share each sample's K^-1 (n^2 values) while it is in cache
    for s in range(n_samples):
        for j in range(m):
            t = corr[j]
            t[:] = 0.0
            for q in range(dim):
                w = inv_ls2[s, q]
                z = Z[j, q]
                for i in range(n):
                    diff = z - X_t[q, i]
                    t[i] += diff * diff * w
            for i in range(n):
                if profile == MATERN52:
                    root = math.sqrt(t[i])
                    decay = exp_neg_scalar(root)
                    slope[j, i] = -decay * (1.0 + root) * (1.0 / 6.0)
                    corr[j, i] = decay * (1.0 + root + t[i] * (1.0 / 3.0))
                else:
                    corr[j, i] = exp_neg_scalar(t[i])
                    slope[j, i] = -corr[j, i]
        # K^-1 is symmetric: accumulate its rows (vectorises). Not BLAS: its result for one point
        # would depend on how many points share the call
        solved[:, :] = 0.0
        for b in range(n):
            row = cov_inv[s, b]
            for j in range(m):
                c = corr[j, b]
                out = solved[j]
                for a in range(n):
                    out[a] += row[a] * c
        for j in range(m):
            mu = mean[s] + amp2[s] * _dot(alpha[s], corr[j])
            var = max(prior_var[s] - amp2[s] * amp2[s] * _dot(corr[j], solved[j]), 0.0)
            sigma = math.sqrt(max(var, MIN_VAR))
            gap = best_f - mu
            zscore = gap / sigma
            cdf = 0.5 * math.erfc(-zscore * _INV_SQRT_2)
            pdf = _INV_SQRT_2PI * math.exp(-0.5 * zscore * zscore)
            out_value[j] += gap * cdf + sigma * pdf
            d_mean = -cdf * amp2[s]
            d_var = -2.0 * amp2[s] * amp2[s] * pdf / (2.0 * sigma)
            for i in range(n):
                weight[i] = 2.0 * slope[j, i] * (d_mean * alpha[s, i] + d_var * solved[j, i])
            total_weight = _sum(weight)
            for q in range(dim):
                # sum_i weight_i (z_q - x_iq), as z_q sum_i weight_i - weight . x_q
                out_grad[j, q] += (Z[j, q] * total_weight - _dot(weight, X_t[q])) * inv_ls2[s, q]
    out_value /= n_samples
    out_grad /= n_samples


class CompiledEI:
    """Sample-averaged EI below ``best_f`` and its gradient under ``posterior``, whose arrays are
    prepared once. Only for :class:`~hpo.gp.kernels.ScaledDistanceKernel` kernels
    (:meth:`supports`)."""

    def __init__(self, posterior: GPPosterior, best_f: float) -> None:
        kernel, hypers = posterior.kernel, posterior.hypers
        if not self.supports(kernel):
            raise TypeError(f"no compiled EI for {type(kernel).__name__}")
        arrays = (
            posterior.X.T,
            kernel.scale / hypers.ls**2,
            hypers.mean,
            hypers.amp2,
            posterior.prior_var,
            posterior.alpha,
            posterior.cov_inv,
        )
        contiguous = [np.ascontiguousarray(a, dtype=float) for a in arrays]
        self._args = (kernel.profile_id, *contiguous, float(best_f))

    @staticmethod
    def supports(kernel: Kernel) -> bool:
        """Whether ``kernel`` has a compiled profile here."""
        return isinstance(kernel, ScaledDistanceKernel) and kernel.profile_id in PROFILES

    def __call__(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values ``(m,)`` and gradients ``(m, d)`` at ``Z (m, d)``."""
        Z = np.ascontiguousarray(Z, dtype=float)
        value = np.empty(Z.shape[0])
        grad = np.empty(Z.shape)
        profile, X_t, *arrays, best_f = self._args
        _ei_value_and_grad(profile, X_t, Z, *arrays, best_f, value, grad)
        return value, grad
