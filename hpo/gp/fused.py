"""Compiled expected improvement with its gradient: the inner loop of the L-BFGS-B refinement.

:meth:`hpo.gp.acquisition.ExpectedImprovement.value_and_grad` is called some 10-20 times per
refined start and BO iteration, on one point at a time. In numpy each call is some forty small
array operations, dominated by their overhead; here it is one compiled pass per sample: the
correlations ``rho_i`` between the point and the ``n`` training inputs and their derivatives,
``v = K^-1 rho``, the latent mean ``m + amp2 alpha . rho`` and variance
``amp2 (1 + 1e-6) - amp2^2 rho . v``, EI and, by the chain rule,
``dEI/dx = sum_i rho'_i dt_i/dx (dEI/dmean amp2 alpha_i - 2 dEI/dvar amp2^2 v_i)``.

Only for kernels of the scaled squared distance (:class:`~hpo.gp.kernels.ScaledDistanceKernel`,
profile ids of :mod:`hpo.gp.elementwise`); the numpy path in :mod:`hpo.gp.model` stays the
reference, and ``tests/test_gp_model.py`` checks the two agree.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from hpo.gp.elementwise import MATERN52, PROFILES
from hpo.gp.kernels import Kernel, ScaledDistanceKernel
from hpo.gp.model import MIN_VAR, GPPosterior

_JIT = {"nogil": True, "cache": True, "fastmath": {"contract"}}
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


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
    corr = np.empty(n)
    slope = np.empty(n)  # d rho / d t
    t = np.empty(n)
    solved = np.empty(n)
    weight = np.empty(n)
    out_value[:] = 0.0
    out_grad[:, :] = 0.0
    for j in range(Z.shape[0]):
        for s in range(n_samples):
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
                    decay = math.exp(-root)
                    corr[i] = decay * (1.0 + root + t[i] * (1.0 / 3.0))
                    slope[i] = -decay * (1.0 + root) * (1.0 / 6.0)
                else:
                    corr[i] = math.exp(-t[i])
                    slope[i] = -corr[i]
            solved[:] = 0.0
            for b in range(n):  # K^-1 is symmetric: accumulate its columns (vectorises)
                c = corr[b]
                for a in range(n):
                    solved[a] += cov_inv[s, b, a] * c
            dot_alpha = 0.0
            quad = 0.0
            for i in range(n):
                dot_alpha += alpha[s, i] * corr[i]
                quad += corr[i] * solved[i]
            mu = mean[s] + amp2[s] * dot_alpha
            var = max(prior_var[s] - amp2[s] * amp2[s] * quad, 0.0)
            sigma = math.sqrt(max(var, MIN_VAR))
            gap = best_f - mu
            zscore = gap / sigma
            cdf = 0.5 * math.erfc(-zscore * _INV_SQRT_2)
            pdf = _INV_SQRT_2PI * math.exp(-0.5 * zscore * zscore)
            out_value[j] += gap * cdf + sigma * pdf
            d_mean = -cdf * amp2[s]
            d_var = -2.0 * amp2[s] * amp2[s] * pdf / (2.0 * sigma)
            for i in range(n):
                weight[i] = 2.0 * slope[i] * (d_mean * alpha[s, i] + d_var * solved[i])
            for q in range(dim):
                acc = 0.0
                z = Z[j, q]
                for i in range(n):
                    acc += weight[i] * (z - X_t[q, i])
                out_grad[j, q] += acc * inv_ls2[s, q]
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
