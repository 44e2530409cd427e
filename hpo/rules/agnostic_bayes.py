"""The anytime selection rule ``agnostic_bayes`` of ESMBO and ERS (Lacoste et al., UAI 2014): after
every evaluation, the agnostic-Bayes ensemble of the models evaluated so far. The bootstrap
posterior it reads is :mod:`hpo.ensembles.agnostic_bayes`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpo.ensembles.agnostic_bayes import (
    AGNOSTIC_BAYES,
    bootstrap_counts,
    bootstrap_risks,
    bootstrap_seed,
    bootstrap_wins,
    check_essr,
    check_n_bootstraps,
    pool_losses,
)
from hpo.records import Choice, Trace
from hpo.rules.final_selection import SelectionRule

if TYPE_CHECKING:
    from hpo.optimizers.base import Optimizer


class AgnosticBayesRule(SelectionRule):
    """After every evaluation ``t``: the agnostic-Bayes ensemble of the models evaluated up to
    ``t`` (UAI 2014 anytime output), members weighted by the bootstraps they win.

    Weights are bootstrap wins (``N`` times the posterior; ties shared), so an ensemble without
    ties reads as ``N`` members with repetition. The bootstraps are built once per run: ``N``
    and ``essr`` are the ESMBO optimizer's when the run has one (its output is then the argmins
    of the bootstrap problems it optimised), else ``n_bootstraps`` (default ``⌊budget / 2⌋``, as
    ESMBO's) and ``essr``. ``seed`` fixes the stream when :meth:`check` is not called (tests).
    """

    name = AGNOSTIC_BAYES
    needs_predictions = True

    def __init__(
        self,
        n_bootstraps: int | None = None,
        essr: float = 1.0,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        self.n_bootstraps = None if n_bootstraps is None else check_n_bootstraps(n_bootstraps)
        self.essr = check_essr(essr)
        self._seed = seed  # the bootstrap stream; a fresh generator per call of choices()
        self.counts: np.ndarray | None = None

    def check(self, optimizer: Optimizer) -> None:
        self._seed = bootstrap_seed(optimizer.rng)
        bootstraps = getattr(optimizer, "n_bootstraps", None)
        if bootstraps is not None:  # an ESMBO run: its bootstrap problems
            self.n_bootstraps, self.essr = bootstraps, optimizer.essr  # type: ignore[attr-defined]
        elif self.n_bootstraps is None:
            self.n_bootstraps = check_n_bootstraps(max(1, optimizer.budget // 2))

    def choices(self, trace: Trace) -> list[Choice | None]:
        if trace.predictions is None or self._seed is None:
            raise ValueError("the agnostic_bayes rule needs the run's predictions and a seed")
        losses = pool_losses(trace.predictions)
        n_bootstraps = self.n_bootstraps or max(1, losses.shape[1] // 2)
        rng = np.random.default_rng(self._seed)
        self.counts = bootstrap_counts(rng, losses.shape[0], n_bootstraps, self.essr)
        risks = bootstrap_risks(self.counts, losses)
        result: list[Choice | None] = []
        for t in range(1, losses.shape[1] + 1):
            wins = bootstrap_wins(risks[:, :t])
            members = np.flatnonzero(wins > 0)
            result.append(
                Choice(
                    tuple(trace.member(int(i)) for i in members),
                    tuple(float(w) for w in wins[members]),
                )
            )
        return result
