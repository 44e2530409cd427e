"""Random search: i.i.d. uniform points in the unit cube (log-uniform on log-scaled parameters)."""

from __future__ import annotations

from hpo.optimizers.base import Optimizer, Proposal


class RandomSearch(Optimizer):
    """Draws every point independently from ``U[0, 1]^d`` (thesis §3.3)."""

    def ask(self) -> Proposal:
        return Proposal(u=self.rng.uniform(size=self.space.dim), batch=len(self.y) + 1)
