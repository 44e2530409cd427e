"""The ask/tell protocol every optimizer implements.

An optimizer sees only points of the unit cube ``[0, 1]^d`` and the losses told back to it: never
the data, the splits, the selection-split scores or the test error. Reshuffling, k-fold and
selection splits live in :mod:`hpo.protocol`, so every optimizer gets them for free.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from hpo.space import Space


@dataclass(frozen=True)
class Proposal:
    """One point to evaluate.

    ``u``: shape ``(d,)``, inside the unit cube. ``batch``: the group of evaluations that share one
    training/validation split when the protocol reshuffles (the iteration for sequential optimizers,
    the generation for CMA-ES; thesis §3.3.2).
    """

    u: np.ndarray
    batch: int


class Optimizer(ABC):
    """Ask/tell optimizer over the unit cube of ``space``, for at most ``budget`` evaluations.

    Subclasses store their settings in ``__init__`` and draw every random number from ``rng``
    (a ``numpy.random.Generator`` derived by :mod:`hpo.seeding`).
    """

    def __init__(self, space: Space, budget: int, rng: np.random.Generator) -> None:
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.space = space
        self.budget = budget
        self.rng = rng
        self.X: list[np.ndarray] = []
        self.y: list[float] = []

    @abstractmethod
    def ask(self) -> Proposal:
        """The next point to evaluate."""

    def tell(self, proposal: Proposal, loss: float) -> None:
        """Record the validation loss of ``proposal`` (what the optimizer is allowed to see)."""
        self.X.append(np.asarray(proposal.u, dtype=float))
        self.y.append(float(loss))


class SurrogateOptimizer(Optimizer):
    """An optimizer with a surrogate model whose posterior mean can be minimised (``-pm`` rules)."""

    @abstractmethod
    def posterior_mean_argmin(self, domain: str = "space") -> np.ndarray:
        """The unit-cube minimiser of the integrated posterior mean given everything told so far.

        ``domain="space"`` searches the whole cube; ``"observed"`` only the evaluated points.
        """
