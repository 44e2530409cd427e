"""The shrinking-hypercube optimizer of seed 003 (Bermúdez-Chacón 2014, §3.4, Algorithm 1, after
Gonnet, Scholl & Stevenson 2010).

Each categorical signature (the active categorical values, seed §3.1.2) keeps its own hypercube
over its active numeric dimensions of the unit cube. A cube starts at a random point; each new
point is drawn uniformly in the cube of side ``L`` centred at the best point so far (clipped to
the unit cube). On success (a lower loss: the framework minimises, the seed maximises a score)
the cube moves to the new point and doubles, ``L <- 2 L`` (at most 1); on failure it shrinks,
``L <- c L``. When ``L <= L_min`` it restarts from a new random point with ``L0`` (the global best
stays in the trace). Which signature the next point explores is drawn as random search draws its
categoricals (uniform in the unit cube) [decision]; a signature without numeric dimensions is
proposed as random search would.

Settings (all [decision], the seed gives none; docs/hierarchical.md): ``initial_side`` L0 = 0.5,
``shrink`` c = 0.9, ``grow`` = 2, ``min_side`` L_min = 1e-3, sides in unit-cube coordinates
(so log-scaled parameters move in log space).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Categorical, Space

INITIAL_SIDE = 0.5
SHRINK = 0.9
GROW = 2.0
MIN_SIDE = 1e-3
MAX_SIDE = 1.0  # a cube never exceeds the unit cube [decision]


def next_side(side: float, improved: bool, grow: float = GROW, shrink: float = SHRINK) -> float:
    """Algorithm 1's rule: double on success (at most :data:`MAX_SIDE`), shrink by ``c`` on
    failure."""
    return min(side * grow, MAX_SIDE) if improved else side * shrink


@dataclass
class Hypercube:
    """One signature's cube: its centre (unit coordinates of the signature's numeric dimensions),
    the loss there, its side and how many times it restarted."""

    side: float
    centre: np.ndarray | None = None
    loss: float = float("inf")
    restarts: int = 0
    history: list[tuple[float, bool]] = field(default_factory=list)  # (side before, improved)

    def update(self, point: np.ndarray, loss: float, grow: float, shrink: float) -> bool:
        """Tell the cube the loss at ``point``; returns whether it improved."""
        if self.centre is None:  # the (re)start point: it becomes the centre
            self.centre, self.loss = point.copy(), float(loss)
            return True
        improved = bool(loss < self.loss)
        self.history.append((self.side, improved))
        if improved:
            self.centre, self.loss = point.copy(), float(loss)
        self.side = next_side(self.side, improved, grow, shrink)
        return improved


class ShrinkingHypercube(Optimizer):
    """Ask/tell shrinking hypercubes, one per categorical signature (§3.4, Algorithm 1)."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        initial_side: float = INITIAL_SIDE,
        shrink: float = SHRINK,
        grow: float = GROW,
        min_side: float = MIN_SIDE,
    ) -> None:
        super().__init__(space, budget, rng)
        if not 0 < initial_side <= MAX_SIDE:
            raise ValueError(f"initial_side={initial_side} must be in (0, {MAX_SIDE}]")
        if not 0 < shrink < 1:
            raise ValueError(f"shrink={shrink} must be in (0, 1)")
        if not grow >= 1:
            raise ValueError(f"grow={grow} must be >= 1")
        if not 0 < min_side < initial_side:
            raise ValueError(f"min_side={min_side} must be in (0, initial_side={initial_side})")
        self.initial_side = initial_side
        self.shrink = shrink
        self.grow = grow
        self.min_side = min_side
        self.cubes: dict[tuple, Hypercube] = {}
        self._pending: dict[bytes, tuple[tuple, np.ndarray]] = {}
        self._categorical = np.array([isinstance(p, Categorical) for p in space.parameters])

    def signature(self, u: np.ndarray) -> tuple[tuple, np.ndarray]:
        """The active categorical values at ``u`` and the indices of its active numeric dims."""
        active = self.space.active_mask(u)
        config = self.space.decode(u)
        key = tuple(
            (p.name, config[p.name])
            for p, a in zip(self.space.parameters, active, strict=True)
            if a and isinstance(p, Categorical)
        )
        return key, np.flatnonzero(active & ~self._categorical)

    def ask(self) -> Proposal:
        u = self.rng.uniform(size=self.space.dim)
        key, numeric = self.signature(u)
        cube = self.cubes.setdefault(key, Hypercube(self.initial_side))
        if cube.centre is not None and len(numeric):
            step = self.rng.uniform(-0.5, 0.5, size=len(numeric)) * cube.side
            u[numeric] = np.clip(cube.centre + step, 0.0, 1.0)
        self._pending[u.tobytes()] = (key, numeric)
        return Proposal(u=u, batch=len(self.y) + 1)

    def tell(self, proposal: Proposal, loss: float) -> None:
        super().tell(proposal, loss)
        u = np.asarray(proposal.u, dtype=float)
        key, numeric = self._pending.pop(u.tobytes(), self.signature(u))
        cube = self.cubes.setdefault(key, Hypercube(self.initial_side))
        cube.update(u[numeric], loss, self.grow, self.shrink)
        if cube.side <= self.min_side:  # restart from a new random point (Algorithm 1)
            cube.centre, cube.loss, cube.side = None, float("inf"), self.initial_side
            cube.restarts += 1
