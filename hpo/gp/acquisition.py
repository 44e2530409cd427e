"""Acquisition functions: what the acquisition optimizers maximise over the unit cube.

An :class:`Acquisition` maps points ``Xs (m, d)`` to values ``(m,)`` and, for gradient-based
optimizers, to gradients ``(m, d)``. Both provided here integrate over the ``S`` hyperparameter
samples of a :class:`~hpo.gp.model.GPPosterior` by averaging (thesis Eq. 2.17):

* :class:`ExpectedImprovement` — EI of the latent function below the best observed loss
  (thesis Eqs 2.10-2.11; ``sigma^2`` is the latent variance without noise, as Spearmint);
* :class:`NegativePosteriorMean` — ``-mean_s mu_s(x)``, whose maximiser is the posterior-mean
  selection of thesis §3.4.1.

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
from typing import Any

import numpy as np
from scipy.special import ndtr
from threadpoolctl import ThreadpoolController

from hpo.gp import fused
from hpo.gp.elementwise import UNIT_ROUNDOFF_F32
from hpo.gp.model import MIN_VAR, GPPosterior

INV_SQRT_2PI = float(1.0 / np.sqrt(2.0 * np.pi))
CHUNK_ELEMENTS = 1 << 18  # S * n * chunk: ~2 MB arrays; measured best (benchmarks/bo_step.py)


@cache
def _n_threads() -> int:
    default = min(4, len(os.sched_getaffinity(0)))
    return max(1, int(os.environ.get("HPO_GP_THREADS", default)))


@cache
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_n_threads())


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

    def top_k(
        self, Xs: np.ndarray, k: int, hints: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Indices ``(k,)`` of the ``k`` largest values at ``Xs (m, d)``, best first (ties: the
        earliest), and those values ``(k,)``. ``hints``: indices of candidates likely to be
        among the best (the previous iteration's); they may speed the search up, never change
        its result."""
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

    def _map(self, values: Callable, Xs: np.ndarray, chunk: int | None = None) -> Any:
        """``values`` applied to fixed chunks of ``Xs (m, d)`` (of ``chunk`` points, default
        :attr:`chunk`) on the thread pool, the results concatenated: ``(m, ...)``, or a tuple of
        such arrays when ``values`` returns tuples."""
        chunk = chunk or self.chunk
        if len(Xs) <= chunk:
            return values(Xs)
        with single_threaded_blas():
            chunks = _executor().map(lambda i: values(Xs[i : i + chunk]), range(0, len(Xs), chunk))
            results = list(chunks)
        if isinstance(results[0], tuple):
            return tuple(np.concatenate(parts) for parts in zip(*results, strict=True))
        return np.concatenate(results)

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

    :meth:`top_k` on large candidate sets returns the exact top ``k`` while computing the exact
    EI (whose variance costs ``S n^2`` per candidate) of few candidates. Two upper bounds of EI
    do the sorting out, both from the projection of the whitened cross-covariance on the
    subspace spanned by the first candidates' (:func:`variance_basis`): EI grows with the
    variance, and the projection gives an upper bound of the variance at ``S n R`` cost.

    1. The ``hints`` (the previous iteration's best candidates) are scored exactly.
    2. Every candidate gets a float32 upper bound (:class:`_Screen`, with the rounding error
       bounded; its correlations are about 7 times cheaper than float64 ones).
    3. The ``FIRST`` unscored candidates with the highest bounds are scored exactly; the
       ``k``-th best exact value so far is the threshold, and every candidate whose bound is
       below it is out.
    4. The others get a float64 bound (exact mean and projection) and an exact score only if
       that bound reaches the threshold too.

    A candidate dropped at either step has an EI below the ``k``-th best, so the result is exact
    whatever the hints. Late in a run the best EI is tiny and the threshold from step 3 alone
    poor: the hints keep it near the final one. The float64 bound does the work where the
    float32 rounding bound is loose (ill-conditioned ``K``, large ``alpha``).
    """

    SCREEN_MIN = 2048  # smaller candidate sets are scored exactly
    FIRST = 64  # candidates with the highest bounds, scored exactly to set the threshold
    BASIS = 32  # R of both bounds (R = 8 screens 10 times fewer candidates out late in a run)
    SHORT_PREFIX = 8  # the screen also bounds with the first 8 rows: less rounding error
    SCREEN_CHUNK = 1 << 20  # S * n * chunk float32 values per screening chunk (4 MB)
    SLACK = 1e-12  # relative margin of the float64 variance bound against rounding
    MIN_PART = 2  # points per thread when value_and_grad splits a batch

    def __init__(self, posterior: GPPosterior, best_f: float) -> None:
        super().__init__(posterior)
        self.best_f = float(best_f)
        supported = fused.CompiledEI.supports(posterior.kernel)  # else the numpy gradient
        self._compiled = fused.CompiledEI(posterior, self.best_f) if supported else None

    def _values(self, Xs: np.ndarray) -> np.ndarray:
        mean, var = self.posterior.mean_var(Xs)
        return expected_improvement(self.best_f, mean, var)[0].mean(axis=0)

    def top_k(
        self, Xs: np.ndarray, k: int, hints: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if len(Xs) < self.SCREEN_MIN or k > self.FIRST:
            return super().top_k(Xs, k)
        posterior = self.posterior
        values = np.full(len(Xs), -np.inf)
        scored = np.zeros(len(Xs), dtype=bool)

        def score(indices: np.ndarray) -> None:
            values[indices] = self(Xs[indices])
            scored[indices] = True

        if hints is not None and len(hints) > 0:
            score(np.unique(hints))
        basis = variance_basis(posterior, Xs[: self.BASIS])
        screen = _Screen(posterior, basis, prefixes=(self.SHORT_PREFIX,))
        chunk = max(64, self.SCREEN_CHUNK // (posterior.n_samples * posterior.X.shape[0]))
        bounds = self._map(lambda Z: screen.ei_upper_bound(Z, self.best_f), Xs, chunk)
        score(np.argsort(-np.where(scored, -np.inf, bounds), kind="stable")[: self.FIRST])
        threshold = np.sort(values[scored])[-k]
        rest = np.flatnonzero(~scored & (bounds >= threshold))
        values[rest] = self._map(lambda Z: self._pruned_values(Z, basis, threshold), Xs[rest])
        top = np.argsort(-values, kind="stable")[:k]
        return top, values[top]

    def _pruned_values(self, Xs: np.ndarray, basis: np.ndarray, threshold: float) -> np.ndarray:
        """Exact EI at ``Xs`` where the float64 bound reaches ``threshold``, ``-inf`` elsewhere."""
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
        Xs = np.atleast_2d(Xs)
        if self._compiled is None:
            return self.numpy_value_and_grad(Xs)
        # the L-BFGS-B runs' batches: a point's result does not depend on its batch, so split
        # them across the threads
        parts = max(1, min(_n_threads(), len(Xs) // self.MIN_PART))
        return self._map(self._compiled, Xs, chunk=-(-len(Xs) // parts))

    def numpy_value_and_grad(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`value_and_grad` from the posterior's batched numpy gradients (any kernel)."""
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


def variance_basis(posterior: GPPosterior, refs: np.ndarray) -> np.ndarray:
    """``B (S, R, n)`` with orthonormal rows in whitened space, ``R = min(len(refs), n)``:
    ``|B rho|^2 <= rho' K^-1 rho`` for any cross-correlations ``rho`` (equality on the span of
    the references' ``rho``). Its first ``r`` rows are the basis of the first ``r`` references."""
    whitened = posterior.chol_inv @ posterior.cross_corr(refs)  # (S, n, R)
    orthonormal = np.linalg.qr(whitened)[0]  # (S, n, R)
    return orthonormal.transpose(0, 2, 1) @ posterior.chol_inv


class _Screen:
    """An upper bound of sample-averaged EI, computed in float32 (the screening of ``top_k``).

    EI falls with the mean and grows with the variance, so EI at a lower bound of the mean and an
    upper bound of the variance bounds it from above. Both come from float32 correlations whose
    error the kernel bounds (:meth:`~hpo.gp.kernels.Kernel.corr_f32`), ``eps`` per entry; float32
    dot products of length ``n`` add at most ``(n + 2) u`` per unit of coefficient (``u = 2^-24``,
    correlations ``<= 1``), so with ``err = eps + (n + 2) u``:

    * mean: ``m + amp2 alpha . rho``, off by at most ``amp2 |alpha|_1 err``;
    * variance: ``amp2 (1 + 1e-6) - amp2^2 rho' K^-1 rho``, and ``|B rho|^2 <= rho' K^-1 rho``
      for the rows ``B (R, n)`` of :func:`variance_basis`; the float32 ``|B rho|`` is off by at
      most ``|(|B_r|_1)_r|_2 err``.

    The variance bound costs ``n R`` per candidate and sample instead of the exact ``n^2``. Every
    leading block of rows (``prefixes``) gives a lower bound of ``|B rho|``; the largest is used.
    More rows capture more of ``rho' K^-1 rho`` but add rounding error, which dominates when
    ``K`` is ill-conditioned (low dimensions, many points): the short prefix wins there.
    """

    SLACK = 1e-9  # relative margin for the float64 rounding of the bounds themselves

    def __init__(
        self, posterior: GPPosterior, basis: np.ndarray, prefixes: tuple[int, ...] = (8,)
    ) -> None:
        self.posterior = posterior
        n, rank = posterior.X.shape[0], basis.shape[1]
        alpha = posterior.alpha
        self.alpha = alpha[:, None, :].astype(np.float32)  # (S, 1, n)
        self.basis = basis.astype(np.float32)  # (S, R, n)
        self.dot_error = n + 2.0  # in units of u per unit of coefficient
        self.alpha_l1 = np.abs(alpha).sum(axis=1)  # (S,)
        self.prefixes = sorted({min(r, rank) for r in prefixes} | {rank})
        row_l1 = np.abs(basis).sum(axis=2)  # (S, R)
        self.basis_l1 = [np.linalg.norm(row_l1[:, :r], axis=1) for r in self.prefixes]  # (S,)
        # float32 sum of r squares, then float64 square root: relative error below (r + 2) u
        self.norm_rounding = [(r + 2.0) * UNIT_ROUNDOFF_F32 + self.SLACK for r in self.prefixes]

    def ei_upper_bound(self, Xs: np.ndarray, best_f: float) -> np.ndarray:
        """Upper bound ``(m,)`` of the sample-averaged EI below ``best_f`` at ``Xs (m, d)``."""
        posterior = self.posterior
        hypers = posterior.hypers
        corr, eps = posterior.kernel.corr_f32(hypers.ls, posterior.X, Xs)  # (S, n, m), (S,)
        err = (eps + self.dot_error * UNIT_ROUNDOFF_F32)[:, None]  # (S, 1)
        amp2 = hypers.amp2[:, None]
        dot = (self.alpha @ corr)[:, 0, :].astype(float)  # (S, m)
        mean_low = hypers.mean[:, None] + amp2 * (dot - self.alpha_l1[:, None] * err)
        projected = self.basis @ corr  # (S, R, m)
        norm_low = np.zeros(mean_low.shape)
        squares = np.zeros(mean_low.shape, dtype=np.float32)  # of the rows up to the prefix
        start = 0
        for r, basis_l1, rounding in zip(
            self.prefixes, self.basis_l1, self.norm_rounding, strict=True
        ):
            block = projected[:, start:r]
            squares += np.einsum("srm,srm->sm", block, block)
            norm = np.sqrt(squares.astype(float)) * (1.0 - rounding)
            np.maximum(norm_low, norm - basis_l1[:, None] * err, out=norm_low)
            start = r
        var_high = posterior.prior_var[:, None] * (1.0 + self.SLACK) - amp2**2 * norm_low**2
        bound = expected_improvement(best_f, mean_low, var_high)[0].mean(axis=0)
        return bound * (1.0 + self.SLACK)
