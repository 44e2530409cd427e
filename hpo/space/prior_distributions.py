"""One-dimensional prior distributions of hyperparameters (Bermúdez-Chacón 2014, eqs 3.1-3.6):
categorical weights (eq. 3.1), uniform (3.2), normal (3.3), log-uniform (3.4), log-normal (3.5)
and Gaussian mixtures (3.6), each truncated to its parameter's range (the density renormalised,
never clipped) [decision] and, on an integer parameter, rounded so that each value gets the mass
of its unit bin [decision]; how they are given per context is :mod:`hpo.space.priors`'."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtr, ndtri

from hpo.space.search_space import (
    SpaceError,
)

WEIGHT_TOLERANCE = 1e-6  # |sum of weights - 1| allowed in a hand-written file [decision]
MIN_MASS = 1e-12  # a truncated prior must keep at least this mass inside the parameter's range
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class PriorError(SpaceError):
    """A malformed prior; the one-line message names the bad value and the valid choices."""


# --- One-dimensional priors (eqs 3.1-3.6) -------------------------------------------------------


class NumericPrior(ABC):
    """A density on the real line, possibly truncated to ``[low, high]``."""

    low: float
    high: float

    @abstractmethod
    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        """The density at ``x`` (0 outside the support)."""

    @abstractmethod
    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """The cumulative distribution at ``x``."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent draws, shape ``(n,)``."""

    @abstractmethod
    def truncated(self, low: float, high: float) -> NumericPrior:
        """This prior restricted (and renormalised) to ``[low, high]`` intersected with its own
        support; :class:`PriorError` if nothing, or no mass, is left."""

    @abstractmethod
    def to_config(self) -> dict[str, object]:
        """The mapping that declares this prior in a space or prior file (YAML-ready)."""

    def logpdf(self, x: np.ndarray | float) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.pdf(x))


def check_interval(low: float, high: float, what: str) -> None:
    if not low < high:  # also refuses NaN
        raise PriorError(f"{what}: bounds reversed or empty, low={low} must be < high={high}")


def _intersect(low: float, high: float, bounds: tuple[float, float], what: str) -> tuple:
    lo, hi = max(low, bounds[0]), min(high, bounds[1])
    if not lo < hi:
        raise PriorError(
            f"{what}: support [{low}, {high}] does not meet the parameter's range "
            f"[{bounds[0]}, {bounds[1]}]"
        )
    return lo, hi


@dataclass(frozen=True)
class Uniform(NumericPrior):
    """``1 / (b - a)`` on ``[a, b]`` (eq. 3.2)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        check_interval(self.low, self.high, "uniform")
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise PriorError(f"uniform: bounds must be finite, got [{self.low}, {self.high}]")

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.where((x >= self.low) & (x <= self.high), 1.0 / (self.high - self.low), 0.0)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.clip((x - self.low) / (self.high - self.low), 0.0, 1.0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.low + rng.uniform(size=n) * (self.high - self.low)

    def truncated(self, low: float, high: float) -> Uniform:
        return Uniform(*_intersect(self.low, self.high, (low, high), "uniform"))

    def to_config(self) -> dict[str, object]:
        return {"dist": "uniform", "low": self.low, "high": self.high}


@dataclass(frozen=True)
class LogUniform(NumericPrior):
    """``1 / (x (ln b - ln a))`` on ``[a, b]``, ``a > 0`` (eq. 3.4)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        check_interval(self.low, self.high, "log_uniform")
        if not self.low > 0 or not math.isfinite(self.high):
            raise PriorError(
                f"log_uniform: needs 0 < low < high < inf, got [{self.low}, {self.high}]"
            )

    def _width(self) -> float:
        return math.log(self.high) - math.log(self.low)

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        inside = (x >= self.low) & (x <= self.high)
        return np.where(inside, 1.0 / (np.where(inside, x, 1.0) * self._width()), 0.0)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.clip(np.asarray(x, dtype=float), self.low, self.high)
        return (np.log(x) - math.log(self.low)) / self._width()

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.exp(math.log(self.low) + rng.uniform(size=n) * self._width())

    def truncated(self, low: float, high: float) -> LogUniform:
        return LogUniform(*_intersect(self.low, self.high, (low, high), "log_uniform"))

    def to_config(self) -> dict[str, object]:
        return {"dist": "log_uniform", "low": self.low, "high": self.high}


def _component_masses(mu: np.ndarray, sigma: np.ndarray, low: float, high: float) -> np.ndarray:
    """``P(low <= X <= high)`` for each ``N(mu_i, sigma_i)``, accurate in both tails."""
    za, zb = (low - mu) / sigma, (high - mu) / sigma
    return np.where(za > 0, ndtr(-za) - ndtr(-zb), ndtr(zb) - ndtr(za))


def _truncated_normal_draws(
    rng: np.random.Generator, mu: np.ndarray, sigma: np.ndarray, low: float, high: float
) -> np.ndarray:
    """One draw from each ``N(mu_i, sigma_i)`` truncated to ``[low, high]`` (inverse CDF, on the
    tail's own side so that far tails keep their precision)."""
    za, zb = (low - mu) / sigma, (high - mu) / sigma
    u = rng.uniform(size=mu.shape)
    upper = za > 0
    with np.errstate(invalid="ignore"):
        sa, sb = ndtr(-za), ndtr(-zb)
        z_upper = -ndtri(sa - u * (sa - sb))
        pa, pb = ndtr(za), ndtr(zb)
        z_lower = ndtri(pa + u * (pb - pa))
    return np.clip(mu + sigma * np.where(upper, z_upper, z_lower), low, high)


@dataclass(frozen=True)
class GaussianMixture(NumericPrior):
    """``sum_i pi_i N(mu_i, sigma_i)`` (eq. 3.6), ``sum pi_i = 1``, truncated to ``[low, high]``.

    ``sigma`` is a standard deviation. The truncated mixture draws component ``i`` with
    probability proportional to ``pi_i`` times its mass inside ``[low, high]``, then draws from that
    component truncated, which is exactly the renormalised mixture density.
    """

    weights: tuple[float, ...]
    mu: tuple[float, ...]
    sigma: tuple[float, ...]
    low: float = -math.inf
    high: float = math.inf
    _z: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name = self._name()
        if not (len(self.weights) == len(self.mu) == len(self.sigma)) or not self.weights:
            raise PriorError(
                f"{name}: weights, mu and sigma must have one entry per component, got "
                f"{len(self.weights)}, {len(self.mu)}, {len(self.sigma)}"
            )
        for s in self.sigma:
            if not (s > 0 and math.isfinite(s)):
                raise PriorError(f"{name}: sigma={s} must be > 0 and finite")
        for m in self.mu:
            if not math.isfinite(m):
                raise PriorError(f"{name}: mu={m} must be finite")
        _check_weights(self.weights, name)
        check_interval(self.low, self.high, name)
        mass = float(np.dot(self._w(), _component_masses(*self._arrays(), self.low, self.high)))
        if not mass > MIN_MASS:
            raise PriorError(f"{name}: puts no mass in [{self.low}, {self.high}]")
        object.__setattr__(self, "_z", mass)

    def _name(self) -> str:
        return "mixture" if len(self.weights) != 1 else "normal"

    def _w(self) -> np.ndarray:
        return np.asarray(self.weights, dtype=float)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.mu, dtype=float), np.asarray(self.sigma, dtype=float)

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        mu, sigma = self._arrays()
        z = (x[..., None] - mu) / sigma
        density = np.exp(-0.5 * z**2 - _LOG_SQRT_2PI) / sigma @ self._w() / self._z
        return np.where((x >= self.low) & (x <= self.high), density, 0.0)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.clip(np.asarray(x, dtype=float), self.low, self.high)
        mu, sigma = self._arrays()
        zx, za = (x[..., None] - mu) / sigma, (self.low - mu) / sigma
        below = np.where(za > 0, ndtr(-za) - ndtr(-zx), ndtr(zx) - ndtr(za))  # tail-side
        return np.clip(below @ self._w() / self._z, 0.0, 1.0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        mu, sigma = self._arrays()
        if len(mu) == 1:
            component = np.zeros(n, dtype=int)
        else:
            p = self._w() * _component_masses(mu, sigma, self.low, self.high)
            component = rng.choice(len(mu), size=n, p=p / p.sum())
        return _truncated_normal_draws(rng, mu[component], sigma[component], self.low, self.high)

    def truncated(self, low: float, high: float) -> GaussianMixture:
        lo, hi = _intersect(self.low, self.high, (low, high), self._name())
        return replace(self, low=lo, high=hi)

    def to_config(self) -> dict[str, object]:
        if len(self.weights) == 1:
            return {"dist": "normal", "mu": self.mu[0], "sigma": self.sigma[0]}
        return {
            "dist": "mixture",
            "weights": list(self.weights),
            "mu": list(self.mu),
            "sigma": list(self.sigma),
        }


def Normal(  # noqa: N802 (a constructor, named as the other priors)
    mu: float, sigma: float, low: float = -math.inf, high: float = math.inf
) -> GaussianMixture:
    """``N(mu, sigma)`` (eq. 3.3), ``sigma`` the standard deviation: a one-component mixture."""
    return GaussianMixture((1.0,), (float(mu),), (float(sigma),), low, high)


@dataclass(frozen=True)
class LogNormal(NumericPrior):
    """``exp(-(ln x - mu)^2 / (2 sigma^2)) / (x sigma sqrt(2 pi))`` (eq. 3.5): ``ln x ~ N(mu,
    sigma)``, truncated to ``[low, high]`` with ``0 <= low``."""

    mu: float
    sigma: float
    low: float = 0.0
    high: float = math.inf
    _log: GaussianMixture = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and math.isfinite(self.sigma)):
            raise PriorError(f"log_normal: sigma={self.sigma} must be > 0 and finite")
        check_interval(self.low, self.high, "log_normal")
        if self.low < 0:
            raise PriorError(f"log_normal: support is x > 0, got low={self.low}")
        log_low = math.log(self.low) if self.low > 0 else -math.inf
        log = GaussianMixture(
            (1.0,), (float(self.mu),), (float(self.sigma),), log_low, math.log(self.high)
        )
        object.__setattr__(self, "_log", log)

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        positive = x > 0
        safe = np.where(positive, x, 1.0)
        return np.where(positive, self._log.pdf(np.log(safe)) / safe, 0.0)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        safe = np.where(x > 0, x, 1.0)
        return np.where(x > 0, self._log.cdf(np.log(safe)), 0.0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.clip(np.exp(self._log.sample(rng, n)), self.low, self.high)

    def truncated(self, low: float, high: float) -> LogNormal:
        lo, hi = _intersect(self.low, self.high, (low, high), "log_normal")
        return LogNormal(self.mu, self.sigma, lo, hi)

    def to_config(self) -> dict[str, object]:
        return {"dist": "log_normal", "mu": self.mu, "sigma": self.sigma}


def _check_weights(weights: Sequence[float], what: str) -> None:
    for w in weights:
        if not (w >= 0 and math.isfinite(w)):
            raise PriorError(f"{what}: weight {w} must be >= 0 and finite")
    total = float(sum(weights))
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise PriorError(f"{what}: weights sum to {total:g}, they must sum to 1")


@dataclass(frozen=True)
class CategoricalWeights:
    """``p(x) = prod_i p_i^[x = i]`` (eq. 3.1): one weight per choice, in the choices' order."""

    choices: tuple[str, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        _check_weights(self.weights, "categorical")

    def pmf(self, value: str) -> float:
        return self.weights[self.choices.index(value)]

    def sample_index(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws as indices into ``choices``."""
        cumulative = np.cumsum(self.weights)
        return np.minimum(
            np.searchsorted(cumulative / cumulative[-1], rng.uniform(size=n), side="right"),
            len(self.choices) - 1,
        )

    def to_config(self) -> dict[str, object]:
        return {
            "dist": "categorical",
            "weights": dict(zip(self.choices, self.weights, strict=True)),
        }


Prior = NumericPrior | CategoricalWeights
