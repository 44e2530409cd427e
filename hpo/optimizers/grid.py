"""Grid search: a full factorial grid in the unit cube, visited in a random order (thesis §3.3)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Space


def points_per_axis(budget: int, dim: int) -> int:
    """The default grid's values per axis: the largest full grid within ``budget`` evaluations,
    ``floor(budget ** (1/dim))`` (at least 1)."""
    return max(1, int(np.floor(budget ** (1.0 / dim) + 1e-9)))


class GridSearch(Optimizer):
    """``points_per_dim`` equally spaced values per dimension, endpoints included.

    The default takes the largest grid that fits the budget, ``floor(budget ** (1/d))`` per axis:
    10 x 10 for the thesis's 100 evaluations in 2-D, that is ``np.logspace(-5, 5, 10)`` for C and
    gamma. The visiting order is a random permutation (it only matters for per-iteration curves
    and ties). A budget larger than the grid stops at the grid's size.
    """

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        points_per_dim: int | None = None,
        shuffle: bool = True,
    ) -> None:
        super().__init__(space, budget, rng)
        if points_per_dim is None:
            points_per_dim = points_per_axis(budget, space.dim)
        axis = np.linspace(0.0, 1.0, points_per_dim) if points_per_dim > 1 else np.array([0.5])
        grid = np.array(list(itertools.product(axis, repeat=space.dim)), dtype=float)
        order = rng.permutation(len(grid)) if shuffle else np.arange(len(grid))
        self.points = grid[order]
        self._next = 0

    @classmethod
    def axes(cls, settings: Mapping[str, Any], budget: int, dim: int) -> int:
        """Values per axis of the grid a run with ``settings`` and ``budget`` searches."""
        per_axis = settings.get("points_per_dim")
        return int(per_axis) if per_axis is not None else points_per_axis(budget, dim)

    @classmethod
    def planned_evaluations(cls, settings: Mapping[str, Any], budget: int, dim: int) -> int:
        """The grid's size, ``values per axis ** dim``."""
        return cls.axes(settings, budget, dim) ** dim

    @classmethod
    def plan_note(cls, settings: Mapping[str, Any], budget: int, dim: int) -> str:
        per_axis = cls.axes(settings, budget, dim)
        which = (
            f"the largest full grid within budget {budget}"
            if settings.get("points_per_dim") is None
            else f"optimizer.settings.points_per_dim={per_axis}; budget {budget}"
        )
        return f"{which}: {per_axis} values on each of {dim} axes"

    def ask(self) -> Proposal:
        if self._next >= len(self.points):
            raise StopIteration("grid exhausted")
        u = self.points[self._next]
        self._next += 1
        return Proposal(u=u.copy(), batch=self._next)
