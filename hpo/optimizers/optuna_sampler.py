"""Optuna's samplers behind the ask/tell protocol: any ``optuna.samplers.BaseSampler``, named by
``sampler: {_target_: optuna.samplers.TPESampler, ...}`` in a method file's settings, drives an
in-memory study through ``study.ask(fixed_distributions)`` and ``study.tell``.

The space maps to Optuna's distributions one parameter each: ``Real`` to ``FloatDistribution``
(``log`` kept), ``Integer`` to ``IntDistribution`` (``log`` kept), ``Categorical`` to
``CategoricalDistribution``. Conditions follow Optuna's own define-by-run convention: the
unconditional parameters are fixed by ``study.ask(fixed_distributions)``, a conditional one is
suggested after its parent and only when active, so a trial holds exactly the configuration's
active parameters and a sampler never models a value that had no effect on the loss (an imputed
or never-used value would be noise to TPE's densities and a fake dimension to the GP). Samplers
that model a joint ("relative") space, GP and CMA-ES, model the parameters every trial has (the
unconditional ones) jointly and draw the conditional ones from their independent sampler, as they
do in Optuna's own loop (``docs/optimizers.md``).

Seeding: the sampler's ``seed`` is drawn from the run's generator; a sampler that takes no seed,
or a method file that sets one, is refused (the run could not be reproduced from its seed).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Categorical, Integer, Parameter, Real, Space

DEFAULT_SAMPLER = {"_target_": "optuna.samplers.TPESampler"}


class OptunaSampler(Optimizer):
    """An Optuna sampler's proposals, one trial per evaluation, each on its own batch.

    ``sampler``: ``{_target_: <dotted path of an optuna.samplers.BaseSampler>, <its keyword
    arguments but seed>}`` (default: ``TPESampler`` at Optuna's defaults)."""

    provenance_packages = ("optuna",)

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        sampler: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(space, budget, rng)
        optuna = _optuna()
        optuna.logging.set_verbosity(logging.WARNING)  # no line per trial
        self.sampler = make_sampler(sampler or DEFAULT_SAMPLER, int(rng.integers(2**31 - 1)))
        self.study = optuna.create_study(direction="minimize", sampler=self.sampler)
        self.distributions = {p.name: distribution(p) for p in space.parameters}
        self.fixed = {
            p.name: self.distributions[p.name] for p in space.parameters if p.condition is None
        }
        self.conditional = [p for p in space.parameters if p.condition is not None]
        self._pending: dict[int, Any] = {}
        self._asked = 0

    def ask(self) -> Proposal:
        trial = self.study.ask(self.fixed)
        config = dict(trial.params)
        for p in self.conditional:  # parents come first: one pass settles activity
            if self.space.is_active(p, config):
                config[p.name] = _suggest(trial, p, self.distributions[p.name])
        self._asked += 1
        self._pending[self._asked] = trial
        return Proposal(None, self._asked, config=config)

    def tell(self, proposal: Proposal, loss: float) -> None:
        trial = self._pending.pop(proposal.batch, None)
        if trial is None or proposal.config is None:
            raise ValueError(f"proposal (batch {proposal.batch}) is not an untold Optuna trial")
        self.study.tell(trial, float(loss))
        self.X.append(self.space.encode(proposal.config))
        self.y.append(float(loss))


def _optuna() -> Any:
    try:
        return importlib.import_module("optuna")
    except ImportError:
        raise ValueError(
            "the optuna optimizer needs the optuna package: pip install -e '.[optuna]'"
        ) from None


def make_sampler(spec: Mapping[str, Any], seed: int) -> Any:
    """The sampler ``spec`` names (``{_target_: ..., **kwargs}``), seeded with ``seed``
    (``ValueError``, one line, for anything that is not a seedable Optuna sampler)."""
    optuna = _optuna()
    if not isinstance(spec, Mapping) or "_target_" not in spec:
        raise ValueError(
            f"optimizer setting sampler must be {{_target_: optuna.samplers.<Sampler>, ...}}, "
            f"got {spec!r}"
        )
    kwargs = {str(k): v for k, v in spec.items() if k != "_target_"}
    target = str(spec["_target_"])
    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, optuna.samplers.BaseSampler)):
        raise ValueError(
            f"optimizer setting sampler: {target!r} is not an Optuna sampler (a subclass of "
            "optuna.samplers.BaseSampler, e.g. optuna.samplers.TPESampler)"
        )
    if "seed" in kwargs:
        raise ValueError(
            "optimizer setting sampler: remove seed; the sampler's seed is drawn from the run's "
            "seed (seed=<int> on the command line)"
        )
    if "seed" not in inspect.signature(cls).parameters:
        raise ValueError(
            f"optimizer setting sampler: {target} takes no seed, so its runs could not be "
            "reproduced; choose a sampler that takes one"
        )
    try:
        return cls(**kwargs, seed=seed)
    except TypeError as err:
        raise ValueError(f"optimizer setting sampler: {target}: {err}") from None


def distribution(parameter: Parameter) -> Any:
    """The Optuna distribution of one parameter of the space."""
    distributions = _optuna().distributions
    if isinstance(parameter, Real):
        return distributions.FloatDistribution(parameter.low, parameter.high, log=parameter.log)
    if isinstance(parameter, Integer):
        return distributions.IntDistribution(parameter.low, parameter.high, log=parameter.log)
    if isinstance(parameter, Categorical):
        return distributions.CategoricalDistribution(parameter.choices)
    raise TypeError(f"unknown parameter type {type(parameter).__name__}")


def _suggest(trial: Any, parameter: Parameter, dist: Any) -> Any:
    if isinstance(parameter, Categorical):
        return trial.suggest_categorical(parameter.name, parameter.choices)
    if isinstance(parameter, Integer):
        return trial.suggest_int(parameter.name, dist.low, dist.high, log=dist.log)
    return trial.suggest_float(parameter.name, dist.low, dist.high, log=dist.log)
