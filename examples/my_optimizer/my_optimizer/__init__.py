"""A worked example of an optimizer from outside the framework: a local random search.

It subclasses the framework's public :class:`hpo.optimizers.Optimizer` (``docs/optimizers.md``
of hpo-thesis), draws every number from the generator it is given, and ships its own method file
(``conf/optimizer/my_local_search.yaml``), which names the class by ``_target_``.
"""

from __future__ import annotations

import numpy as np

from hpo.optimizers import Optimizer, Proposal
from hpo.space.search_space import Space

__version__ = "0.1.0"


class LocalSearch(Optimizer):
    """``n_initial`` uniform points of the unit cube, then Gaussian steps of width ``scale``
    around the best point told so far (clipped to the cube)."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        n_initial: int = 3,
        scale: float = 0.1,
    ) -> None:
        super().__init__(space, budget, rng)
        if n_initial < 1:
            raise ValueError(f"n_initial must be >= 1, got {n_initial}")
        if not scale > 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        self.n_initial, self.scale = n_initial, float(scale)

    def ask(self) -> Proposal:
        if len(self.y) < self.n_initial:
            u = self.rng.uniform(size=self.space.dim)
        else:
            best = self.X[int(np.argmin(self.y))]
            u = np.clip(best + self.scale * self.rng.standard_normal(self.space.dim), 0.0, 1.0)
        return Proposal(u=u, batch=len(self.y) + 1)
