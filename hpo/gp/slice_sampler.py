"""Slice sampling of the GP hyperparameters, as Spearmint's ``GPEIOptChooser`` does it.

Owns the generic slice sampler (Spearmint ``util.slice_sample``: Neal 2003, step-out and shrink,
along a random direction or component-wise), the hyperparameter priors, and :class:`HyperChain`,
the Markov chain over ``theta = (mean, amp2, noise, ls)`` that is burnt in once per optimisation
run and then continued, ``n`` samples per BO iteration (Spearmint's ``sample_hypers``, thesis §2.4):

* joint slice sample of ``(mean, amp2, noise)`` along a random direction, target = GP log
  likelihood + horseshoe(0.1) on ``noise`` + log-normal(0, 1) on ``amp2``, ``mean`` restricted
  to ``[min y, max y]``;
* component-wise slice sample of the length-scales in random order, target = GP log likelihood
  with a top-hat prior on ``[0, 2]``.

For a kernel with a block-diagonal Gram matrix (:meth:`~hpo.gp.kernels.Kernel.blocks`, the
conditional kernel) the likelihood is the sum of the blocks' (:class:`BlockLikelihood`), and a
block whose points do not vary along a dimension keeps its value while that length-scale is
sampled (thesis §5.4.1: only the block that changed is refactored).

Priors: :class:`SpearmintPriors` (Chapters 2-4, the default) and :class:`LogNormalHorseshoePriors`
(Chapter 5, thesis §5.5).

With ``log_hypers`` the joint update runs in ``(mean, log amp2, log noise)`` (same target, with
the log-Jacobian): not Spearmint, but it mixes where Spearmint's raw update freezes (small noise).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpo.gp.kernels import Kernel
from hpo.gp.model import JITTER, LOG_2PI, Hypers, covariance, diagonal_term, log_likelihood

LogDensity = Callable[[np.ndarray], float]


def slice_sample(
    x0: np.ndarray,
    logprob: LogDensity,
    rng: np.random.Generator,
    sigma: float = 1.0,
    step_out: bool = True,
    max_steps_out: int = 1000,
    compwise: bool = False,
) -> np.ndarray:
    """One slice-sampling transition from ``x0 (k,)`` leaving ``exp(logprob)`` invariant.

    ``compwise=False``: one update along a uniformly random direction; ``True``: one update per
    coordinate, in random order. The initial bracket of width ``sigma`` is placed at random
    around the current point and stepped out at most ``max_steps_out`` times on each side.
    """
    x = np.array(x0, dtype=float, ndmin=1)
    if not compwise:
        direction = rng.standard_normal(x.shape[0])
        return _direction_slice(
            x, direction / np.linalg.norm(direction), logprob, rng, sigma, step_out, max_steps_out
        )[0]
    value = None
    for d in rng.permutation(x.shape[0]):
        direction = np.zeros(x.shape[0])
        direction[d] = 1.0
        x, value = _direction_slice(
            x, direction, logprob, rng, sigma, step_out, max_steps_out, value_at_x0=value
        )
    return x


def _direction_slice(
    x0: np.ndarray,
    direction: np.ndarray,
    logprob: LogDensity,
    rng: np.random.Generator,
    sigma: float,
    step_out: bool,
    max_steps_out: int,
    value_at_x0: float | None = None,
) -> tuple[np.ndarray, float]:
    """One update along ``direction``: the new point and its log density. ``value_at_x0``:
    ``logprob(x0)`` when the caller has it (the previous coordinate's accepted point), saving
    one evaluation; the result is the same, as the evaluation would be of the same point."""

    def line(z: float) -> float:
        return logprob(x0 + z * direction)

    upper = sigma * rng.random()
    lower = upper - sigma
    threshold = np.log(rng.random()) + (line(0.0) if value_at_x0 is None else value_at_x0)
    if step_out:
        steps = 0
        while line(lower) > threshold and steps < max_steps_out:
            steps += 1
            lower -= sigma
        steps = 0
        while line(upper) > threshold and steps < max_steps_out:
            steps += 1
            upper += sigma
    while True:
        z = (upper - lower) * rng.random() + lower
        value = line(z)
        if np.isnan(value):
            raise FloatingPointError(f"slice sampler got NaN log density at {x0 + z * direction}")
        if value > threshold:
            return x0 + z * direction, value
        if z < 0:
            lower = z
        elif z > 0:
            upper = z
        else:
            raise RuntimeError("slice sampler shrank to zero")


class Priors(ABC):
    """Log prior densities (up to constants) of the GP hyperparameters; ``-inf`` off support."""

    @abstractmethod
    def log_joint(self, mean: float, amp2: float, noise: float, y: np.ndarray) -> float:
        """Prior of the jointly sampled ``(mean, amp2, noise)`` given the observations ``y``."""

    @abstractmethod
    def log_ls(self, ls: np.ndarray) -> float:
        """Prior of the length-scales ``ls (d,)``."""


@dataclass(frozen=True)
class SpearmintPriors(Priors):
    """GPEIOptChooser's priors: horseshoe on noise, log-normal on amp2, top-hat on length-scales,
    mean inside the range of the observations (Spearmint, as in the author's code)."""

    noise_scale: float = 0.1
    amp2_scale: float = 1.0
    max_ls: float = 2.0

    def log_joint(self, mean: float, amp2: float, noise: float, y: np.ndarray) -> float:
        if not y.min() <= mean <= y.max() or amp2 <= 0 or noise <= 0:
            return -np.inf
        horseshoe = np.log(np.log1p((self.noise_scale / noise) ** 2))
        return float(horseshoe - 0.5 * (np.log(amp2) / self.amp2_scale) ** 2)

    def log_ls(self, ls: np.ndarray) -> float:
        return 0.0 if ls.min() > 0 and ls.max() <= self.max_ls else -np.inf


def log_normal_logpdf(x: float | np.ndarray, scale: float) -> float:
    """Summed log density of ``LogNormal(0, scale)`` (``log x ~ N(0, scale^2)``) at ``x > 0``."""
    log_x = np.log(x)
    return float(np.sum(-log_x - 0.5 * (log_x / scale) ** 2 - np.log(scale * np.sqrt(2 * np.pi))))


@dataclass(frozen=True)
class LogNormalHorseshoePriors(Priors):
    """Chapter 5's priors (thesis §5.5): log-normal(0, ``ls_scale``) on every
    length-scale, log-normal(0, ``amp_scale``) on the amplitude ``sigma_f``, horseshoe with scale
    ``noise_scale`` on the noise ``sigma_n``, in Spearmint's form
    ``log log(1 + (noise_scale / sigma_n)^2)``; the mean within ``[min y, max y]`` as Spearmint.

    The thesis puts the priors on the standard deviations ``sigma_f``, ``sigma_n``; the chain
    samples the variances ``amp2 = sigma_f^2`` and ``noise = sigma_n^2``, so the densities carry
    the Jacobian ``d sigma / d var = 1 / (2 sigma)`` (for ``amp2`` this is log-normal(0,
    2 ``amp_scale``)). The log-normal terms are normalised (comparable to ``scipy.stats``); the
    horseshoe has no closed form, so its term is Spearmint's, up to a constant.
    """

    ls_scale: float = 1.0
    amp_scale: float = 1.0
    noise_scale: float = 1.0

    def log_joint(self, mean: float, amp2: float, noise: float, y: np.ndarray) -> float:
        if not y.min() <= mean <= y.max() or amp2 <= 0 or noise <= 0:
            return -np.inf
        sigma_f, sigma_n = np.sqrt(amp2), np.sqrt(noise)
        amplitude = log_normal_logpdf(sigma_f, self.amp_scale) - np.log(2.0 * sigma_f)
        horseshoe = np.log(np.log1p((self.noise_scale / sigma_n) ** 2)) - np.log(2.0 * sigma_n)
        return float(amplitude + horseshoe)

    def log_ls(self, ls: np.ndarray) -> float:
        return log_normal_logpdf(ls, self.ls_scale) if ls.min() > 0 else -np.inf


@dataclass
class BlockLikelihood:
    """The GP log likelihood of a block-diagonal covariance as a sum over blocks (thesis
    Eq. 5.11): the blocks' point indices, their kernel terms, and the dimensions along which
    their points vary. ``log_likelihood`` remembers each block's last value, so a block is
    refactored only when a length-scale it depends on (or amp2, noise, mean) changed."""

    index: list[np.ndarray]
    terms: list[Any]
    varying: list[np.ndarray]
    _last: dict[int, tuple[bytes, float]] = field(default_factory=dict)

    @classmethod
    def build(cls, kernel: Kernel, X: np.ndarray, blocks: list[np.ndarray]) -> BlockLikelihood:
        return cls(
            index=blocks,
            terms=[kernel.gram_terms(X[index]) for index in blocks],
            varying=[np.flatnonzero(np.ptp(X[index], axis=0) > 0) for index in blocks],
        )

    def joint(
        self, kernel: Kernel, ls: np.ndarray, y: np.ndarray
    ) -> Callable[[float, float, float], float]:
        """``(mean, amp2, noise) -> log likelihood`` at length-scales ``ls (1, d)``."""
        parts = [
            joint_log_likelihood(kernel.gram(ls, terms)[0], y[index])
            for index, terms in zip(self.index, self.terms, strict=True)
        ]
        return lambda mean, amp2, noise: sum(part(mean, amp2, noise) for part in parts)

    def log_likelihood(
        self, kernel: Kernel, ls: np.ndarray, amp2: float, diag: float, mean: float, y: np.ndarray
    ) -> float:
        """Log likelihood of ``y`` at ``ls (d,)``, ``amp2``, diagonal term ``diag``, ``mean``."""
        total = 0.0
        for b, (index, terms, varying) in enumerate(
            zip(self.index, self.terms, self.varying, strict=True)
        ):
            key = np.concatenate([ls[varying], [amp2, diag, mean]]).tobytes()
            last = self._last.get(b)
            if last is not None and last[0] == key:
                value = last[1]
            else:
                cov = kernel.covariance_lower(ls, terms, amp2, diag)
                value = log_likelihood(cov, y[index] - mean)
                self._last[b] = (key, value)
            total += value
        return total


class HyperChain:
    """Spearmint's hyperparameter Markov chain, kept across the iterations of one run.

    On the first :meth:`sample` the state is initialised from the data (``ls = 1``,
    ``amp2 = std(y) + 1e-4``, ``noise = 1e-3``, ``mean = mean(y)``) and burnt in for ``burnin``
    transitions; later calls continue the chain from where it stopped.

    ``fixed_noise``: the noise variance held at this value (initial state included) and the
    joint update restricted to ``(mean, amp2)``, as Spearmint's ``_sample_noiseless`` (which
    holds it at 1e-3); ``None`` (default): sampled.
    """

    def __init__(
        self,
        kernel: Kernel,
        priors: Priors,
        burnin: int = 100,
        log_hypers: bool = False,
        fixed_noise: float | None = None,
    ) -> None:
        self.kernel = kernel
        self.log_hypers = log_hypers
        self.fixed_noise = fixed_noise
        self.priors = priors
        self.burnin = burnin
        self.state: Hypers | None = None

    def copy(self) -> HyperChain:
        """An independent chain starting from this one's state (for side computations)."""
        return copy.deepcopy(self)

    def change_units(self, shift0: float, scale0: float, shift1: float, scale1: float) -> None:
        """Re-express the state for losses ``(y - shift1) / scale1`` instead of
        ``(y - shift0) / scale0`` (the same GP over the raw losses)."""
        if self.state is None:
            return
        ratio = scale0 / scale1
        self.state = Hypers(
            mean=(self.state.mean * scale0 + shift0 - shift1) / scale1,
            amp2=self.state.amp2 * ratio**2,
            noise=self.state.noise * ratio**2,
            ls=self.state.ls,
        )

    def sample(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_samples: int,
        rng: np.random.Generator,
        burnin: int = 0,
    ) -> Hypers:
        """``n_samples`` successive states given ``X (n, d)``, ``y (n,)``; ``S = n_samples``.
        A new chain first runs ``self.burnin`` transitions, a continued one ``burnin`` (0)."""
        y = np.asarray(y, dtype=float)
        X = np.asarray(X, dtype=float)
        blocks = self.kernel.blocks(X)
        if blocks is None:
            terms = self.kernel.gram_terms(X)
        else:
            terms = BlockLikelihood.build(self.kernel, X, blocks)
        n_burn = burnin
        if self.state is None:
            self.state = Hypers(
                mean=np.array([y.mean()]),
                amp2=np.array([y.std() + 1e-4]),
                noise=np.array([1e-3 if self.fixed_noise is None else self.fixed_noise]),
                ls=np.ones((1, X.shape[1])),
            )
            n_burn = self.burnin
        for _ in range(n_burn):
            self._transition(terms, y, rng)
        return Hypers.stack([self._transition(terms, y, rng) for _ in range(n_samples)])

    def _pinned_mean_transition(
        self,
        theta: np.ndarray,
        mean: float,
        log_joint: LogDensity,
        rng: np.random.Generator,
    ) -> tuple[float, float, float]:
        """The joint update when every observation is equal (e.g. EO's re-scored pool when one
        model outvotes the others): the mean's prior ``[min y, max y]`` is the point ``mean``, so
        a slice along any direction that moves it has zero width; sample ``(amp2, noise)`` with
        the mean there. Before this, such a chain stopped with "slice sampler shrank to zero"."""
        if self.log_hypers:

            def log_pair_log(phi: np.ndarray) -> float:
                return log_joint(np.array([mean, *np.exp(phi)])) + phi[0] + phi[1]

            amp2, noise = np.exp(slice_sample(np.log(theta[1:]), log_pair_log, rng))
        else:

            def log_pair(pair: np.ndarray) -> float:
                return log_joint(np.array([mean, *pair]))

            amp2, noise = slice_sample(theta[1:], log_pair, rng)
        return mean, float(amp2), float(noise)

    def _fixed_noise_transition(
        self, theta: np.ndarray, y: np.ndarray, log_joint: LogDensity, rng: np.random.Generator
    ) -> tuple[float, float, float]:
        """The joint update with the noise held at :attr:`fixed_noise`: ``(mean, amp2)`` (in
        ``(mean, log amp2)`` with ``log_hypers``), or ``amp2`` alone when every observation is
        equal and the mean is pinned."""
        noise = float(self.fixed_noise)  # type: ignore[arg-type]
        pinned = np.ptp(y) == 0
        free = theta[1:2] if pinned else theta[:2]
        logged = len(free) - 1  # amp2 is the last free coordinate

        def point(z: np.ndarray) -> np.ndarray:
            amp2 = np.exp(z[logged]) if self.log_hypers else z[logged]
            return np.array([y[0] if pinned else z[0], amp2, noise])

        def target(z: np.ndarray) -> float:
            return log_joint(point(z)) + (z[logged] if self.log_hypers else 0.0)

        start = free.copy()
        if self.log_hypers:
            start[logged] = np.log(start[logged])
        mean, amp2, _ = point(slice_sample(start, target, rng))
        return float(mean), float(amp2), noise

    def _transition(
        self, terms: np.ndarray | BlockLikelihood, y: np.ndarray, rng: np.random.Generator
    ) -> Hypers:
        """One ``sample_hypers()``: joint (mean, amp2, noise) update, then the length-scales.
        ``terms``: the kernel's terms of all points, or of each block (:class:`BlockLikelihood`)."""
        state = self.state
        assert state is not None
        if isinstance(terms, BlockLikelihood):
            joint_likelihood = terms.joint(self.kernel, state.ls, y)
        else:
            joint_likelihood = joint_log_likelihood(self.kernel.gram(state.ls, terms)[0], y)

        def log_joint(theta: np.ndarray) -> float:
            mean, amp2, noise = theta
            prior = self.priors.log_joint(mean, amp2, noise, y)
            if prior == -np.inf:
                return prior
            return joint_likelihood(mean, amp2, noise) + prior

        theta = np.concatenate([state.mean, state.amp2, state.noise])
        if self.fixed_noise is not None:
            mean, amp2, noise = self._fixed_noise_transition(theta, y, log_joint, rng)
        elif np.ptp(y) == 0:  # all observations equal: the mean's support is one point, pinned
            mean, amp2, noise = self._pinned_mean_transition(theta, y[0], log_joint, rng)
        elif self.log_hypers:  # slice in (mean, log amp2, log noise); log-Jacobian added

            def log_joint_log(phi: np.ndarray) -> float:
                return log_joint(np.array([phi[0], *np.exp(phi[1:])])) + phi[1] + phi[2]

            phi = slice_sample(np.array([theta[0], *np.log(theta[1:])]), log_joint_log, rng)
            mean, amp2, noise = phi[0], *np.exp(phi[1:])
        else:
            mean, amp2, noise = slice_sample(theta, log_joint, rng)
        resid = y - mean
        diag = diagonal_term(amp2, noise)

        def log_ls(ls: np.ndarray) -> float:
            prior = self.priors.log_ls(ls)
            if prior == -np.inf:
                return prior
            if isinstance(terms, BlockLikelihood):
                return terms.log_likelihood(self.kernel, ls, amp2, diag, mean, y) + prior
            cov = self.kernel.covariance_lower(ls, terms, amp2, diag)
            return log_likelihood(cov, resid) + prior

        ls = slice_sample(state.ls[0], log_ls, rng, compwise=True)
        self.state = Hypers(
            mean=np.array([mean]), amp2=np.array([amp2]), noise=np.array([noise]), ls=ls[None]
        )
        return self.state


def joint_log_likelihood(corr: np.ndarray, y: np.ndarray) -> Callable[[float, float, float], float]:
    """``(mean, amp2, noise) -> log likelihood`` of ``y`` given correlations ``corr (n, n)``:
    :class:`SpectralLikelihood`, or per-call Cholesky factorisations where the
    eigendecomposition does not converge (LAPACK's divide-and-conquer fails on rare
    near-singular matrices)."""
    try:
        return SpectralLikelihood(corr, y).log_likelihood
    except np.linalg.LinAlgError:
        return lambda mean, amp2, noise: log_likelihood(
            covariance(corr[None], amp2, noise)[0], y - mean
        )


class SpectralLikelihood:
    """GP log likelihood as a function of ``(mean, amp2, noise)`` at fixed length-scales.

    With ``R = Q diag(lam) Q'`` (the correlations, eigendecomposed once), the covariance
    ``amp2 (R + 1e-6 I) + noise I`` has eigenvalues ``e = amp2 (lam + 1e-6) + noise`` and the
    residual ``y - mean`` has coordinates ``Q'y - mean Q'1``, so each evaluation costs ``O(n)``
    instead of a Cholesky factorisation: the joint slice-sampling update evaluates it some 30
    times per transition. Equal to :func:`~hpo.gp.model.log_likelihood` up to rounding.
    """

    def __init__(self, corr: np.ndarray, y: np.ndarray) -> None:
        eigenvalues, vectors = np.linalg.eigh(corr)
        self.shifted = eigenvalues + JITTER  # (n,)
        self.y_coords = vectors.T @ y
        self.one_coords = vectors.sum(axis=0)
        self.constant = -0.5 * y.shape[0] * LOG_2PI

    def log_likelihood(self, mean: float, amp2: float, noise: float) -> float:
        variances = amp2 * self.shifted + noise
        if variances.min() <= 0.0:  # not positive definite (where the Cholesky fails)
            return -np.inf
        resid = self.y_coords - mean * self.one_coords
        return float(
            self.constant - 0.5 * (resid * resid / variances).sum() - 0.5 * np.log(variances).sum()
        )
