"""CMA-ES on the unit cube through pycma, set up as the thesis's DEAP strategy (thesis §3.3;
[decide] set-up in docs/deviations.md).

This module owns the generation loop of the ``cma`` family: a (μ/μ_w, λ) comma strategy, by default
(3/3_w, 6) — DEAP's ``cma.Strategy`` defaults for N = 2, whose superlinear recombination weights
``log(μ + ½) − log(i)`` are pycma's positive weights for λ = 6. Offspring are clipped to
``[0, 1]^d`` before evaluation and the strategy is told the clipped points (DEAP's in-place repair).
Generations of λ are handed out until the budget is spent, the last one truncated (16 × 6 + 4 =
100); the strategy is updated only after full generations; no restarts and no termination criteria.

The start ([decide], spec §7.8; docs/deviations.md, "CMA-ES's start"): the centroid is the centre
of the unit cube by default (``start="centre"``), σ₀ = 0.3. The thesis does not say where its
CMA-ES started. A centroid drawn from U[0, 1]^d (``start="random"``, this module's earlier
default) can land in a corner of Chapter 3's (log C, log γ) square where every configuration of
the first generations predicts one class: every offspring then ties, the strategy has no
direction and drifts (54 of 435 runs on 87 thesis datasets saw one validation loss in 100
evaluations; from the centre, 4 of the same 200 ablation runs did). DEAP's CMA-ES, the thesis's
implementation, has no rule for a generation whose offspring all tie (it sorts them stably and
updates as usual), so the strategy itself is left as it is. The random centroid is drawn in both
cases, so the two starts share pycma's seed: an ablation compares them on the same streams.

Chapter 5's CMA (thesis §5.5; [decide] points in docs/smac-cma.md) is the same strategy with
``popsize="auto"``: λ = 4 + ⌊3 ln d⌋, Hansen's rule of thumb that the thesis prints as
"4 + 3 log d" [decide: natural log, as Hansen (2005) means, so λ = 11 for d = 14 (log10 would give
7)], and μ = ⌊λ/2⌋ (the default for any λ; pycma's weights ``log(μ + ½) − log(i)`` are then
DEAP's). Integers and the classifier choice are decoded by the space's equal-width bins and bounds
are handled by clipping, as in Chapter 3; no imputation (the strategy sees every dimension).

pycma is kept hermetic: its normal deviates come from a private generator seeded from ``rng``
(option ``randn``), so it never reads or reseeds numpy's global random state, and it writes
nothing to disk or the console. Its learning rates are pycma's own defaults (close to DEAP's, not
identical); active CMA (negative weights) is switched off because DEAP's strategy has none.
pycma's ``CMA_elitist`` is not offered as the thesis's "μ + λ": it re-injects the best-ever point
after a random Mahalanobis rescaling rather than selecting survivors from parents and offspring.
"""

from __future__ import annotations

import math
from typing import Any

import cma
import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Space

STARTS = ("centre", "random")  # the initial centroid: the cube's centre, or U[0, 1]^d


class CMAESOptimizer(Optimizer):
    """Generation-wise CMA-ES behind the one-point-at-a-time ask/tell interface.

    ``ask`` hands out the current generation's individuals one at a time with
    ``Proposal.batch`` = the generation number (1-based), so the protocol reshuffles per
    generation. ``tell`` may arrive in any order; the next generation is sampled only once every
    individual of the current one has a loss. The centroid is the centre of the cube
    (``start="centre"``) or drawn from ``U[0, 1]^d`` (``start="random"``), and the seed of pycma's
    normal stream from ``rng``, so the same ``rng`` gives the same proposals bit for bit.

    ``popsize``: λ, an integer or ``"auto"`` (:func:`auto_popsize`); ``mu``: μ, by default
    ``popsize // 2`` (3 for Chapter 3's λ = 6).
    """

    reports_at_batch_ends = True  # incumbents at generation ends only (thesis §3.3; [decide])

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        popsize: int | str = 6,
        mu: int | None = None,
        sigma0: float = 0.3,
        start: str = "centre",
    ) -> None:
        super().__init__(space, budget, rng)
        if isinstance(popsize, str):
            if popsize != "auto":
                raise ValueError(f"popsize must be an integer or 'auto', got {popsize!r}")
            popsize = auto_popsize(space.dim)
        mu = popsize // 2 if mu is None else mu
        if not 1 <= mu <= popsize // 2:  # a larger mu makes pycma double the population
            raise ValueError(f"need 1 <= mu <= popsize // 2, got mu={mu}, popsize={popsize}")
        if sigma0 <= 0:
            raise ValueError(f"sigma0 must be > 0, got {sigma0}")
        if start not in STARTS:
            raise ValueError(f"unknown start {start!r}; valid: {', '.join(STARTS)}")
        self.popsize, self.mu, self.start = popsize, mu, start
        drawn = rng.uniform(size=space.dim)  # drawn for either start: the same pycma seed below
        self.centroid = np.full(space.dim, 0.5) if start == "centre" else drawn
        # The run's pycma seed (never 0, pycma's "seed from the clock"), feeding a private stream.
        self.seed = int(rng.integers(1, 2**31 - 1))
        normal = np.random.default_rng(self.seed)
        options: dict[str, Any] = {
            "popsize": popsize,
            "CMA_mu": mu,
            "CMA_active": False,
            "CMA_mirrors": 0,
            "randn": lambda *shape: normal.standard_normal(shape),
            "seed": np.nan,  # pycma then leaves numpy's global seed alone
            "verbose": -9,
            "verb_disp": 0,
            "verb_log": 0,
            "verb_plot": 0,
        }
        self.strategy = cma.CMAEvolutionStrategy(self.centroid, sigma0, options)
        self.generation = 0
        self._population: list[np.ndarray] = []
        self._losses: list[float | None] = []
        self._handed_out = 0
        self._asked = 0

    def ask(self) -> Proposal:
        if self._asked >= self.budget:
            raise StopIteration(f"budget of {self.budget} evaluations exhausted")
        if self._handed_out == len(self._population):
            self._start_generation()
        u = self._population[self._handed_out]
        self._handed_out += 1
        self._asked += 1
        return Proposal(u=u.copy(), batch=self.generation)

    def tell(self, proposal: Proposal, loss: float) -> None:
        if np.isnan(loss):
            raise ValueError(
                "loss is NaN; assign failed evaluations a finite loss (docs/deviations.md)"
            )
        slot = self._slot_of(proposal)
        self._losses[slot] = float(loss)
        super().tell(proposal, loss)
        complete = all(value is not None for value in self._losses)
        if complete and len(self._population) == self.popsize:
            self.strategy.tell(
                self._population, ranks_in_evaluation_order(self._losses), check_points=False
            )

    def _start_generation(self) -> None:
        """Sample the next generation, truncated to the remaining budget, clipped to the cube."""
        pending = self._losses.count(None)
        if pending:
            raise RuntimeError(
                f"ask() called before all tells of generation {self.generation}: "
                f"{pending} of {len(self._population)} losses outstanding"
            )
        size = min(self.popsize, self.budget - self._asked)
        offspring = self.strategy.ask()[:size]
        self._population = [np.clip(np.asarray(x, dtype=float), 0.0, 1.0) for x in offspring]
        self._losses = [None] * size
        self._handed_out = 0
        self.generation += 1

    def _slot_of(self, proposal: Proposal) -> int:
        """Index in the current generation of the first handed-out, untold individual at ``u``."""
        if proposal.batch == self.generation:
            u = np.asarray(proposal.u, dtype=float)
            for i in range(self._handed_out):
                if self._losses[i] is None and np.array_equal(self._population[i], u):
                    return i
        raise ValueError(
            f"proposal (batch {proposal.batch}) is not an untold individual of the current "
            f"generation {self.generation}"
        )


def auto_popsize(dim: int) -> int:
    """Hansen's default population size λ = 4 + ⌊3 ln d⌋ (11 for d = 14; thesis §5.5)."""
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    return 4 + math.floor(3 * math.log(dim))


def ranks_in_evaluation_order(losses: list[float | None]) -> list[float]:
    """A generation's ranks (0 the best), the earlier individual first among equal losses.

    pycma orders a generation with NumPy's default ``argsort``, whose order among equal values
    depends on the CPU: NumPy's AVX2 and AVX-512 sorts put tied individuals in another order than
    its scalar sort (measured: losses (0.09, 0.27, 0.73, 0.23, 0, 0) give individuals 5, 4 first
    with AVX2, 4, 5 without). Error rates tie often, and the tied individuals' recombination
    weights differ, so the next generation would differ by CPU. pycma's update uses only the
    order (its weights are by rank, and nothing here reads its fitness values), so telling it
    these ranks keeps every generation without a tie bit for bit and gives every CPU the same
    order where there is one.
    """
    order = np.argsort(np.asarray(losses, dtype=float), kind="stable")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(len(order))
    return ranks.tolist()
