"""Search spaces: parameters, scales, conditions and the unit-cube encoding every optimizer sees.

Every parameter occupies one dimension of ``[0, 1]^d``. Continuous parameters map linearly, or
linearly in log10 for ``log=True`` (thesis §2.6.1: ``u = (log10 v - lo) / (hi - lo)``). Integers
and categoricals use Spearmint's equal-width bins,
``value = low + floor((1 - eps) u (high - low + 1))`` (spec ch2-3 §1.5). A parameter may carry
a :class:`Condition` on a categorical parent: it is active only when the parent takes one of the
listed values; inactive dimensions are imputed with ``Space.impute_value`` when a configuration
is encoded (Chapter 5's conditional spaces).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

_BIN_EPS = 1e-12
Value = float | int | str


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
            raise ValueError(f"{self.name}: low={self.low} must be < high={self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"{self.name}: log scale needs low > 0, got {self.low}")

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
    """An integer parameter in ``{low, ..., high}`` (equal-width bins of the unit interval)."""

    name: str
    low: int
    high: int
    condition: Condition | None = None

    def from_unit(self, u: float) -> int:
        n = self.high - self.low + 1
        return int(self.low + math.floor((1 - _BIN_EPS) * float(np.clip(u, 0.0, 1.0)) * n))

    def to_unit(self, value: Value) -> float:
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
    """An ordered set of parameters; dimension ``i`` of the unit cube is ``parameters[i]``."""

    name: str
    parameters: tuple[Parameter, ...]
    impute_value: float = 0.5
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {p.name: i for i, p in enumerate(self.parameters)}
        if len(index) != len(self.parameters):
            raise ValueError(f"space {self.name!r} has duplicate parameter names")
        for p in self.parameters:
            if p.condition is not None:
                parent = self.parameters[index[p.condition.parent]]
                if not isinstance(parent, Categorical):
                    raise ValueError(f"{p.name}: condition parent {parent.name} is not categorical")
        object.__setattr__(self, "_index", index)

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

    def decode(self, u: Sequence[float] | np.ndarray) -> dict[str, Value]:
        """The configuration at unit-cube point ``u``; inactive parameters are left out."""
        u = np.asarray(u, dtype=float)
        if u.shape != (self.dim,):
            raise ValueError(f"expected a point of shape ({self.dim},), got {u.shape}")
        config: dict[str, Value] = {}
        for p, ui in zip(self.parameters, u, strict=True):
            config[p.name] = p.from_unit(float(ui))
        return {p.name: config[p.name] for p in self.parameters if self.is_active(p, config)}

    def encode(self, config: Mapping[str, Value]) -> np.ndarray:
        """The unit-cube point of ``config``; inactive dimensions get ``impute_value``."""
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


def svm_rbf_space() -> Space:
    """Chapter 3's RBF-SVM space: C and gamma log10-uniform in [1e-5, 1e5] (thesis §3.3)."""
    return Space(
        "svm_rbf",
        (Real("C", 1e-5, 1e5, log=True), Real("gamma", 1e-5, 1e5, log=True)),
    )


def random_forest_space() -> Space:
    """Table 2.1: random-forest space, all linear integers / one categorical (thesis §2.6.2)."""
    return Space(
        "random_forest",
        (
            Integer("n_estimators", 2, 50),
            Categorical("criterion", ("gini", "entropy")),
            Integer("max_depth", 2, 150),
            Integer("min_samples_split", 2, 30),
            Integer("min_samples_leaf", 1, 30),
        ),
    )


SPACES = {"svm_rbf": svm_rbf_space, "random_forest": random_forest_space}


def get_space(name: str) -> Space:
    """The registered space ``name`` (raises ``KeyError`` naming the valid choices)."""
    if name not in SPACES:
        raise KeyError(f"unknown space {name!r}; valid choices: {', '.join(sorted(SPACES))}")
    return SPACES[name]()
