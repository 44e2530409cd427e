"""Search spaces: parameters, scales, conditions and the unit-cube encoding every optimizer sees.

Every parameter occupies one dimension of ``[0, 1]^d``. Continuous parameters map linearly, or
linearly in log10 for ``log=True`` (thesis §2.6.1: ``u = (log10 v - lo) / (hi - lo)``). Integers
and categoricals use Spearmint's equal-width bins,
``value = low + floor((1 - eps) u (high - low + 1))`` (the author's code). A parameter may carry
a :class:`Condition` on a categorical parent: it is active only when the parent takes one of the
listed values (thesis §5.3, Chapter 5's conditional spaces). Imputation (thesis §5.3.1) is a
setting of the space: ``default`` puts every inactive dimension of a point at the centre of its
range (``impute_value`` = 0.5), ``none`` leaves the value drawn for it.

A space also says which learner a configuration trains: a fixed learner, or the value of one
categorical parameter (the classifier choice of thesis Table 5.1). Spaces are declared as
mappings (``conf/space/*.yaml``, read by :func:`space_from_config`; format in
``docs/learners.md``); parameter order there is the unit-cube order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

_BIN_EPS = 1e-12
Value = float | int | str
IMPUTE_CHOICES = ("none", "default")


class SpaceError(ValueError):
    """A malformed space; the one-line message names the space, the bad key or value and the
    valid choices."""


@dataclass(frozen=True)
class Condition:
    """Active iff the categorical parameter ``parent`` takes one of ``values``."""

    parent: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Real:
    """A continuous parameter in ``[low, high]``, uniform in log10 when ``log``."""

    name: str
    low: float
    high: float
    log: bool = False
    condition: Condition | None = None

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise SpaceError(f"{self.name}: low={self.low} must be < high={self.high}")
        if self.log and self.low <= 0:
            raise SpaceError(f"{self.name}: log scale needs low > 0, got {self.low}")

    def _bounds(self) -> tuple[float, float]:
        if self.log:
            return math.log10(self.low), math.log10(self.high)
        return self.low, self.high

    def from_unit(self, u: float) -> float:
        lo, hi = self._bounds()
        v = lo + float(np.clip(u, 0.0, 1.0)) * (hi - lo)
        return float(10.0**v) if self.log else float(v)

    def to_unit(self, value: Value) -> float:
        lo, hi = self._bounds()
        v = math.log10(float(value)) if self.log else float(value)
        return float(np.clip((v - lo) / (hi - lo), 0.0, 1.0))


@dataclass(frozen=True)
class Integer:
    """An integer parameter in ``{low, ..., high}`` (equal-width bins of the unit interval).

    With ``log`` (seed 002, Table 2.1: units ~ log U(18, 1024)), ``u`` maps linearly in log10 to
    ``[low, high]`` and the value is rounded to the nearest integer, as the seed generates
    log-uniform integers ("transformed back and rounded to the nearest integer").
    """

    name: str
    low: int
    high: int
    condition: Condition | None = None
    log: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise SpaceError(f"{self.name}: low={self.low} must be < high={self.high}")
        if self.log and self.low <= 0:
            raise SpaceError(f"{self.name}: log scale needs low > 0, got {self.low}")

    def from_unit(self, u: float) -> int:
        if self.log:
            lo, hi = math.log10(self.low), math.log10(self.high)
            value = round(10.0 ** (lo + float(np.clip(u, 0.0, 1.0)) * (hi - lo)))
            return int(min(max(value, self.low), self.high))
        n = self.high - self.low + 1
        return int(self.low + math.floor((1 - _BIN_EPS) * float(np.clip(u, 0.0, 1.0)) * n))

    def to_unit(self, value: Value) -> float:
        if self.log:
            lo, hi = math.log10(self.low), math.log10(self.high)
            return float(np.clip((math.log10(int(value)) - lo) / (hi - lo), 0.0, 1.0))
        n = self.high - self.low + 1
        return (int(value) - self.low + 0.5) / n  # centre of the value's bin


@dataclass(frozen=True)
class Categorical:
    """A choice among ``choices`` (equal-width bins of the unit interval, in the listed order)."""

    name: str
    choices: tuple[str, ...]
    condition: Condition | None = None

    def from_unit(self, u: float) -> str:
        n = len(self.choices)
        return self.choices[int(math.floor((1 - _BIN_EPS) * float(np.clip(u, 0.0, 1.0)) * n))]

    def to_unit(self, value: Value) -> float:
        return (self.choices.index(str(value)) + 0.5) / len(self.choices)


Parameter = Real | Integer | Categorical


@dataclass(frozen=True)
class Space:
    """An ordered set of parameters; dimension ``i`` of the unit cube is ``parameters[i]``.

    ``learner`` is the learner every configuration trains, unless ``learner_parameter`` names the
    categorical parameter whose value is the learner. ``impute`` is ``"default"`` or ``"none"``.
    """

    name: str
    parameters: tuple[Parameter, ...]
    impute_value: float = 0.5
    learner: str = ""
    learner_parameter: str | None = None
    impute: str = "default"
    settings: tuple[tuple[str, Value], ...] = ()  # fixed learner settings (seed 002's network)
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for i, p in enumerate(self.parameters):
            if p.name in index:
                self._fail(f"duplicate parameter {p.name!r}")
            if p.condition is not None:
                self._check_condition(p, index)
            index[p.name] = i
        if self.impute not in IMPUTE_CHOICES:
            self._fail(
                f"unknown impute {self.impute!r}; valid choices: {', '.join(IMPUTE_CHOICES)}"
            )
        if self.learner_parameter is not None:
            position = index.get(self.learner_parameter)
            chooser = None if position is None else self.parameters[position]
            if not isinstance(chooser, Categorical) or chooser.condition is not None:
                self._fail(
                    f"learner choice {self.learner_parameter!r} is not an unconditional "
                    f"categorical parameter; valid choices: {self._categoricals(index)}"
                )
        object.__setattr__(self, "_index", index)

    def _fail(self, message: str) -> None:
        raise SpaceError(f"space {self.name!r}: {message}")

    def _categoricals(self, index: Mapping[str, int]) -> str:
        names = [n for n, i in index.items() if isinstance(self.parameters[i], Categorical)]
        return ", ".join(names) or "(none)"

    def _check_condition(self, p: Parameter, earlier: Mapping[str, int]) -> None:
        cond = p.condition
        assert cond is not None
        parent = self.parameters[earlier[cond.parent]] if cond.parent in earlier else None
        if not isinstance(parent, Categorical):
            self._fail(
                f"parameter {p.name!r}: condition parent {cond.parent!r} is not a categorical "
                f"parameter declared before it; valid choices: {self._categoricals(earlier)}"
            )
        assert isinstance(parent, Categorical)
        unknown = [v for v in cond.values if v not in parent.choices]
        if unknown:
            self._fail(
                f"parameter {p.name!r}: condition value {unknown[0]!r} is not a choice of "
                f"{parent.name!r}; valid choices: {', '.join(parent.choices)}"
            )

    @property
    def dim(self) -> int:
        return len(self.parameters)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def is_conditional(self) -> bool:
        return any(p.condition is not None for p in self.parameters)

    def is_active(self, parameter: Parameter, config: Mapping[str, Value]) -> bool:
        cond = parameter.condition
        if cond is None:
            return True
        parent = self.parameters[self._index[cond.parent]]
        return self.is_active(parent, config) and config.get(cond.parent) in cond.values

    @property
    def learner_settings(self) -> dict[str, Value]:
        """The learner's fixed settings (the space file's ``settings:``; empty for most)."""
        return dict(self.settings)

    @property
    def learners(self) -> tuple[str, ...]:
        """Every learner a configuration of this space can name."""
        if self.learner_parameter is None:
            return (self.learner,)
        return tuple(self.parameters[self._index[self.learner_parameter]].choices)

    def learner_of(self, config: Mapping[str, Value]) -> str:
        """The learner ``config`` trains: the fixed learner or the chosen one."""
        if self.learner_parameter is None:
            return self.learner
        return str(config[self.learner_parameter])

    def decode(self, u: Sequence[float] | np.ndarray) -> dict[str, Value]:
        """The configuration at unit-cube point ``u``; inactive parameters are left out."""
        u = np.asarray(u, dtype=float)
        if u.shape != (self.dim,):
            raise ValueError(f"expected a point of shape ({self.dim},), got {u.shape}")
        config: dict[str, Value] = {}
        for p, ui in zip(self.parameters, u, strict=True):
            config[p.name] = p.from_unit(float(ui))
        return self._active_part(config)

    def _active_part(self, config: Mapping[str, Value]) -> dict[str, Value]:
        return {p.name: config[p.name] for p in self.parameters if self.is_active(p, config)}

    def encode(self, config: Mapping[str, Value]) -> np.ndarray:
        """The unit-cube point of ``config``; inactive dimensions get ``impute_value`` (a
        configuration keeps no value for them, whatever the ``impute`` setting)."""
        unknown = set(config) - set(self._index)
        if unknown:
            raise ValueError(f"unknown parameters {sorted(unknown)}; valid: {self.names}")
        return np.array(
            [
                p.to_unit(config[p.name]) if self.is_active(p, config) else self.impute_value
                for p in self.parameters
            ]
        )

    def active_mask(self, u: np.ndarray) -> np.ndarray:
        """Boolean mask of the dimensions that are active at ``u``."""
        config = {p.name: p.from_unit(float(ui)) for p, ui in zip(self.parameters, u, strict=True)}
        return np.array([self.is_active(p, config) for p in self.parameters])

    def impute_point(self, u: np.ndarray) -> np.ndarray:
        """``u`` as the surrogate model sees it (thesis §5.3.1): with ``impute: default`` the
        inactive dimensions are set to ``impute_value``; with ``none`` they keep their values."""
        u = np.array(u, dtype=float)
        if self.impute == "default":
            u[~self.active_mask(u)] = self.impute_value
        return u

    def sample(self, rng: np.random.Generator) -> dict[str, Value]:
        """A configuration drawn uniformly in the unit cube (so log-uniformly for ``log``
        parameters); only its active parameters are present."""
        return self.decode(rng.uniform(size=self.dim))

    def neighbours(self, config: Mapping[str, Value], step: float) -> list[dict[str, Value]]:
        """The one-exchange neighbours of ``config`` (thesis §5.3.2, Eq. 5.8), in parameter order.

        Each active real parameter moves by ``+-step`` in unit-cube coordinates (clipped to
        ``[0, 1]``), each active integer by ``+-1`` (within its bounds), each active categorical
        to every other choice; parameters a move activates take the value at ``impute_value``,
        parameters it deactivates are dropped. ``config`` itself and duplicates are left out.
        """
        config = self._active_part(config)
        found: dict[tuple, dict[str, Value]] = {self._key(config): config}
        for p in self.parameters:
            if p.name not in config:
                continue
            for value in self._moves(p, config[p.name], step):
                neighbour = self._with_value(config, p.name, value)
                found.setdefault(self._key(neighbour), neighbour)
        return list(found.values())[1:]

    def _moves(self, p: Parameter, value: Value, step: float) -> list[Value]:
        if isinstance(p, Real):
            u = p.to_unit(value)
            return [p.from_unit(float(np.clip(u + d, 0.0, 1.0))) for d in (-step, step)]
        if isinstance(p, Integer):
            return [v for v in (int(value) - 1, int(value) + 1) if p.low <= v <= p.high]
        return [c for c in p.choices if c != value]

    def _with_value(self, config: Mapping[str, Value], name: str, value: Value) -> dict[str, Value]:
        """``config`` with ``name`` set to ``value``, newly active parameters at their default."""
        changed: dict[str, Value] = {**config, name: value}
        for p in self.parameters:  # parents precede children, so one pass settles activity
            if p.name not in changed and self.is_active(p, changed):
                changed[p.name] = p.from_unit(self.impute_value)
        return self._active_part(changed)

    def _key(self, config: Mapping[str, Value]) -> tuple:
        return tuple((p.name, config[p.name]) for p in self.parameters if p.name in config)


# --- Spaces declared as mappings (conf/space/*.yaml, as PyYAML or OmegaConf reads them) -------

SPACE_KEYS = ("name", "learner", "impute", "parameters", "settings")
PARAMETER_KEYS = {
    "real": ("type", "low", "high", "log", "condition"),
    "integer": ("type", "low", "high", "log", "condition"),
    "categorical": ("type", "choices", "condition"),
}


def space_from_config(config: Mapping[str, object]) -> Space:
    """The :class:`Space` a mapping declares (``docs/learners.md`` gives the format). Numbers may
    be strings (PyYAML reads ``1e-5`` as one); sequences and mappings may be OmegaConf's."""
    reader = _SpaceReader(str(config.get("name", "?")) if isinstance(config, Mapping) else "?")
    return reader.space(config)


class _SpaceReader:
    """Reads one space's mapping, raising one-line :class:`SpaceError` naming the space."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, message: str) -> SpaceError:
        return SpaceError(f"space {self.name!r}: {message}")

    def mapping(self, value: object, where: str) -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            raise self.fail(f"{where} must be a mapping, got {value!r}")
        return value

    def keys(
        self, value: Mapping[str, object], valid: Sequence[str], required: Sequence[str], where: str
    ) -> None:
        for key in value:
            if key not in valid:
                raise self.fail(f"{where}: unknown key {key!r}; valid keys: {', '.join(valid)}")
        for key in required:
            if key not in value:
                raise self.fail(f"{where}: missing key {key!r}")

    def number(self, value: object, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(f"{where} must be a number, got {value!r}")
        try:
            return float(value)
        except ValueError:
            raise self.fail(f"{where} must be a number, got {value!r}") from None

    def integer(self, value: object, where: str) -> int:
        number = self.number(value, where)
        if not number.is_integer():
            raise self.fail(f"{where} must be an integer, got {value!r}")
        return int(number)

    def flag(self, value: object, where: str) -> bool:
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise self.fail(f"{where} must be true or false, got {value!r}")

    def strings(self, value: object, where: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) or not isinstance(value, Sequence) else value
        result = tuple(str(item) for item in items)
        if not result:
            raise self.fail(f"{where} must list at least one value")
        return result

    def space(self, config: object) -> Space:
        config = self.mapping(config, "the space")
        self.keys(config, SPACE_KEYS, ("name", "learner", "parameters"), "the space")
        learner, choice = self.learner(config["learner"])
        impute = str(config.get("impute", "default"))
        if impute not in IMPUTE_CHOICES:
            raise self.fail(
                f"unknown impute {impute!r}; valid choices: {', '.join(IMPUTE_CHOICES)}"
            )
        parameters = self.mapping(config["parameters"], "parameters")
        if not parameters:
            raise self.fail("parameters must not be empty")
        built = tuple(self.parameter(str(n), spec) for n, spec in parameters.items())
        settings = self.settings(config.get("settings", {}))
        return Space(
            self.name,
            built,
            learner=learner,
            learner_parameter=choice,
            impute=impute,
            settings=settings,
        )

    def settings(self, value: object) -> tuple[tuple[str, Value], ...]:
        """A space's fixed learner settings: names to scalar values (checked by the learner,
        :func:`hpo.learners.check_learner_settings`)."""
        value = self.mapping(value or {}, "settings")
        result = []
        for name, item in value.items():
            if isinstance(item, bool):
                item = str(item).lower()
            if not isinstance(item, int | float | str):
                raise self.fail(f"settings: {name!r} must be a number or a string, got {item!r}")
            result.append((str(name), item))
        return tuple(sorted(result))

    def learner(self, value: object) -> tuple[str, str | None]:
        if isinstance(value, str):
            return value, None
        value = self.mapping(value, "learner")
        if list(value) != ["choice"]:
            raise self.fail(
                f"learner must be a learner name or {{choice: <parameter>}}, got {dict(value)!r}"
            )
        return "", str(value["choice"])

    def parameter(self, name: str, spec: object) -> Parameter:
        where = f"parameter {name!r}"
        spec = self.mapping(spec, where)
        kind = spec.get("type")
        if kind not in PARAMETER_KEYS:
            raise self.fail(
                f"{where}: unknown type {kind!r}; valid choices: {', '.join(PARAMETER_KEYS)}"
            )
        required = ("low", "high") if kind != "categorical" else ("choices",)
        self.keys(spec, PARAMETER_KEYS[kind], required, where)
        condition = self.condition(spec["condition"], where) if "condition" in spec else None
        try:
            if kind == "categorical":
                choices = self.strings(spec.get("choices", ()), f"{where}: choices")
                return Categorical(name, choices, condition)
            low, high = spec.get("low"), spec.get("high")
            log = self.flag(spec.get("log", False), f"{where}: log")
            if kind == "integer":
                low, high = self.integer(low, f"{where}: low"), self.integer(high, f"{where}: high")
                return Integer(name, low, high, condition, log)
            low, high = self.number(low, f"{where}: low"), self.number(high, f"{where}: high")
            return Real(name, low, high, log, condition)
        except SpaceError as error:
            if str(error).startswith("space "):
                raise
            raise self.fail(str(error)) from None

    def condition(self, value: object, where: str) -> Condition:
        value = self.mapping(value, f"{where}: condition")
        if len(value) != 1:
            raise self.fail(f"{where}: a condition names one parent, got {dict(value)!r}")
        ((parent, values),) = value.items()
        return Condition(str(parent), self.strings(values, f"{where}: condition values"))
