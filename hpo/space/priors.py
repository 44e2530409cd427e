"""Prior distributions of hyperparameters, one per categorical context (seed 003, §3.1).

Bermúdez-Chacón (2014) describes a space as a tree: categorical hyperparameters branch, numeric
ones are the leaves, and the path of categorical values above a leaf is its *signature* (§3.1.2).
Every leaf is drawn from its own one-dimensional prior *given the signature* (§3.1.1, §3.1.3):

* categorical weights, ``p(x) = prod_i p_i^[x = i]`` (eq. 3.1);
* uniform on ``[a, b]`` (eq. 3.2), normal ``N(mu, sigma)`` (eq. 3.3), log-uniform on ``[a, b]``
  (eq. 3.4), log-normal (``ln x ~ N(mu, sigma)``, eq. 3.5) and Gaussian mixtures
  ``sum_i pi_i N(mu_i, sigma_i)`` (eq. 3.6) for numeric leaves.

A numeric prior is truncated to its parameter's range ``[low, high]`` (the density renormalised,
never clipped) [decision]; on an integer parameter the draw is rounded to the nearest integer of
``[low - 1/2, high + 1/2]``, so each value gets the mass of its unit bin [decision].

This module adds priors to an ordinary :class:`hpo.space.search_space.Space` without changing it:
the space
mapping may carry, on any parameter, ``prior:`` (one prior, or a list of priors each with a
``when:`` context, the first matching one applies, an entry without ``when`` applies everywhere
else) and ``virtual: true`` (a categorical that only guides sampling, §3.1.2). The reader removes
both keys and builds the plain space from the rest, so a space without priors samples exactly as
:meth:`Space.sample` does. Format and every [decision]: ``docs/hierarchical.md``. Like the rest of
``hpo``, nothing here reads files: :func:`prior_space_from_config` takes the mapping.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtr, ndtri

from hpo.space.search_space import (
    _BIN_EPS,
    Categorical,
    Integer,
    Parameter,
    Real,
    Space,
    SpaceError,
    Value,
    space_from_config,
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


def _check_interval(low: float, high: float, what: str) -> None:
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
        _check_interval(self.low, self.high, "uniform")
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
        _check_interval(self.low, self.high, "log_uniform")
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
        _check_interval(self.low, self.high, name)
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
        _check_interval(self.low, self.high, "log_normal")
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


# --- Priors in context --------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextPrior:
    """``prior`` applies where every categorical of ``when`` takes one of its listed values
    (``when == ()`` applies everywhere): one signature, or a set of them (§3.1.2)."""

    when: tuple[tuple[str, tuple[str, ...]], ...]
    prior: Prior

    def matches(self, config: Mapping[str, Value]) -> bool:
        return all(config.get(name) in values for name, values in self.when)


@dataclass(frozen=True)
class PriorSpace:
    """A :class:`Space` whose parameters may have priors per context and may be virtual.

    ``priors[name]``: the context priors of parameter ``name``, tried in order; a parameter with
    none (or whose contexts do not match) is drawn as :meth:`Space.sample` draws it (uniform in the
    unit cube). ``virtual``: categoricals that guide sampling only and are removed by
    :meth:`learner_config` before a learner is built (§3.1.2).
    """

    space: Space
    priors: Mapping[str, tuple[ContextPrior, ...]] = field(default_factory=dict)
    virtual: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        checker = _ContextChecker(self.space)
        for name, entries in self.priors.items():
            parameter = checker.parameter(name, "prior")
            for entry in entries:
                checker.check(parameter, entry)
        for name in sorted(self.virtual):
            checker.check_virtual(checker.parameter(name, "virtual"))

    @property
    def name(self) -> str:
        return self.space.name

    def prior_of(self, name: str, config: Mapping[str, Value]) -> Prior | None:
        """The prior of parameter ``name`` in the context of ``config`` (None: the uniform one)."""
        for entry in self.priors.get(name, ()):
            if entry.matches(config):
                return entry.prior
        return None

    def sample(self, rng: np.random.Generator) -> dict[str, Value]:
        """One configuration drawn top-down from the priors (§3.1.3), virtual ones included."""
        return self.sample_batch(rng, 1)[0]

    def sample_batch(self, rng: np.random.Generator, n: int) -> list[dict[str, Value]]:
        """``n`` configurations drawn top-down (§3.1.3), vectorised parameter by parameter.

        The uniform draws of parameters without a prior come from one ``(n, d)`` block drawn
        first, so a space without priors gives exactly ``[space.sample(rng) for _ in range(n)]``.
        """
        return _BatchSampler(self, rng, n).run()

    def log_density(self, config: Mapping[str, Value]) -> float:
        """``log p(config)``: the sum over active parameters of each one's log prior in context
        (numeric leaves independent given the signature, §3.1.2); integers by the mass of their
        unit bin; the uniform default in unit-cube coordinates mapped back to the value."""
        total = 0.0
        for p in self.space.parameters:
            if p.name in config:
                total += _log_prior(p, self.prior_of(p.name, config), config[p.name])
        return total

    def learner_config(self, config: Mapping[str, Value]) -> dict[str, Value]:
        """``config`` without its virtual hyperparameters: what the learner may see (§3.1.2)."""
        return {k: v for k, v in config.items() if k not in self.virtual}

    def check_learner_config(self, learner: str, config: Mapping[str, Value]) -> None:
        """Raise :class:`PriorError` if a virtual hyperparameter would reach ``learner``."""
        reached = sorted(set(config) & self.virtual)
        if reached:
            raise PriorError(
                f"space {self.name!r}: virtual hyperparameter {reached[0]!r} reaches learner "
                f"{learner!r}; pass the configuration through learner_config() first"
            )


def _log_prior(p: Parameter, prior: Prior | None, value: Value) -> float:
    if isinstance(p, Categorical):
        pmf = prior.pmf(str(value)) if prior is not None else 1.0 / len(p.choices)
        return math.log(pmf) if pmf > 0 else -math.inf
    if isinstance(p, Integer):
        if prior is None and p.log:  # rounded log-uniform (seed 002): the bin's log-width
            k = int(value)
            lo, hi = max(k - 0.5, p.low), min(k + 0.5, p.high)
            return math.log(math.log(hi / lo) / math.log(p.high / p.low))
        if prior is None:
            return -math.log(p.high - p.low + 1)
        assert isinstance(prior, NumericPrior)
        k = int(value)
        mass = float(prior.cdf(k + 0.5) - prior.cdf(k - 0.5))
        return math.log(mass) if mass > 0 else -math.inf
    if prior is not None:
        assert isinstance(prior, NumericPrior)
        return float(prior.logpdf(float(value)))
    if p.log:
        span = math.log10(p.high) - math.log10(p.low)
        return -math.log(float(value) * math.log(10.0) * span)
    return -math.log(p.high - p.low)


def numeric_range(p: Real | Integer) -> tuple[float, float]:
    """The interval a numeric prior is truncated to: ``[low, high]``, or the integers' bins."""
    if isinstance(p, Integer):
        return p.low - 0.5, p.high + 0.5
    return p.low, p.high


class _ContextChecker:
    """Checks that every prior and virtual parameter fits the space (one-line errors)."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.position = {p.name: i for i, p in enumerate(space.parameters)}

    def fail(self, message: str) -> PriorError:
        return PriorError(f"space {self.space.name!r}: {message}")

    def parameter(self, name: str, what: str) -> Parameter:
        if name not in self.position:
            raise self.fail(
                f"{what} on {name!r}, a hyperparameter the space's learners lack; valid "
                f"choices: {', '.join(self.space.names)}"
            )
        return self.space.parameters[self.position[name]]

    def ancestry(self, p: Parameter) -> dict[str, set[str]]:
        """The categorical values every configuration where ``p`` is active has."""
        needed: dict[str, set[str]] = {}
        while p.condition is not None:
            needed.setdefault(p.condition.parent, set(p.condition.values))
            p = self.space.parameters[self.position[p.condition.parent]]
        return needed

    def check(self, p: Parameter, entry: ContextPrior) -> None:
        where = f"prior on {p.name!r}"
        if isinstance(entry.prior, CategoricalWeights) != isinstance(p, Categorical):
            kind = "categorical" if isinstance(p, Categorical) else "numeric"
            raise self.fail(f"{where}: a {kind} parameter needs a {kind} prior")
        if isinstance(entry.prior, CategoricalWeights):
            assert isinstance(p, Categorical)
            if entry.prior.choices != p.choices:
                raise self.fail(f"{where}: weights must name the choices {', '.join(p.choices)}")
        needed = self.ancestry(p)
        earlier = [
            q.name
            for q in self.space.parameters[: self.position[p.name]]
            if isinstance(q, Categorical)
        ]
        for name, values in entry.when:
            if name not in earlier:
                raise self.fail(
                    f"{where}: context {name!r} is not a categorical declared before it; valid "
                    f"choices: {', '.join(earlier) or '(none)'}"
                )
            parent = self.space.parameters[self.position[name]]
            assert isinstance(parent, Categorical)
            for value in values:
                if value not in parent.choices:
                    raise self.fail(
                        f"{where}: context value {value!r} is not a choice of {name!r}; valid "
                        f"choices: {', '.join(parent.choices)}"
                    )
            if name in needed and not set(values) & needed[name]:
                raise self.fail(
                    f"{where}: {p.name!r} is never active when {name} is "
                    f"{', '.join(values)}; valid choices: {', '.join(sorted(needed[name]))}"
                )
            if name not in needed and not self.always_set(name, needed):
                raise self.fail(
                    f"{where}: context {name!r} is not set whenever {p.name!r} is; valid "
                    f"choices: {', '.join(needed) or '(unconditional categoricals)'}"
                )

    def always_set(self, name: str, needed: Mapping[str, set[str]]) -> bool:
        """Whether categorical ``name`` is active in every configuration that has ``needed``."""
        parent_needs = self.ancestry(self.space.parameters[self.position[name]])
        return all(q in needed and needed[q] <= values for q, values in parent_needs.items())

    def check_virtual(self, p: Parameter) -> None:
        if not isinstance(p, Categorical):
            raise self.fail(f"virtual hyperparameter {p.name!r} must be categorical (§3.1.2)")
        if p.name == self.space.learner_parameter:
            raise self.fail(
                f"virtual hyperparameter {p.name!r} is the learner choice and would reach the "
                "learner; valid: a categorical that only guides sampling"
            )
        if "__" in p.name:
            raise self.fail(
                f"virtual hyperparameter {p.name!r} names a learner's parameter "
                f"({p.name.partition('__')[0]!r}) and would reach that learner; name it without "
                "the '<learner>__' prefix"
            )


class _BatchSampler:
    """Draws ``n`` configurations of a :class:`PriorSpace` column by column."""

    def __init__(self, prior_space: PriorSpace, rng: np.random.Generator, n: int) -> None:
        self.ps = prior_space
        self.rng = rng
        self.n = n
        self.uniform = rng.uniform(size=(n, prior_space.space.dim))
        self.codes: dict[str, np.ndarray] = {}  # categorical -> choice index per row
        self.categoricals = {
            p.name: p for p in prior_space.space.parameters if isinstance(p, Categorical)
        }
        self.active: dict[str, np.ndarray] = {}

    def run(self) -> list[dict[str, Value]]:
        configs: list[dict[str, Value]] = [{} for _ in range(self.n)]
        for column, p in enumerate(self.ps.space.parameters):
            active = self.activity(p)
            self.active[p.name] = active
            rows = np.flatnonzero(active)
            if not len(rows):
                self.codes[p.name] = np.zeros(self.n, dtype=np.int64)
                continue
            values = self.draw(p, column, active)
            for row, value in zip(rows.tolist(), values[rows].tolist(), strict=True):
                configs[row][p.name] = value
        return configs

    def activity(self, p: Parameter) -> np.ndarray:
        if p.condition is None:
            return np.ones(self.n, dtype=bool)
        parent = p.condition.parent
        return self.active[parent] & self.is_one_of(parent, p.condition.values)

    def is_one_of(self, name: str, values: tuple[str, ...]) -> np.ndarray:
        categorical = self.categoricals[name]
        allowed = np.zeros(len(categorical.choices), dtype=bool)
        allowed[[categorical.choices.index(v) for v in values]] = True
        return self.active[name] & allowed[self.codes[name]]

    def draw(self, p: Parameter, column: int, active: np.ndarray) -> np.ndarray:
        """Every row's value of ``p`` (rows where it is inactive hold the uniform default)."""
        u = self.uniform[:, column]
        values = _from_unit(p, u)
        remaining = active.copy()
        for entry in self.ps.priors.get(p.name, ()):
            rows = remaining.copy()
            for name, choices in entry.when:
                rows &= self.is_one_of(name, choices)
            if rows.any():
                values[rows] = self.prior_draws(p, entry.prior, int(rows.sum()))
                remaining &= ~rows
        if isinstance(p, Categorical):
            self.codes[p.name] = values
            return np.asarray(p.choices, dtype=object)[values]
        return values

    def prior_draws(self, p: Parameter, prior: Prior, n: int) -> np.ndarray:
        if isinstance(prior, CategoricalWeights):
            return prior.sample_index(self.rng, n)
        draws = prior.sample(self.rng, n)
        if isinstance(p, Integer):
            return np.clip(np.rint(draws), p.low, p.high).astype(np.int64)
        return draws


def _from_unit(p: Parameter, u: np.ndarray) -> np.ndarray:
    """Vectorised ``p.from_unit`` (same arithmetic, so the same floats); categoricals as codes."""
    u = np.clip(u, 0.0, 1.0)
    if isinstance(p, Real):
        if p.log:
            lo, hi = math.log10(p.low), math.log10(p.high)
            return np.array([10.0 ** float(v) for v in lo + u * (hi - lo)])
        return p.low + u * (p.high - p.low)
    if isinstance(p, Integer) and p.log:  # rounded log-uniform integers (seed 002)
        return np.array([p.from_unit(float(v)) for v in u], dtype=np.int64)
    n = (p.high - p.low + 1) if isinstance(p, Integer) else len(p.choices)
    codes = np.floor((1 - _BIN_EPS) * u * n).astype(np.int64)
    return codes + p.low if isinstance(p, Integer) else codes


# --- Reading priors from a space's mapping or a prior file -------------------------------------

PRIOR_KEYS = {
    "uniform": ("low", "high"),
    "log_uniform": ("low", "high"),
    "normal": ("mu", "sigma"),
    "log_normal": ("mu", "sigma"),
    "mixture": ("weights", "mu", "sigma"),
    "categorical": ("weights",),
}
_REQUIRED = {"normal": ("mu", "sigma"), "log_normal": ("mu", "sigma"), "categorical": ("weights",)}
_REQUIRED |= {"mixture": ("weights", "mu", "sigma")}
SPACE_EXTRA_KEYS = ("prior", "virtual")  # the keys this module adds to a parameter's mapping


def prior_space_from_config(config: Mapping[str, object]) -> PriorSpace:
    """The :class:`PriorSpace` a space mapping declares: the plain space from the usual keys
    (:func:`hpo.space.search_space.space_from_config`), priors from ``prior:`` and virtual
    parameters from
    ``virtual: true`` on any parameter (format: ``docs/hierarchical.md``)."""
    parameters = config.get("parameters") if isinstance(config, Mapping) else None
    if not isinstance(parameters, Mapping):
        return PriorSpace(space_from_config(config))
    plain: dict[str, object] = {}
    extras: dict[str, Mapping[str, object]] = {}
    for key, spec in parameters.items():
        if isinstance(spec, Mapping):
            plain[str(key)] = {k: v for k, v in spec.items() if k not in SPACE_EXTRA_KEYS}
            extras[str(key)] = {k: v for k, v in spec.items() if k in SPACE_EXTRA_KEYS}
        else:
            plain[str(key)] = spec
    space = space_from_config({**config, "parameters": plain})
    reader = _PriorReader(space)
    priors = {p: reader.entries(p, e["prior"]) for p, e in extras.items() if "prior" in e}
    virtual = frozenset(p for p, e in extras.items() if reader.flag(e.get("virtual", False), p))
    return PriorSpace(space, priors, virtual)


def with_priors(prior_space: PriorSpace, prior_file: Mapping[str, object]) -> PriorSpace:
    """``prior_space`` with the priors of a prior file (``{space: <name>, priors: {<parameter>:
    <prior or list of priors>}}``, e.g. learned ones, §4): a parameter the file names gets the
    file's priors instead of its own [decision]."""
    reader = _PriorReader(prior_space.space)
    if not isinstance(prior_file, Mapping) or set(prior_file) - {"space", "priors"}:
        keys = list(prior_file) if isinstance(prior_file, Mapping) else prior_file
        raise reader.fail(f"a prior file has the keys space, priors; got {keys!r}")
    if str(prior_file.get("space", prior_space.name)) != prior_space.name:
        raise reader.fail(f"the prior file is for space {prior_file['space']!r}")
    priors = prior_file.get("priors", {})
    if not isinstance(priors, Mapping):
        raise reader.fail(f"priors must be a mapping of parameter names, got {priors!r}")
    merged = dict(prior_space.priors)
    for name, spec in priors.items():
        merged[str(name)] = reader.entries(str(name), spec)
    return PriorSpace(prior_space.space, merged, prior_space.virtual)


def prior_file(prior_space: PriorSpace) -> dict[str, object]:
    """The prior file (YAML-ready mapping) that gives ``prior_space``'s priors back through
    :func:`with_priors`."""
    space = prior_space.space
    priors: dict[str, object] = {}
    for name, entries in prior_space.priors.items():
        integer = isinstance(space.parameters[space.names.index(name)], Integer)
        priors[name] = []
        for e in entries:
            spec = e.prior.to_config()
            if integer and isinstance(e.prior, Uniform | LogUniform):  # back to the end values
                spec |= {"low": e.prior.low + 0.5, "high": e.prior.high - 0.5}
            priors[name].append(
                ({"when": {k: list(v) for k, v in e.when}} if e.when else {}) | spec
            )
    return {"space": prior_space.name, "priors": priors}


class _PriorReader:
    """Reads ``prior:`` mappings for the parameters of one space (one-line :class:`PriorError`)."""

    def __init__(self, space: Space) -> None:
        self.space = space

    def fail(self, message: str) -> PriorError:
        return PriorError(f"space {self.space.name!r}: {message}")

    def flag(self, value: object, name: str) -> bool:
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise self.fail(f"parameter {name!r}: virtual must be true or false, got {value!r}")

    def entries(self, name: str, spec: object) -> tuple[ContextPrior, ...]:
        if name not in self.space.names:
            raise self.fail(
                f"prior on {name!r}, a hyperparameter the space's learners lack; valid "
                f"choices: {', '.join(self.space.names)}"
            )
        parameter = self.space.parameters[self.space.names.index(name)]
        items = [spec] if isinstance(spec, Mapping) else spec
        if not isinstance(items, Sequence) or isinstance(items, str) or not items:
            raise self.fail(f"prior on {name!r} must be a mapping or a list of them, got {spec!r}")
        return tuple(self.entry(parameter, item) for item in items)

    def entry(self, p: Parameter, spec: object) -> ContextPrior:
        where = f"prior on {p.name!r}"
        if not isinstance(spec, Mapping):
            raise self.fail(f"{where} must be a mapping, got {spec!r}")
        dist = spec.get("dist")
        if dist not in PRIOR_KEYS:
            raise self.fail(
                f"{where}: unknown dist {dist!r}; valid choices: {', '.join(PRIOR_KEYS)}"
            )
        valid = ("when", "dist", *PRIOR_KEYS[str(dist)])
        for key in spec:
            if key not in valid:
                raise self.fail(f"{where}: unknown key {key!r}; valid keys: {', '.join(valid)}")
        for key in _REQUIRED.get(str(dist), ()):
            if key not in spec:
                raise self.fail(f"{where}: {dist} needs {key!r}")
        when = self.when(spec.get("when", {}), where)
        try:
            return ContextPrior(when, self.prior(p, str(dist), spec, where))
        except PriorError as error:
            if str(error).startswith("space "):
                raise
            raise self.fail(f"{where}: {error}") from None

    def when(self, value: object, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(value, Mapping):
            raise self.fail(f"{where}: when must map categoricals to values, got {value!r}")
        pairs = []
        for key, values in value.items():
            listed = [values] if isinstance(values, str | bool) else values
            if not isinstance(listed, Sequence) or not listed:
                raise self.fail(f"{where}: when {key!r} must list values, got {values!r}")
            pairs.append((str(key), tuple(_choice_text(v) for v in listed)))
        return tuple(pairs)

    def number(self, value: object, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(f"{where} must be a number, got {value!r}")
        try:
            return float(value)
        except ValueError:
            raise self.fail(f"{where} must be a number, got {value!r}") from None

    def numbers(self, value: object, where: str) -> tuple[float, ...]:
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise self.fail(f"{where} must be a list of numbers, got {value!r}")
        return tuple(self.number(v, where) for v in value)

    def prior(self, p: Parameter, dist: str, spec: Mapping[str, object], where: str) -> Prior:
        if dist == "categorical":
            if not isinstance(p, Categorical):
                raise self.fail(f"{where}: categorical weights need a categorical parameter")
            weights = spec["weights"]
            if not isinstance(weights, Mapping):
                raise self.fail(f"{where}: weights must map choices to numbers, got {weights!r}")
            named = {
                _choice_text(k): self.number(v, f"{where}: weight") for k, v in weights.items()
            }
            for choice in named:
                if choice not in p.choices:
                    raise self.fail(
                        f"{where}: weight on {choice!r}, not a choice; valid choices: "
                        f"{', '.join(p.choices)}"
                    )
            return CategoricalWeights(p.choices, tuple(named.get(c, 0.0) for c in p.choices))
        if isinstance(p, Categorical):
            raise self.fail(f"{where}: a categorical parameter takes dist: categorical")
        low, high = numeric_range(p)
        if dist in ("uniform", "log_uniform"):
            a = self.number(spec.get("low", p.low), f"{where}: low")
            b = self.number(spec.get("high", p.high), f"{where}: high")
            _check_interval(a, b, dist)
            if a < p.low or b > p.high:
                raise self.fail(
                    f"{where}: [{a}, {b}] exceeds the parameter's range [{p.low}, {p.high}]"
                )
            if isinstance(p, Integer):  # each integer keeps its whole unit bin
                a, b = a - 0.5, b + 0.5
            return (Uniform if dist == "uniform" else LogUniform)(a, b)
        if dist == "normal":
            mu, sigma = self.number(spec["mu"], f"{where}: mu"), self.number(spec["sigma"], where)
            if not sigma > 0:
                raise self.fail(f"{where}: sigma={sigma:g} must be > 0")
            return Normal(mu, sigma).truncated(low, high)
        if dist == "log_normal":
            mu, sigma = self.number(spec["mu"], f"{where}: mu"), self.number(spec["sigma"], where)
            if not sigma > 0:
                raise self.fail(f"{where}: sigma={sigma:g} must be > 0")
            return LogNormal(mu, sigma).truncated(low, high)
        weights = self.numbers(spec["weights"], f"{where}: weights")
        mu = self.numbers(spec["mu"], f"{where}: mu")
        sigma = self.numbers(spec["sigma"], f"{where}: sigma")
        return GaussianMixture(weights, mu, sigma).truncated(low, high)


def _choice_text(value: object) -> str:
    """A categorical value as the space stores it (YAML's ``True`` is the choice ``'True'``)."""
    return str(value)
