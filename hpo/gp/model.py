"""The GP model: hyperparameter samples, exact posteriors and the marginal likelihood.

Owns the covariance ``amp2 * (rho_l(X, X) + 1e-6 I) + noise * I`` with a constant mean (thesis
§2.1, Eqs 2.2-2.7; Spearmint ``gp.py``), the exact posterior of the latent function for ``S``
hyperparameter samples at once (BoTorch-style batch dimension first), its gradients with respect
to the input, and the log marginal likelihood (thesis Eq. 2.16) that the slice sampler targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from hpo.gp.kernels import Kernel

JITTER = 1e-6  # Spearmint adds 1e-6 * amp2 to the diagonal of every Gram matrix
LOG_2PI = float(np.log(2.0 * np.pi))
MIN_VAR = 1e-30  # keeps z finite where the latent variance rounds to zero


@dataclass(frozen=True)
class Hypers:
    """``S`` samples of the GP hyperparameters ``theta = (mean, amp2, noise, ls)``.

    ``mean``, ``amp2`` (signal variance), ``noise`` (noise variance): ``(S,)``; ``ls``: ``(S, d)``.
    """

    mean: np.ndarray
    amp2: np.ndarray
    noise: np.ndarray
    ls: np.ndarray

    @property
    def n_samples(self) -> int:
        return int(self.mean.shape[0])

    @classmethod
    def stack(cls, samples: list[Hypers]) -> Hypers:
        """Concatenate samples along the batch dimension."""
        return cls(
            mean=np.concatenate([s.mean for s in samples]),
            amp2=np.concatenate([s.amp2 for s in samples]),
            noise=np.concatenate([s.noise for s in samples]),
            ls=np.concatenate([s.ls for s in samples]),
        )


def diagonal_term(amp2: np.ndarray | float, noise: np.ndarray | float) -> np.ndarray | float:
    """What the covariance adds to ``amp2 R`` on its diagonal: ``amp2 1e-6 + noise``."""
    return amp2 * JITTER + noise


def covariance(corr: np.ndarray, amp2: np.ndarray | float, noise: np.ndarray | float) -> np.ndarray:
    """Observation covariance ``amp2 (R + 1e-6 I) + noise I`` from correlations ``R (S, n, n)``."""
    amp2 = np.reshape(amp2, (-1, 1, 1))
    cov = amp2 * corr
    diag = np.einsum("sii->si", cov)
    diag += diagonal_term(amp2[:, :, 0], np.reshape(noise, (-1, 1)))
    return cov


def log_likelihood(cov: np.ndarray, resid: np.ndarray) -> float:
    """Gaussian log density of ``resid (n,)`` under ``N(0, cov (n, n))``; ``-inf`` if not PD.

    The single-sample fast path used inside the slice sampler (raw LAPACK: no argument checks).
    Reads only the lower triangle of ``cov`` and overwrites it when it is Fortran-ordered.
    """
    chol, info = lapack.dpotrf(cov, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        return -np.inf
    return _gaussian_log_density(chol, np.asarray(resid, dtype=float))


@numba.njit(nogil=True, cache=True, fastmath={"contract"})
def _gaussian_log_density(chol: np.ndarray, resid: np.ndarray) -> float:
    """``log N(resid; 0, L L')`` from the lower Cholesky factor ``L`` (column by column: a
    Fortran-ordered factor is read contiguously)."""
    n = resid.size
    z = resid.copy()  # overwritten by L^-1 resid
    quad = 0.0
    log_det = 0.0
    for j in range(n):
        pivot = chol[j, j]
        zj = z[j] / pivot
        quad += zj * zj
        log_det += math.log(pivot)
        for i in range(j + 1, n):
            z[i] -= zj * chol[i, j]
    return -0.5 * quad - log_det - 0.5 * n * LOG_2PI


class GPPosterior:
    """Exact posteriors of the latent function for ``S`` hyperparameter samples.

    ``X (n, d)``: inputs in the unit cube; ``y (n,)``: raw observed losses (not standardised, as
    Spearmint). Predictions are batched: ``(S, m)`` for ``m`` query points.
    """

    def __init__(self, kernel: Kernel, X: np.ndarray, y: np.ndarray, hypers: Hypers) -> None:
        self.kernel = kernel
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.hypers = hypers
        corr = kernel.gram(hypers.ls, kernel.gram_terms(self.X))
        cov = covariance(corr, hypers.amp2, hypers.noise)
        self._chol = np.linalg.cholesky(cov)  # (S, n, n)
        self._resid = self.y[None, :] - hypers.mean[:, None]  # (S, n)
        eye = np.broadcast_to(np.eye(self.X.shape[0]), cov.shape)
        self.chol_inv = sla.solve_triangular(self._chol, eye, lower=True, check_finite=False)
        self._cov_inv = self.chol_inv.transpose(0, 2, 1) @ self.chol_inv  # (S, n, n)
        self._alpha = np.einsum("sij,sj->si", self._cov_inv, self._resid)  # (S, n)
        self.prior_var = hypers.amp2 * (1.0 + JITTER)  # latent variance at any x, (S,)

    @property
    def n_samples(self) -> int:
        return self.hypers.n_samples

    @property
    def cov_inv(self) -> np.ndarray:
        """``K^-1`` per sample, ``(S, n, n)``."""
        return self._cov_inv

    @property
    def alpha(self) -> np.ndarray:
        """``K^-1 (y - mean)`` per sample, ``(S, n)``: the mean is ``mean + amp2 rho' alpha``."""
        return self._alpha

    def cross_corr(self, Xs: np.ndarray) -> np.ndarray:
        """Correlations between the training inputs and ``Xs (m, d)``: ``(S, n, m)``."""
        return self.kernel(self.hypers.ls, self.X, Xs)

    def mean_from_corr(self, corr: np.ndarray) -> np.ndarray:
        """Latent mean ``(S, m)`` from cross-correlations ``corr (S, n, m)``."""
        amp2 = self.hypers.amp2[:, None]
        return self.hypers.mean[:, None] + amp2 * np.einsum("snm,sn->sm", corr, self._alpha)

    def var_from_corr(self, corr: np.ndarray, solved: np.ndarray | None = None) -> np.ndarray:
        """Latent variance ``(S, m)`` from cross-correlations ``corr (S, n, m)`` (and
        ``solved = K^-1 corr`` when the caller has it already)."""
        solved = self._cov_inv @ corr if solved is None else solved
        quad = np.einsum("snm,snm->sm", solved, corr)
        return np.maximum(self.prior_var[:, None] - self.hypers.amp2[:, None] ** 2 * quad, 0.0)

    def mean_var(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Latent posterior mean and variance (no noise) at ``Xs (m, d)``: two ``(S, m)`` arrays."""
        mean, var, _ = self._predict(Xs, with_var=True)
        return mean, var

    def mean(self, Xs: np.ndarray) -> np.ndarray:
        """Latent posterior mean at ``Xs (m, d)``: ``(S, m)`` (cheaper than :meth:`mean_var`)."""
        return self._predict(Xs, with_var=False)[0]

    def _predict(
        self, Xs: np.ndarray, with_var: bool
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        corr = self.cross_corr(Xs)  # (S, n, m)
        return self.mean_from_corr(corr), self.var_from_corr(corr) if with_var else None, corr

    def mean_var_grad(
        self, Xs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Mean ``(S, m)``, variance ``(S, m)`` and their gradients ``(S, m, d)`` at ``Xs``."""
        corr = self.cross_corr(Xs)  # (S, n, m)
        solved = self._cov_inv @ corr
        mean, var = self.mean_from_corr(corr), self.var_from_corr(corr, solved)
        amp2 = self.hypers.amp2[:, None, None]
        W = np.stack([np.broadcast_to(self._alpha[:, :, None], corr.shape), solved])
        dmean, dquad = self.kernel.vjp_x2(self.hypers.ls, self.X, Xs, W)  # 2 x (S, m, d)
        return mean, var, amp2 * dmean, -2.0 * amp2**2 * dquad

    def mean_grad(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``(S, m)`` and its input gradient ``(S, m, d)`` at ``Xs (m, d)``."""
        mean = self.mean(Xs)
        W = np.broadcast_to(self._alpha[:, :, None], (*self._alpha.shape, Xs.shape[0]))
        dmean = self.kernel.vjp_x2(self.hypers.ls, self.X, Xs, W)
        return mean, self.hypers.amp2[:, None, None] * dmean

    def log_likelihood(self) -> np.ndarray:
        """Log marginal likelihood of ``y`` for each sample (thesis Eq. 2.16): ``(S,)``."""
        n = self.X.shape[0]
        fit = np.einsum("sn,sn->s", self._resid, self._alpha)
        logdet = np.log(np.einsum("sii->si", self._chol)).sum(axis=1)
        return -0.5 * fit - logdet - 0.5 * n * LOG_2PI


class BlockGPPosterior(GPPosterior):
    """:class:`GPPosterior` for a kernel whose Gram matrix is block diagonal
    (:meth:`~hpo.gp.kernels.Kernel.blocks`, e.g. the conditional kernel, thesis Eq. 5.10).

    Factors each block on its own (thesis Eq. 5.11: ``O(sum_b m_b^3)`` instead of ``O(n^3)``)
    and predicts a query point from the training points of its own block only (zero
    correlation with the others); a point of a block without training points gets the prior.
    The dense ``K^-1``, ``chol_inv`` and ``alpha`` are assembled from the blocks, so every
    :class:`GPPosterior` method works unchanged; :meth:`mean_var` and :meth:`mean` use the
    blocks. Equal to :class:`GPPosterior` with the same kernel up to rounding (tested).
    """

    def __init__(
        self,
        kernel: Kernel,
        X: np.ndarray,
        y: np.ndarray,
        hypers: Hypers,
        blocks: list[np.ndarray] | None = None,
    ) -> None:
        self.kernel = kernel
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.hypers = hypers
        blocks = kernel.blocks(self.X) if blocks is None else blocks
        if blocks is None:
            raise ValueError(f"{type(kernel).__name__} has no block structure")
        n, S = self.X.shape[0], hypers.n_samples
        self._resid = self.y[None, :] - hypers.mean[:, None]  # (S, n)
        self._chol = np.zeros((S, n, n))
        self.chol_inv = np.zeros((S, n, n))
        self._cov_inv = np.zeros((S, n, n))
        self._alpha = np.zeros((S, n))
        for index in blocks:
            corr = kernel.gram(hypers.ls, kernel.gram_terms(self.X[index]))
            chol = np.linalg.cholesky(covariance(corr, hypers.amp2, hypers.noise))
            eye = np.broadcast_to(np.eye(len(index)), chol.shape)
            chol_inv = sla.solve_triangular(chol, eye, lower=True, check_finite=False)
            cov_inv = chol_inv.transpose(0, 2, 1) @ chol_inv
            cells = np.ix_(np.arange(S), index, index)
            self._chol[cells], self.chol_inv[cells], self._cov_inv[cells] = chol, chol_inv, cov_inv
            self._alpha[:, index] = np.einsum("sij,sj->si", cov_inv, self._resid[:, index])
        self.prior_var = hypers.amp2 * (1.0 + JITTER)

    def _blockwise(self, Xs: np.ndarray, with_var: bool) -> tuple[np.ndarray, np.ndarray]:
        """Mean and (if ``with_var``) variance ``(S, m)`` at ``Xs (m, d)``, block by block."""
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        n, hypers = self.X.shape[0], self.hypers
        mean = np.repeat(hypers.mean[:, None], len(Xs), axis=1)
        var = np.repeat(self.prior_var[:, None], len(Xs), axis=1)
        groups = self.kernel.blocks(np.concatenate([self.X, Xs]))
        for group in groups if groups is not None else [np.arange(n + len(Xs))]:
            train, query = group[group < n], group[group >= n] - n
            if len(train) == 0 or len(query) == 0:
                continue
            corr = self.kernel(hypers.ls, self.X[train], Xs[query])  # (S, n_b, m_b)
            amp2 = hypers.amp2[:, None]
            mean[:, query] += amp2 * np.einsum("snm,sn->sm", corr, self._alpha[:, train])
            if with_var:
                solved = self._cov_inv[np.ix_(np.arange(len(amp2)), train, train)] @ corr
                quad = np.einsum("snm,snm->sm", solved, corr)
                var[:, query] = np.maximum(var[:, query] - amp2**2 * quad, 0.0)
        return mean, var

    def mean_var(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._blockwise(Xs, with_var=True)

    def mean(self, Xs: np.ndarray) -> np.ndarray:
        return self._blockwise(Xs, with_var=False)[0]


def make_posterior(kernel: Kernel, X: np.ndarray, y: np.ndarray, hypers: Hypers) -> GPPosterior:
    """The posterior the BO loop uses: :class:`BlockGPPosterior` for a kernel with a block
    structure at ``X``, else the dense :class:`GPPosterior` (Chapter 3's kernels)."""
    blocks = kernel.blocks(np.asarray(X, dtype=float))
    if blocks is None:
        return GPPosterior(kernel, X, y, hypers)
    return BlockGPPosterior(kernel, X, y, hypers, blocks)
