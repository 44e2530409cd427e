"""Iterated F-Race (seed 004 §2.2.3; Balaprakash, Birattari and Stützle 2007), written from the
spec (B1.6) and irace's documented rules: no maintained Python implementation exists.

:func:`friedman_step` is one F-Race test over the blocks (instances) seen so far: Friedman's
statistic on the within-block ranks; if significant at ``alpha``, the candidates whose rank sum
exceeds the best one's by more than Conover's critical difference (the Friedman post-hoc test of
irace's ``aux.friedman``, Conover 1999, no multiple-testing correction) are eliminated; with two
candidates left, a paired Wilcoxon signed-rank test (irace's rule). Tests start after
``first_test`` blocks.

:class:`IteratedFRace` runs races in iterations (irace's defaults, d = number of parameters):
``n_iterations = floor(2 + log2 d)``, ``min_survival = floor(2 + log2 d)``, iteration j gets
``B_j = (B - used) / (n_iterations - j + 1)`` evaluations and ``N_j = floor(B_j / (first_test +
min(5, j)))`` candidates (the elites included). Iteration 1 samples uniformly. Later candidates
pick an elite parent with probability inversely proportional to its rank (spec B1.6; irace's own
weights fall linearly) and draw each numeric coordinate of the unit cube from
``N(parent, sigma_j)`` truncated to [0, 1], with ``sigma_{j+1} = sigma_j (1 / N_j)^(1/d)``
(``sigma_1 = 1``, the whole range); a categorical keeps the parent's value with probability
``(j - 1) / n_iterations``, else is drawn uniformly (a simplification of irace's probability
update); conditional children are decoded only where active, every coordinate independent. A
race ends when at most ``min_survival`` candidates are alive, the instances are used up, or the
iteration's budget is spent. The result is the elite with the best mean over its instances.
``max_evaluations`` is the budget B (the seed: the time budget over random search's mean
evaluation time, which ``experiments.autoweka.irace_budget`` computes from finished random-search
runs; by default the run's evaluation budget); the run's time budget stops it as well.
Candidates are evaluated one at a time (the seed used 4 cores).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from scipy import stats

from hpo.optimizers.base import Proposal
from hpo.optimizers.instances import CashOptimizer
from hpo.space.search_space import Categorical, Space


def friedman_step(losses: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """The surviving columns of ``losses`` (blocks x candidates, lower is better) after one
    F-Race test (see the module): a boolean mask."""
    losses = np.asarray(losses, dtype=float)
    b, k = losses.shape
    alive = np.ones(k, dtype=bool)
    if k < 2 or b < 2:
        return alive
    if k == 2:
        difference = losses[:, 0] - losses[:, 1]
        if np.all(difference == 0):
            return alive
        p = stats.wilcoxon(losses[:, 0], losses[:, 1], zero_method="wilcox").pvalue
        if p < alpha:
            alive[int(np.argmax(losses.mean(axis=0)))] = False
        return alive
    ranks = np.apply_along_axis(stats.rankdata, 1, losses)
    R = ranks.sum(axis=0)
    A = float((ranks**2).sum())
    C = b * k * (k + 1) ** 2 / 4
    if A - C <= 0:  # every block tied
        return alive
    T = (k - 1) * float(((R - b * (k + 1) / 2) ** 2).sum()) / (A - C)
    if stats.chi2.sf(T, k - 1) >= alpha:
        return alive
    dof = (b - 1) * (k - 1)
    critical = stats.t.ppf(1 - alpha / 2, dof) * math.sqrt(2 * (b * A - float((R**2).sum())) / dof)
    return R - R.min() <= critical


class IteratedFRace(CashOptimizer):
    """I/F-Race over (configuration, instance) proposals (see the module); ``max_evaluations``
    defaults to the run's evaluation budget."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        instances: str = "cv",
        budget_factor: float = 1.0,
        max_evaluations: int | None = None,
        alpha: float = 0.05,
        first_test: int = 5,
        min_survival: int | None = None,
        n_iterations: int | None = None,
    ) -> None:
        super().__init__(space, budget, rng, instances, budget_factor)
        d = space.dim
        default = int(2 + math.log2(d))
        self.max_evaluations = budget if max_evaluations is None else max_evaluations
        self.alpha = alpha
        self.first_test = first_test
        self.min_survival = default if min_survival is None else min_survival
        self.n_iterations = default if n_iterations is None else n_iterations
        check_settings(self)
        self.used = 0
        self.elites: list[tuple[np.ndarray, dict[int, float]]] = []
        self._race: list[tuple[np.ndarray, dict[int, float]]] = []
        self._loss: float | None = None
        self._steps = self._iterate()

    # --- ask / tell ---------------------------------------------------------------------------

    def ask(self) -> Proposal:
        return next(self._steps)  # StopIteration: the last race is over

    def tell(self, proposal: Proposal, loss: float) -> None:
        self._loss = float(loss)
        self.used += 1

    def incumbent(self) -> Mapping[str, Any] | None:
        pool = self.elites + self._race
        scored = [(u, losses) for u, losses in pool if losses]
        if not scored:
            return None
        most = max(len(losses) for _, losses in scored)
        best = min(
            (np.mean(list(losses.values())), i)
            for i, (_, losses) in enumerate(scored)
            if len(losses) == most
        )
        return self.space.decode(scored[best[1]][0])

    # --- the iterations -----------------------------------------------------------------------

    def _iterate(self) -> Iterator[Proposal]:
        sigma = 1.0
        for j in range(1, self.n_iterations + 1):
            remaining = self.max_evaluations - self.used
            if remaining <= 0:
                return
            budget = remaining / (self.n_iterations - j + 1)
            n_candidates = max(len(self.elites) + 1, int(budget / (self.first_test + min(5, j))))
            fresh = [self._sample(j, sigma) for _ in range(n_candidates - len(self.elites))]
            self._race = [(u, dict(losses)) for u, losses in self.elites] + [(u, {}) for u in fresh]
            self.elites = []
            yield from self._run_race(budget)
            self.elites = self._survivors()
            self._race = []
            sigma *= (1.0 / n_candidates) ** (1.0 / self.space.dim)

    def _run_race(self, budget: float) -> Iterator[Proposal]:
        start = self.used
        alive = list(range(len(self._race)))
        for block in range(self.n_instances):
            for c in alive:
                u, losses = self._race[c]
                if block in losses:
                    continue
                if self.used - start >= budget:
                    return
                self._loss = None
                yield self._proposal(self.space.decode(u), block)
                assert self._loss is not None, "ask() was called before the last request was told"
                losses[block] = self._loss
            if block + 1 >= self.first_test and len(alive) > self.min_survival:
                table = np.array([[self._race[c][1][i] for c in alive] for i in range(block + 1)])
                keep = friedman_step(table, self.alpha)
                alive = [c for c, k in zip(alive, keep, strict=True) if k]
            if len(alive) <= self.min_survival:
                break
        self._race = [self._race[c] for c in alive]  # the eliminated are out of the running

    def _survivors(self) -> list[tuple[np.ndarray, dict[int, float]]]:
        """The race's candidates evaluated on the most blocks, best mean first, at most
        ``min_survival`` of them."""
        scored = [(u, losses) for u, losses in self._race if losses]
        if not scored:
            return []
        most = max(len(losses) for _, losses in scored)
        top = [(u, losses) for u, losses in scored if len(losses) == most]
        top.sort(key=lambda item: float(np.mean(list(item[1].values()))))
        return top[: self.min_survival]

    def _sample(self, j: int, sigma: float) -> np.ndarray:
        if j == 1 or not self.elites:
            return self.rng.uniform(size=self.space.dim)
        weights = 1.0 / np.arange(1, len(self.elites) + 1)
        parent = self.elites[self.rng.choice(len(self.elites), p=weights / weights.sum())][0]
        keep = (j - 1) / self.n_iterations
        child = np.empty(self.space.dim)
        for i, p in enumerate(self.space.parameters):
            if isinstance(p, Categorical):
                child[i] = parent[i] if self.rng.uniform() < keep else self.rng.uniform()
            else:
                child[i] = _truncated_normal(self.rng, parent[i], sigma)
        return child


def _truncated_normal(rng: np.random.Generator, mean: float, sigma: float) -> float:
    for _ in range(100):
        value = rng.normal(mean, sigma)
        if 0.0 <= value <= 1.0:
            return float(value)
    return float(np.clip(mean, 0.0, 1.0))


def check_settings(race: IteratedFRace) -> None:
    """Raise ``ValueError`` naming the setting and its valid range (one line)."""
    rules = [
        ("max_evaluations", race.max_evaluations >= 1, ">= 1"),
        ("alpha", 0 < race.alpha < 1, "in (0, 1)"),
        ("first_test", race.first_test >= 2, ">= 2 (Friedman's test needs two blocks)"),
        ("min_survival", race.min_survival >= 1, ">= 1"),
        ("n_iterations", race.n_iterations >= 1, ">= 1"),
    ]
    for name, ok, valid in rules:
        if not ok:
            raise ValueError(
                f"I/F-Race setting {name}={getattr(race, name)} out of range; valid: {valid}"
            )
