"""CARP-S's optimizers behind the ask/tell protocol: any ``carps.optimizers.optimizer.Optimizer``
(CARP-S wraps Nevergrad, HEBO, DEHB, Syne Tune, Ax, scikit-optimize, Optuna and SMAC behind one
ask/tell class on a ConfigSpace), named by ``carps_optimizer: {_target_: ..., <its keyword
arguments>}`` in a method file's settings.

The adapter gives the CARP-S optimizer a CARP-S ``Task`` that carries the space as a ConfigSpace
(:func:`hpo.optimizers.smac.to_configspace`: names, bounds, log scales, conditions) and the budget
as its number of trials; the task's objective function is never called (the framework's loop
evaluates). Proposals are read back the way CARP-S's own ``ObjectiveFunction.evaluate`` reads
them: an optimizer that ignores conditions (Nevergrad's) proposes a value for every
hyperparameter, and only the active ones are kept (``deactivate_inactive_hyperparameters``); the
optimizer is told the loss of the trial it proposed.

Seeding: CARP-S's method files put ``${seed}`` where each library takes its seed
(``nevergrad_cfg.seed``, ``optuna_cfg.study.sampler.seed``, ``skopt_cfg.random_state``,
``synetune_cfg.random_seed`` …). Here the same places say ``from_run``: one seed is drawn from the
run's generator and replaces every ``from_run``, and also seeds the task and the ConfigSpace's
random state (CARP-S's random search samples from it). Settings without ``from_run`` are
refused (unless the class is CARP-S's random search): with a literal seed or none, the run could
not be reproduced from its own seed. Whether a wrapped library is
reproducible from these seeds is what ``hpo.testing.check_optimizer`` checks; the shipped method
files pass it (``tests/test_carps_adapter.py``).

Provenance: a run records the versions of ``carps`` and of the library the CARP-S class wraps
(:data:`LIBRARIES`, from the class's module).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.optimizers.smac import plain_value, to_configspace
from hpo.space.search_space import Space, Value

SEED_PLACEHOLDER = "from_run"
# CARP-S classes that draw from the task's ConfigSpace, which the adapter seeds
SEEDED_BY_TASK = ("RandomSearchOptimizer",)
DEFAULT_OPTIMIZER = {"_target_": "carps.optimizers.random_search.RandomSearchOptimizer"}

# CARP-S's module under carps.optimizers -> the import name of the library it wraps
LIBRARIES = {
    "nevergrad": "nevergrad",
    "optuna": "optuna",
    "smac20": "smac",
    "smac14": "smac",
    "hebo": "hebo",
    "dehb": "dehb",
    "synetune": "syne_tune",
    "ax": "ax",
    "scikit_optimize": "skopt",
}


class CarpsOptimizer(Optimizer):
    """A CARP-S optimizer's proposals, one trial per evaluation, each on its own batch.

    ``carps_optimizer``: ``{_target_: <dotted path of a carps.optimizers.optimizer.Optimizer>,
    <its keyword arguments>}``, ``from_run`` where a seed goes (default: CARP-S's random
    search)."""

    provenance_packages = ("carps",)

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        carps_optimizer: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(space, budget, rng)
        spec = carps_optimizer or DEFAULT_OPTIMIZER
        seed = int(rng.integers(2**31 - 1))
        self.configspace = to_configspace(space, seed)
        task = carps_task(_space_only(self.configspace), budget, seed, space.name or "hpo")
        self.optimizer = make_carps_optimizer(spec, task, seed)
        self.optimizer.setup_optimizer()
        self._pending: dict[int, Any] = {}
        self._asked = 0

    @classmethod
    def provenance_libraries(cls, settings: Mapping[str, Any]) -> tuple[str, ...]:
        library = LIBRARIES.get(_target(settings.get("carps_optimizer") or DEFAULT_OPTIMIZER)[1])
        return (*cls.provenance_packages, *([library] if library else []))

    def ask(self) -> Proposal:
        trial = self.optimizer.ask()
        self._asked += 1
        self._pending[self._asked] = trial
        return Proposal(None, self._asked, config=active_config(self.space, trial.config))

    def tell(self, proposal: Proposal, loss: float) -> None:
        trial = self._pending.pop(proposal.batch, None)
        if trial is None or proposal.config is None:
            raise ValueError(f"proposal (batch {proposal.batch}) is not an untold CARP-S trial")
        from carps.utils.trials import TrialValue

        self.optimizer.tell(trial, TrialValue(cost=float(loss)))
        self.X.append(self.space.encode(proposal.config))
        self.y.append(float(loss))


def active_config(space: Space, configuration: Any) -> dict[str, Value]:
    """The active parameters of a proposed ConfigSpace configuration (or mapping) as ``space``'s
    configuration: values of inactive parameters, which an optimizer that ignores conditions
    proposes, are dropped (parents come first in a space, so one pass settles activity)."""
    values = dict(configuration)
    config: dict[str, Value] = {}
    for p in space.parameters:
        if p.name in values and space.is_active(p, config):
            config[p.name] = plain_value(p, values[p.name])
    return config


def carps_task(
    objective_function: Any, n_trials: int, seed: int, name: str, **metadata: Any
) -> Any:
    """A CARP-S ``Task``: ``objective_function``'s ConfigSpace as its input space, ``n_trials``
    evaluations of one objective, the search space's facts and ``metadata`` as its metadata."""
    from carps.utils.task import (
        InputSpace,
        OptimizationResources,
        OutputSpace,
        Task,
        TaskMetadata,
        get_search_space_info,
    )

    configspace = objective_function.configspace
    return Task(
        name=name,
        objective_function=objective_function,
        input_space=InputSpace(configuration_space=configspace),
        output_space=OutputSpace(n_objectives=1, objectives=("validation_loss",)),
        optimization_resources=OptimizationResources(n_trials=int(n_trials)),
        metadata=TaskMetadata(**get_search_space_info(configspace), **metadata),
        seed=int(seed),
    )


def _space_only(configspace: Any) -> Any:
    """A CARP-S objective function that has ``configspace`` and refuses to be called (the
    framework's loop evaluates)."""
    from carps.objective_functions.objective_function import ObjectiveFunction

    class SpaceOnly(ObjectiveFunction):
        @property
        def configspace(self) -> Any:
            return configspace

        def _evaluate(self, trial_info: Any) -> Any:
            raise RuntimeError("the framework evaluates; CARP-S's own loop is not used")

    return SpaceOnly()


def make_carps_optimizer(spec: Mapping[str, Any], task: Any, seed: int) -> Any:
    """The CARP-S optimizer ``spec`` names, on ``task``, with every ``seed`` key set to ``seed``
    (``ValueError``, one line, for anything that is not a CARP-S optimizer or sets a seed)."""
    path, _ = _target(spec)
    base = _carps().optimizers.optimizer.Optimizer
    module, _, name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError as err:
        raise ValueError(
            f"optimizer setting carps_optimizer: {path!r} does not import ({err}); install the "
            "library it wraps"
        ) from None
    except (AttributeError, ValueError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValueError(
            f"optimizer setting carps_optimizer: {path!r} is not a CARP-S optimizer (a subclass "
            "of carps.optimizers.optimizer.Optimizer, e.g. "
            "carps.optimizers.nevergrad.NevergradOptimizer)"
        )
    kwargs = {str(k): copy.deepcopy(v) for k, v in spec.items() if k != "_target_"}
    if not _fill_seed(kwargs, seed) and cls.__name__ not in SEEDED_BY_TASK:
        raise ValueError(
            f"optimizer setting carps_optimizer: {path} is given no seed; write from_run where "
            "its CARP-S method file writes ${seed} (e.g. nevergrad_cfg: {seed: from_run})"
        )
    from omegaconf import OmegaConf

    # CARP-S's classes read their settings as DictConfig attributes (nevergrad_cfg.seed)
    configs = {k: OmegaConf.create(v) if isinstance(v, Mapping) else v for k, v in kwargs.items()}
    try:
        return cls(task=task, **configs)
    except (TypeError, ValueError) as err:
        raise ValueError(f"optimizer setting carps_optimizer: {path}: {err}") from None


def _target(spec: Mapping[str, Any]) -> tuple[str, str]:
    """The dotted path ``spec`` names and the CARP-S module it is in (``nevergrad`` …)."""
    if not isinstance(spec, Mapping) or "_target_" not in spec:
        raise ValueError(
            "optimizer setting carps_optimizer must be {_target_: "
            f"carps.optimizers.<module>.<Optimizer>, ...}}, got {spec!r}"
        )
    path = str(spec["_target_"])
    parts = path.split(".")
    return path, parts[2] if len(parts) > 3 and parts[:2] == ["carps", "optimizers"] else ""


def _fill_seed(tree: dict[str, Any], seed: int) -> bool:
    """Replace every ``from_run`` value in ``tree`` (nested dicts) by ``seed``; whether any was."""
    found = False
    for key, value in tree.items():
        if value == SEED_PLACEHOLDER:
            tree[key], found = seed, True
        elif isinstance(value, dict):
            found = _fill_seed(value, seed) or found
    return found


def _carps() -> Any:
    try:
        importlib.import_module("carps.optimizers.optimizer")
        return importlib.import_module("carps")
    except ImportError:
        raise ValueError(
            "the carps optimizer needs the carps package: pip install -e '.[carps]'"
        ) from None
