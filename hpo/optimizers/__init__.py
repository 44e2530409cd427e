"""Optimizer families behind one ask/tell interface, and the registry the runner uses.

A family is a key of :data:`CLASSES` or, for an optimizer of another package, the dotted path of
its class (``my_pkg.MyOptimizer``, a method file's ``_target_``): every function of the registry
takes either (``docs/optimizers.md``)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

import numpy as np

from hpo.optimizers.base import (
    RESOURCE_KINDS,
    EnsembleProvider,
    MultiFidelity,
    Optimizer,
    PredictionsConsumer,
    PriorConsumer,
    Proposal,
    SurrogateOptimizer,
)
from hpo.optimizers.grid import GridSearch
from hpo.optimizers.random_search import RandomSearch
from hpo.registry import Registry
from hpo.space.search_space import Space

OptimizerFactory = Callable[..., Optimizer]


def _cash(module: str, name: str) -> str:
    """A family of Thornton 2014's CASH methods (a module of this package): proposals on one
    instance at a time, on a CASH space (:mod:`hpo.cash.space`)."""
    return f"hpo.optimizers.{module}:{name}"


# Family name -> class, each module imported when its family is first used (heavy or optional
# dependencies: SMAC3, hyperopt, Optuna, CARP-S); a dotted path is an outside class.
CLASSES: Registry[type[Optimizer]] = Registry(
    "optimizer family",
    {
        "grid": GridSearch,
        "rs": RandomSearch,
        "gp": "hpo.optimizers.bayes:GPEIOptimizer",
        "cma": "hpo.optimizers.cmaes:CMAESOptimizer",
        "smac": "hpo.optimizers.smac:SMACOptimizer",  # the optional smac package (chapter5)
        "eo": "hpo.optimizers.ensemble:EnsembleOptimizer",
        "esmbo": "hpo.optimizers.esmbo:ESMBOOptimizer",  # UAI 2014
        "hypercube": "hpo.optimizers.hypercube:ShrinkingHypercube",  # seed 003 §3.4
        "hyperband": "hpo.optimizers.hyperband:Hyperband",  # seed 002 §1.3.3 (Li et al. 2017)
        "bohb": "hpo.optimizers.bohb:BOHB",  # beyond seed 002: Falkner et al. 2018, SMAC3
        "tpe": "hpo.optimizers.tpe:TPEOptimizer",  # seed 002 §1.2.4.2 (hyperopt)
        "surrogate": "hpo.optimizers.surrogate:SurrogateSMBO",  # seed 002 §2.1.2.1
        "prior_rs": "hpo.optimizers.prior_search:PriorRandomSearch",  # seed 003 §3.4(a)
        "pds": "hpo.optimizers.prior_search:ParametricDensity",  # seed 003 §3.4(c)
        "optuna": "hpo.optimizers.optuna_sampler:OptunaSampler",  # any Optuna sampler
        "carps": "hpo.optimizers.carps_optimizer:CarpsOptimizer",  # any CARP-S optimizer
        # seed 004 (Thornton 2014): CASH methods racing over instances (docs/autoweka.md)
        "cash_exdef": _cash("cash_baselines", "ExDef"),  # §4.1: every learner at its defaults
        "cash_grid": _cash("cash_baselines", "GridSearch"),  # §4.1: the base learners' grid
        "cash_random": _cash("cash_baselines", "RandomSearch"),  # §4.1: the space's priors
        "cash_smac": _cash("smac_instances", "SMACInstances"),  # §2.2.1: folds as instances
        "cash_smac_batch": _cash("smac_instances", "SMACBatch"),  # §4.4: SMAC-10-Batch
        "cash_tpe": _cash("cash_tpe", "TPE"),  # §2.2.2: hyperopt, shared nodes
        "cash_irace": _cash("irace", "IteratedFRace"),  # §2.2.3: I/F-Race
    },
    fallback=lambda family: _target_class(family) if is_target(family) else None,
)
FAMILIES = tuple(CLASSES)
_FIXED_ARGUMENTS = ("self", "space", "budget", "rng")


def setting_names(family: str) -> tuple[str, ...]:
    """The settings (keyword arguments beyond space, budget and rng) of optimizer ``family``."""
    parameters = inspect.signature(optimizer_class(family).__init__).parameters
    return tuple(name for name in parameters if name not in _FIXED_ARGUMENTS)


def check_settings(family: str, settings: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the valid settings if ``settings`` has an unknown one."""
    valid = setting_names(family)
    unknown = sorted(set(settings) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} for optimizer {family!r}; "
            f"valid: {', '.join(valid) or 'none'}"
        )


def make_optimizer(
    family: str, space: Space, budget: int, rng: np.random.Generator, **settings: Any
) -> Optimizer:
    """Build optimizer ``family`` with its ``settings`` (keyword arguments of its class)."""
    check_settings(family, settings)
    return optimizer_class(family)(space, budget, rng, **settings)


def optimizer_class(family: str) -> type[Optimizer]:
    """The class of optimizer ``family``: a family name (:class:`hpo.registry.UnknownChoice`
    naming the valid ones) or a class's dotted path (:class:`OptimizerTargetError` when it does
    not import or is not an :class:`Optimizer`)."""
    return CLASSES.get(family)


class OptimizerTargetError(ValueError):
    """A dotted path that names no optimizer class; the message is one line with the fix."""


def is_target(family: str) -> bool:
    """Whether ``family`` is a class's dotted path rather than a name of :data:`CLASSES`."""
    return "." in family


def _target_class(path: str) -> type[Optimizer]:
    module_name, _, name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise OptimizerTargetError(
            f"optimizer _target_ {path!r} does not import ({err}); install its package or put "
            "it on PYTHONPATH"
        ) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise OptimizerTargetError(
            f"optimizer _target_ {path!r}: module {module_name!r} has no {name!r}"
        )
    if not (isinstance(cls, type) and issubclass(cls, Optimizer)):
        raise OptimizerTargetError(
            f"optimizer _target_ {path!r} is not an optimizer: subclass "
            "hpo.optimizers.Optimizer (ask() -> Proposal, tell(proposal, loss); docs/optimizers.md)"
        )
    return cls


def optimizer_versions(family: str, settings: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The versions a run of ``family`` with ``settings`` records beside the project's packages:
    for a class of another package its module and version (``optimizer:<dotted path>``), and
    the version of every library the class names for these settings
    (:meth:`Optimizer.provenance_libraries`: Optuna for its adapter, CARP-S and the library a
    CARP-S optimizer wraps); empty for a family of this package that names none."""
    cls = optimizer_class(family)
    libraries = cls.provenance_libraries(settings or {})
    versions = {package: _version(package) for package in libraries}
    if is_target(family):
        versions[f"optimizer:{family}"] = _version(cls.__module__.partition(".")[0])
    return versions


def _version(package: str) -> str:
    """A top-level package's version: its ``__version__``, else its distribution's."""
    try:
        version = getattr(importlib.import_module(package), "__version__", None)
    except ImportError:
        version = None
    if isinstance(version, str):
        return version
    for distribution in metadata.packages_distributions().get(package, [package]):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


__all__ = [
    "FAMILIES",
    "RESOURCE_KINDS",
    "EnsembleProvider",
    "OptimizerTargetError",
    "MultiFidelity",
    "GridSearch",
    "Optimizer",
    "PredictionsConsumer",
    "PriorConsumer",
    "Proposal",
    "RandomSearch",
    "SurrogateOptimizer",
    "check_settings",
    "is_target",
    "make_optimizer",
    "optimizer_class",
    "optimizer_versions",
    "setting_names",
]
