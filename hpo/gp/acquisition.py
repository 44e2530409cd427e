"""Acquisition functions: what the acquisition optimizers maximise over the unit cube.

An :class:`Acquisition` maps points ``Xs (m, d)`` to values ``(m,)`` and, for gradient-based
optimizers, to gradients ``(m, d)``. Both provided here integrate over the ``S`` hyperparameter
samples of a :class:`~hpo.gp.model.GPPosterior` by averaging (thesis Eq. 2.17):

* :class:`ExpectedImprovement` — EI of the latent function below the best observed loss
  (thesis Eqs 2.10-2.11; ``sigma^2`` is the latent variance without noise, as Spearmint);
* :class:`NegativePosteriorMean` — ``-mean_s mu_s(x)``, whose maximiser is the posterior-mean
  selection of spec ch2-3 §2.6.

Large candidate sets are processed in chunks, so that the ``(S, n, chunk)`` working arrays stay in
cache, on ``HPO_GP_THREADS`` threads (default: the available cores, at most 4) with BLAS kept
single-threaded meanwhile. Chunks are fixed by the input alone, so results do not depend on the
number of threads.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from functools import cache

import numpy as np
from scipy.special import ndtr
from threadpoolctl import ThreadpoolController

from hpo.gp.model import GPPosterior

INV_SQRT_2PI = float(1.0 / np.sqrt(2.0 * np.pi))
MIN_VAR = 1e-30  # keeps z finite where the latent variance rounds to zero
CHUNK_ELEMENTS = 1 << 18  # S * n * chunk: ~2 MB arrays; measured best (benchmarks/bo_step.py)


@cache
def _executor() -> ThreadPoolExecutor:
    default = min(4, len(os.sched_getaffinity(0)))
    return ThreadPoolExecutor(max_workers=max(1, int(os.environ.get("HPO_GP_THREADS", default))))


@cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_threaded_blas() -> AbstractContextManager:
    """Context in which BLAS runs on one thread.

    The engine's matrices are small (``n <= a few hundred``): multi-threaded BLAS only adds
    synchronisation, which costs milliseconds per call on a busy machine (L-BFGS-B calls BLAS on
    every iteration). Parallelism comes from the chunk threads instead.
    """
    return _blas_controller().limit(limits=1, user_api="blas")


class Acquisition(ABC):
    """A function to maximise over the unit cube, batched over points."""

    @abstractmethod
    def __call__(self, Xs: np.ndarray) -> np.ndarray:
        """Values at ``Xs (m, d)``: ``(m,)``."""

    @abstractmethod
    def value_and_grad(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values ``(m,)`` and gradients ``(m, d)`` at ``Xs (m, d)``."""

    def top_k(self, Xs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices ``(k,)`` of the ``k`` largest values at ``Xs (m, d)``, best first (ties: the
        earliest), and those values ``(k,)``."""
        values = self(Xs)
        top = np.argsort(-values, kind="stable")[:k]
        return top, values[top]


class PosteriorAcquisition(Acquisition):
    """An acquisition computed from a GP posterior, evaluated chunk by chunk."""

    def __init__(self, posterior: GPPosterior) -> None:
        self.posterior = posterior
        n_train = posterior.X.shape[0]
        self.chunk = max(64, CHUNK_ELEMENTS // (posterior.n_samples * n_train))

    def __call__(self, Xs: np.ndarray) -> np.ndarray:
        return self._map(self._values, np.atleast_2d(Xs))

    def _map(self, values: Callable[[np.ndarray], np.ndarray], Xs: np.ndarray) -> np.ndarray:
        """``values`` applied to fixed chunks of ``Xs (m, d)`` on the thread pool: ``(m,)``."""
        if len(Xs) <= self.chunk:
            return values(Xs)
        with single_threaded_blas():
            chunks = _executor().map(
                lambda i: values(Xs[i : i + self.chunk]), range(0, len(Xs), self.chunk)
            )
            return np.concatenate(list(chunks))

    @abstractmethod
    def _values(self, Xs: np.ndarray) -> np.ndarray:
        """Values at one chunk ``Xs (m, d)``: ``(m,)``."""


def expected_improvement(
    best_f: float, mean: np.ndarray, var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EI below ``best_f`` of ``N(mean, var)``, and its derivatives w.r.t. ``mean`` and ``var``.

    All arrays share one shape; ``EI = (best_f - mean) Phi(z) + sigma phi(z)``,
    ``z = (best_f - mean) / sigma``.
    """
    sigma = np.sqrt(np.maximum(var, MIN_VAR))
    gap = best_f - mean
    z = gap / sigma
    cdf = ndtr(z)
    pdf = INV_SQRT_2PI * np.exp(-0.5 * z * z)
    ei = gap * cdf + sigma * pdf
    return ei, -cdf, pdf / (2.0 * sigma)


class ExpectedImprovement(PosteriorAcquisition):
    """EI averaged over hyperparameter samples (Spearmint ``ei_over_hypers``).

    :meth:`top_k` on large candidate sets skips the exact variance (the ``S m n^2`` part of the
    cost) of candidates that provably cannot enter the top ``k``: EI grows with the variance, and
    projecting the whitened cross-covariance on an ``R``-dimensional subspace gives an upper
    bound of the variance at ``S m n R`` cost. The result is the exact top ``k``.
    """

    PILOT = 1024  # candidates scored exactly first; their k-th best value is the pruning threshold
    BASIS = 32  # R, the dimension of the subspace (spanned by the first candidates' covariances)
    SLACK = 1e-12  # relative safety margin of the variance bound against rounding

    def __init__(self, posterior: GPPosterior, best_f: float) -> None:
        super().__init__(posterior)
        self.best_f = float(best_f)

    def _values(self, Xs: np.ndarray) -> np.ndarray:
        mean, var = self.posterior.mean_var(Xs)
        return expected_improvement(self.best_f, mean, var)[0].mean(axis=0)

    def top_k(self, Xs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.posterior.X.shape[0] <= 2 * self.BASIS or len(Xs) <= self.PILOT or k > self.PILOT:
            return super().top_k(Xs, k)
        pilot = self(Xs[: self.PILOT])
        threshold = np.sort(pilot)[-k]
        basis = self._variance_basis(Xs[: self.BASIS])
        rest = self._map(lambda Z: self._pruned_values(Z, basis, threshold), Xs[self.PILOT :])
        values = np.concatenate([pilot, rest])  # -inf where pruned: below the threshold
        top = np.argsort(-values, kind="stable")[:k]
        return top, values[top]

    def _variance_basis(self, refs: np.ndarray) -> np.ndarray:
        """``B (S, R, n)``, orthonormal rows in whitened space: ``|B rho|^2 <= rho' K^-1 rho``."""
        whitened = self.posterior.chol_inv @ self.posterior.cross_corr(refs)  # (S, n, R)
        orthonormal = np.linalg.qr(whitened)[0]  # (S, n, R)
        return orthonormal.transpose(0, 2, 1) @ self.posterior.chol_inv

    def _pruned_values(self, Xs: np.ndarray, basis: np.ndarray, threshold: float) -> np.ndarray:
        posterior = self.posterior
        corr = posterior.cross_corr(Xs)  # (S, n, m)
        mean = posterior.mean_from_corr(corr)
        projected = basis @ corr  # (S, R, m)
        quad_low = np.einsum("srm,srm->sm", projected, projected)
        prior = posterior.prior_var[:, None]
        var_high = prior * (1.0 + self.SLACK) - posterior.hypers.amp2[:, None] ** 2 * quad_low
        bound = expected_improvement(self.best_f, mean, var_high)[0].mean(axis=0)
        keep = bound >= threshold
        values = np.full(len(Xs), -np.inf)
        if keep.any():
            var = posterior.var_from_corr(corr[:, :, keep])
            values[keep] = expected_improvement(self.best_f, mean[:, keep], var)[0].mean(axis=0)
        return values

    def value_and_grad(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean, var, dmean, dvar = self.posterior.mean_var_grad(np.atleast_2d(Xs))
        ei, dei_dmean, dei_dvar = expected_improvement(self.best_f, mean, var)
        grad = dei_dmean[..., None] * dmean + dei_dvar[..., None] * dvar
        return ei.mean(axis=0), grad.mean(axis=0)


class NegativePosteriorMean(PosteriorAcquisition):
    """``-mean_s mu_s(x)``: the sample-averaged latent posterior mean, negated to be maximised."""

    def _values(self, Xs: np.ndarray) -> np.ndarray:
        return -self.posterior.mean(Xs).mean(axis=0)

    def value_and_grad(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean, dmean = self.posterior.mean_grad(np.atleast_2d(Xs))
        return -mean.mean(axis=0), -dmean.mean(axis=0)
