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
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from functools import cache

import numpy as np
from scipy.special import ndtr
from threadpoolctl import ThreadpoolController

from hpo.gp.model import GPPosterior

INV_SQRT_2PI = float(1.0 / np.sqrt(2.0 * np.pi))
MIN_VAR = 1e-30  # keeps z finite where the latent variance rounds to zero
CHUNK_ELEMENTS = 1 << 16  # S * n * chunk: one chunk's working arrays fit in a core's L2 cache


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


class PosteriorAcquisition(Acquisition):
    """An acquisition computed from a GP posterior, evaluated chunk by chunk."""

    def __init__(self, posterior: GPPosterior) -> None:
        self.posterior = posterior
        n_train = posterior.X.shape[0]
        self.chunk = max(64, CHUNK_ELEMENTS // (posterior.n_samples * n_train))

    def __call__(self, Xs: np.ndarray) -> np.ndarray:
        Xs = np.atleast_2d(Xs)
        if len(Xs) <= self.chunk:
            return self._values(Xs)
        with single_threaded_blas():
            chunks = _executor().map(
                lambda i: self._values(Xs[i : i + self.chunk]), range(0, len(Xs), self.chunk)
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
    """EI averaged over hyperparameter samples (Spearmint ``ei_over_hypers``)."""

    def __init__(self, posterior: GPPosterior, best_f: float) -> None:
        super().__init__(posterior)
        self.best_f = float(best_f)

    def _values(self, Xs: np.ndarray) -> np.ndarray:
        mean, var = self.posterior.mean_var(Xs)
        return expected_improvement(self.best_f, mean, var)[0].mean(axis=0)

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
