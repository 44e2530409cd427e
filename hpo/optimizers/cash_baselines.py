"""Seed 004's baselines (§2.1, §4.1): Ex-Def, the full grid and random search.

* :class:`ExDef` — every learner of the space at its WEKA defaults
  (:meth:`~hpo.cash.space.CashSpace.default_config`), each scored by k-fold CV; the best wins.
* :class:`GridSearch` — the union of the base learners' grids: 3 values per numeric
  hyperparameter (min, midpoint, max; the geometric midpoint on a log scale, spec B1.2 [ext]) and
  every value of a categorical, conditional hyperparameters expanded only where active; no
  meta-methods, ensembles or feature selection (as the seed's). Visited in a seeded random order
  (the limited grid is a bootstrap over its results, :func:`limited_grid`).
* :class:`RandomSearch` — configurations drawn from the space's own priors (uniform, or
  log-uniform on a log scale; the root learner choice uniform, §4.1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from hpo.cash.space import CashSpace
from hpo.optimizers.instances import FullEvaluation, OnEveryInstance
from hpo.space.search_space import Categorical, Integer, Parameter, Real, Space


class ExDef(FullEvaluation):
    """Every learner at its defaults (seed §4.1, "Exhaustive-Default")."""

    uses_rng = False  # the defaults, in the library's order: no random number is drawn

    def _begin(self) -> None:
        super()._begin()
        assert self.cash is not None
        self._configs = iter([self.cash.default_config(b) for b in self.cash.learners])

    def propose(self) -> Mapping[str, Any] | None:
        return next(self._configs, None)


def grid_values(p: Parameter, points: int = 3) -> list[Any]:
    """The grid values of one parameter: ``points`` evenly spaced values (geometrically on a
    log scale) for a numeric one, every choice of a categorical."""
    if isinstance(p, Categorical):
        return list(p.choices)
    if isinstance(p, Integer):
        return sorted({int(round(v)) for v in np.linspace(p.low, p.high, points)})
    assert isinstance(p, Real)
    if p.log:
        return [float(v) for v in np.geomspace(p.low, p.high, points)]
    return [float(v) for v in np.linspace(p.low, p.high, points)]


def learner_grid(cash: CashSpace, learner: str, points: int = 3) -> list[dict[str, Any]]:
    """Every grid point of base learner ``learner`` (conditional parameters only when active)."""
    space = cash.space
    root: dict[str, Any] = {"learner": learner}
    if "fs_search" in space.names:
        root["fs_search"] = "none"
    own = [p for p in space.parameters if p.name.startswith(f"base.{learner}.")]

    def expand(config: dict[str, Any], rest: Sequence[Parameter]) -> Iterator[dict[str, Any]]:
        if not rest:
            yield config
            return
        p, tail = rest[0], rest[1:]
        if not space.is_active(p, config):
            yield from expand(config, tail)
            return
        for value in grid_values(p, points):
            yield from expand({**config, p.name: value}, tail)

    return list(expand(root, own))


def full_grid(cash: CashSpace, points: int = 3) -> list[dict[str, Any]]:
    """The union of the base learners' grids (seed §4.1), in the space's learner order."""
    return list(itertools.chain.from_iterable(learner_grid(cash, b, points) for b in cash.base))


class GridSearch(FullEvaluation):
    """The full grid (see the module), in a seeded random order."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        instances: str = "cv",
        budget_factor: float = 1.0,
        points: int = 3,
    ) -> None:
        super().__init__(space, budget, rng, instances, budget_factor)
        if points < 2:
            raise ValueError(f"grid points must be >= 2, got {points}")
        self.points = points

    def _begin(self) -> None:
        super()._begin()
        assert self.cash is not None
        grid = full_grid(self.cash, self.points)
        self.size = len(grid)
        self._configs = iter([grid[i] for i in self.rng.permutation(len(grid))])

    def propose(self) -> Mapping[str, Any] | None:
        return next(self._configs, None)


class RandomSearch(OnEveryInstance):
    """Configurations drawn from the space's priors (seed §4.1): the framework's random search
    (:class:`hpo.optimizers.random_search.RandomSearch`), each configuration on every fold."""

    inner_family = "rs"


def limited_grid(
    seconds: Sequence[float],
    losses: Sequence[float],
    budget: float,
    rng: np.random.Generator,
    n_bootstrap: int = 1000,
) -> np.ndarray:
    """The seed's limited grid (§4.1): draw grid points (with replacement) from a full grid's
    results until their summed evaluation time exceeds ``budget``; for each of ``n_bootstrap``
    draws, the index of the point with the lowest CV loss among them (the point whose test error
    the tables report). ``seconds`` and ``losses`` are per grid point."""
    seconds, losses = np.asarray(seconds, float), np.asarray(losses, float)
    if len(seconds) == 0:
        raise ValueError("the limited grid needs a full grid's results")
    if not seconds.sum() > 0:
        raise ValueError("the limited grid needs the grid points' evaluation times (all are 0)")
    chosen = np.empty(n_bootstrap, dtype=int)
    for b in range(n_bootstrap):
        drawn = draws_until(seconds, budget, rng)
        chosen[b] = drawn[np.argmin(losses[drawn])]
    return chosen


def draws_until(seconds: np.ndarray, budget: float, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn with replacement until their summed ``seconds`` exceed ``budget`` (the
    last one crosses it), drawn in chunks sized by the mean time."""
    chunk = max(1, math.ceil(2 * budget / float(np.mean(seconds))))
    draws = rng.integers(0, len(seconds), size=chunk)
    while np.cumsum(seconds[draws])[-1] <= budget:  # the chunk did not cross it: draw more
        draws = np.concatenate([draws, rng.integers(0, len(seconds), size=chunk)])
    return draws[: int(np.searchsorted(np.cumsum(seconds[draws]), budget, side="right")) + 1]
