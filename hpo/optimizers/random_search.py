"""Random search: i.i.d. uniform points in the unit cube (log-uniform on log-scaled parameters)."""

from __future__ import annotations

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Space


class RandomSearch(Optimizer):
    """Draws every point independently from ``U[0, 1]^d`` (thesis §3.3).

    Nothing told changes a proposal (``asks_ahead``): each is the next draw of ``rng``, and its
    batch is its place in the order asked, so asking several before telling any gives the
    proposals of asking one at a time."""

    asks_ahead = True

    def __init__(self, space: Space, budget: int, rng: np.random.Generator) -> None:
        super().__init__(space, budget, rng)
        self._asked = 0

    def ask(self) -> Proposal:
        self._asked += 1
        return Proposal(u=self.rng.uniform(size=self.space.dim), batch=self._asked)
