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
``hpo``, nothing here reads files: :func:`~hpo.space.prior_files.prior_space_from_config`
takes the mapping.

The module owns priors in context (:class:`ContextPrior`, :class:`PriorSpace`: sampling, the log
prior, the checks of contexts); the one-dimensional distributions are
:mod:`hpo.space.prior_distributions`', reading them from a mapping
:mod:`hpo.space.prior_files`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hpo.space.prior_distributions import CategoricalWeights, NumericPrior, Prior, PriorError
from hpo.space.search_space import (
    _BIN_EPS,
    Categorical,
    Integer,
    Parameter,
    Real,
    Space,
    Value,
)


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
