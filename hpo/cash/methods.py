"""Seed 004's optimiser families by name, and the settings each accepts (the method names and
their settings are in ``conf/autoweka/methods.yaml``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpo.cash.base import CashOptimizer
from hpo.cash.objective import INSTANCE_KINDS
from hpo.cash.space import CashSpace


def _baselines(name: str) -> Callable[[], type[CashOptimizer]]:
    def load() -> type[CashOptimizer]:
        from hpo.cash import baselines

        return getattr(baselines, name)

    return load


def _smac(name: str) -> Callable[[], type[CashOptimizer]]:
    def load() -> type[CashOptimizer]:
        from hpo.cash import smac_instances  # needs the optional smac package

        return getattr(smac_instances, name)

    return load


def _tpe() -> type[CashOptimizer]:
    from hpo.cash.tpe import TPE  # needs hyperopt

    return TPE


def _irace() -> type[CashOptimizer]:
    from hpo.cash.irace import IteratedFRace

    return IteratedFRace


FAMILIES: dict[str, Callable[[], type[CashOptimizer]]] = {
    "exdef": _baselines("ExDef"),
    "grid": _baselines("GridSearch"),
    "random": _baselines("RandomSearch"),
    "smac": _smac("SMACInstances"),
    "smac_batch": _smac("SMACBatch"),
    "tpe": _tpe,
    "irace": _irace,
}
_FIXED = ("self", "cash", "n_instances", "rng")


@dataclass(frozen=True)
class MethodSpec:
    """A named method: its family, instances, settings and budget factor."""

    name: str
    family: str
    instances: str = "cv"
    settings: Mapping[str, Any] = field(default_factory=dict)
    budget_factor: float = 1.0

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(
                f"method {self.name!r}: unknown family {self.family!r}; "
                f"valid choices: {', '.join(FAMILIES)}"
            )
        if self.instances not in INSTANCE_KINDS:
            raise ValueError(
                f"method {self.name!r}: unknown instances {self.instances!r}; "
                f"valid choices: {', '.join(INSTANCE_KINDS)}"
            )
        if not self.budget_factor > 0:
            raise ValueError(f"method {self.name!r}: budget_factor must be > 0")
        valid = setting_names(self.family)
        unknown = sorted(set(self.settings) - set(valid))
        if unknown:
            raise ValueError(
                f"unknown setting {unknown[0]!r} for method {self.name!r}; "
                f"valid: {', '.join(valid) or 'none'}"
            )


def setting_names(family: str) -> tuple[str, ...]:
    """The settings (keyword arguments beyond the space, instances and rng) of ``family``."""
    parameters = inspect.signature(FAMILIES[family]().__init__).parameters
    return tuple(name for name in parameters if name not in _FIXED)


def methods_from_config(config: Mapping[str, Mapping[str, Any]]) -> dict[str, MethodSpec]:
    """The methods of ``conf/autoweka/methods.yaml``."""
    return {
        str(name): MethodSpec(
            str(name),
            str(spec["family"]),
            str(spec.get("instances", "cv")),
            dict(spec.get("settings") or {}),
            float(spec.get("budget_factor", 1.0)),
        )
        for name, spec in config.items()
    }


def make_method(
    spec: MethodSpec, cash: CashSpace, n_instances: int, rng: np.random.Generator, **extra: Any
) -> CashOptimizer:
    """The optimiser of ``spec`` (``extra`` settings override the method's own)."""
    settings = {**spec.settings, **extra}
    MethodSpec(spec.name, spec.family, spec.instances, settings, spec.budget_factor)  # checks
    return FAMILIES[spec.family]()(cash, n_instances, rng, **settings)
