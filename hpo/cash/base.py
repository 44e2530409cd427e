"""The ask/tell protocol of seed 004's optimisers: requests are (configuration, instance) pairs.

SMAC races configurations instance by instance and I/F-Race fold by fold (seed §2.2), so an
optimiser here asks for one configuration on one instance at a time and is told that loss; one
that scores each configuration on every instance (Ex-Def, grid, random search, TPE, SMAC-10-Batch;
§4.1, §4.4) derives from :class:`FullEvaluation`, which asks its configurations' instances in
order and hands it the mean. Optimisers never see the data, only losses (as
:mod:`hpo.optimizers.base`'s). ``ask`` returns ``None`` when the optimiser has nothing left to
evaluate (a finished grid); the run's time budget stops the others.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo.cash.space import CashSpace


@dataclass(frozen=True)
class Request:
    """Evaluate ``config`` on instance ``instance``."""

    config: Mapping[str, Any]
    instance: int
    tag: int = 0  # the optimiser's own reference (SMAC's pending trial)


class CashOptimizer(ABC):
    """Ask/tell over (configuration, instance) requests on a :class:`~hpo.cash.space.CashSpace`."""

    def __init__(self, cash: CashSpace, n_instances: int, rng: np.random.Generator) -> None:
        self.cash = cash
        self.space = cash.space
        self.n_instances = n_instances
        self.rng = rng

    @abstractmethod
    def ask(self) -> Request | None:
        """The next evaluation, or ``None`` when the optimiser has finished."""

    @abstractmethod
    def tell(self, request: Request, loss: float) -> None:
        """The loss of ``request``."""

    @abstractmethod
    def incumbent(self) -> Mapping[str, Any] | None:
        """The configuration the optimiser would return now (``None`` before any)."""


class FullEvaluation(CashOptimizer):
    """Each configuration on every instance in order, then :meth:`observe` with the mean; the
    incumbent is the configuration with the lowest mean so far (the earliest on ties)."""

    def __init__(self, cash: CashSpace, n_instances: int, rng: np.random.Generator) -> None:
        super().__init__(cash, n_instances, rng)
        self._current: Mapping[str, Any] | None = None
        self._losses: list[float] = []
        self._best: tuple[float, Mapping[str, Any]] | None = None

    @abstractmethod
    def propose(self) -> Mapping[str, Any] | None:
        """The next configuration to score on every instance (``None``: finished)."""

    def observe(self, config: Mapping[str, Any], loss: float) -> None:
        """The mean loss of a configuration scored on every instance (default: nothing)."""

    def ask(self) -> Request | None:
        if self._current is None:
            self._current = self.propose()
            self._losses = []
            if self._current is None:
                return None
        return Request(self._current, len(self._losses))

    def tell(self, request: Request, loss: float) -> None:
        if self._current is None or request.instance != len(self._losses):
            raise ValueError("told a request that was not asked")
        self._losses.append(float(loss))
        if len(self._losses) == self.n_instances:
            mean = float(np.mean(self._losses))
            if self._best is None or mean < self._best[0]:
                self._best = (mean, self._current)
            self.observe(self._current, mean)
            self._current = None

    def incumbent(self) -> Mapping[str, Any] | None:
        return None if self._best is None else self._best[1]
