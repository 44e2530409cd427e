"""Seed 004's optimisers on the framework's one ask/tell protocol: a :class:`Proposal` carries a
configuration and, for a method that races, the instance (a fold, a subsample) to evaluate it on.

SMAC races configurations instance by instance and I/F-Race fold by fold (seed §2.2), so an
optimiser here asks for one configuration on one instance at a time and is told that loss; one
that scores each configuration on every instance (Ex-Def, grid, random search, TPE, SMAC-10-Batch;
§4.1, §4.4) derives from :class:`FullEvaluation`, which asks its configurations' instances in
order and hands it the mean. Optimisers never see the data, only losses. ``ask`` raises
``StopIteration`` when the optimiser has nothing left to evaluate (a finished grid); the run's
budget (evaluations, or seconds of CPU or wall time) stops the others.

A :class:`CashOptimizer` is built like every optimizer of the registry (``space``, ``budget``,
``rng``, its settings) and then :meth:`~CashOptimizer.start`-ed by the run with the CASH space it
searches and the number of instances, which the data decide (10 folds, 40 nested folds, 1,000
random splits); every random number it draws is drawn from then on.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from hpo.cash.space import CashSpace
from hpo.evaluation.instances import INSTANCE_KINDS
from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Space


class CashOptimizer(Optimizer):
    """Ask/tell over (configuration, instance) proposals on a :class:`~hpo.cash.space.CashSpace`.

    Settings every seed-004 method has: ``instances`` (``cv``, ``multilevel`` or ``rrsv``,
    :mod:`hpo.evaluation.instances`) and ``budget_factor`` (checked here; the run of its
    trials, :mod:`experiments.run.instances`, multiplies the run's budgets by it; SMAC-Long runs
    4 x, §4.4)."""

    races_instances = True

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        instances: str = "cv",
        budget_factor: float = 1.0,
    ) -> None:
        super().__init__(space, budget, rng)
        if instances not in INSTANCE_KINDS:
            raise ValueError(
                f"unknown instances {instances!r}; valid choices: {', '.join(INSTANCE_KINDS)}"
            )
        if not budget_factor > 0:
            raise ValueError(f"budget_factor must be > 0, got {budget_factor}")
        self.instances = (
            instances  # budget_factor is the run's to apply (experiments.run.instances)
        )
        self.cash: CashSpace | None = None
        self.n_instances = 0
        self._asked = 0

    def start(self, cash: CashSpace, n_instances: int) -> None:
        """Search ``cash`` over ``n_instances`` instances (called once, before the first ask)."""
        self.cash, self.space, self.n_instances = cash, cash.space, n_instances
        self._begin()

    def _begin(self) -> None:
        """The family's state, once the space and instances are known (default: none)."""

    def _proposal(self, config: Mapping[str, Any], instance: int) -> Proposal:
        self._asked += 1
        return Proposal(None, self._asked, config=config, instance=instance)

    @abstractmethod
    def ask(self) -> Proposal:
        """The next (configuration, instance); ``StopIteration`` when the optimiser is done."""

    @abstractmethod
    def tell(self, proposal: Proposal, loss: float) -> None:
        """The loss of ``proposal``."""

    @abstractmethod
    def incumbent(self) -> Mapping[str, Any] | None:
        """The configuration the optimiser would return now (``None`` before any)."""


class FullEvaluation(CashOptimizer):
    """Each configuration on every instance in order, then :meth:`observe` with the mean; the
    incumbent is the configuration with the lowest mean so far (the earliest on ties)."""

    def _begin(self) -> None:
        self._current: Mapping[str, Any] | None = None
        self._losses: list[float] = []
        self._best: tuple[float, Mapping[str, Any]] | None = None

    @abstractmethod
    def propose(self) -> Mapping[str, Any] | None:
        """The next configuration to score on every instance (``None``: finished)."""

    def observe(self, config: Mapping[str, Any], loss: float) -> None:
        """The mean loss of a configuration scored on every instance (default: nothing)."""

    def ask(self) -> Proposal:
        if self._current is None:
            self._current = self.propose()
            self._losses = []
            if self._current is None:
                raise StopIteration
        return self._proposal(self._current, len(self._losses))

    def tell(self, proposal: Proposal, loss: float) -> None:
        if self._current is None or proposal.instance != len(self._losses):
            raise ValueError("told a proposal that was not asked")
        self._losses.append(float(loss))
        if len(self._losses) == self.n_instances:
            mean = float(np.mean(self._losses))
            if self._best is None or mean < self._best[0]:
                self._best = (mean, self._current)
            self.observe(self._current, mean)
            self._current = None

    def incumbent(self) -> Mapping[str, Any] | None:
        return None if self._best is None else self._best[1]


class OnEveryInstance(FullEvaluation):
    """An optimizer of the registry (``inner_family``, one that proposes whole configurations)
    whose every proposal is scored on every instance and told the mean: the same optimizer as
    every study's, on the seed's instances. It draws from the run's generator."""

    inner_family: str

    def _begin(self) -> None:
        super()._begin()
        self.inner = self._inner()
        self._inner_proposal: Proposal | None = None

    def _inner(self) -> Optimizer:
        """The optimizer asked for configurations (default: ``inner_family`` at its defaults)."""
        from hpo.optimizers import make_optimizer

        return make_optimizer(self.inner_family, self.space, self.budget, self.rng)

    def propose(self) -> Mapping[str, Any] | None:
        self._inner_proposal = self.inner.ask()
        if self._inner_proposal.config is not None:
            return dict(self._inner_proposal.config)
        return self.space.decode(np.asarray(self._inner_proposal.u))

    def observe(self, config: Mapping[str, Any], loss: float) -> None:
        assert self._inner_proposal is not None
        self.inner.tell(self._inner_proposal, loss)
        self._inner_proposal = None
