"""ESMBO: GP-EI round robin over bootstrap problems (Lacoste, Larochelle, Marchand, Laviolette,
"Sequential model-based ensemble optimization", UAI 2014, Algorithm 2).

The validation set S is resampled ``N`` times
(:func:`hpo.ensembles.agnostic_bayes.bootstrap_counts`); the bootstrap problem ``j`` minimises a
model's risk on the resample S'_j. Iteration ``k`` takes one GP-EI step on problem
``v = (k - 1) mod N`` (its history: every model evaluated so far with its S'_v risk), then the new
model's risks on all ``N`` resamples are added to all ``N`` histories (the paper's "trick": one
evaluation serves every problem). The output, the agnostic-Bayes ensemble of the ``N`` argmins, is
the ``agnostic_bayes`` selection rule (:class:`hpo.rules.agnostic_bayes.AgnosticBayesRule`),
which builds the same resamples from the same derived stream.

This module owns only the round robin and the bootstrap histories: each problem is a
:class:`~hpo.optimizers.bayes.GPEIOptimizer` (Spearmint GP-EI, its own hyperparameter chain,
burnt in on first use) told the bootstrap risks instead of the validation loss, so ESMBO's GP
step is exactly ``gp``'s. Settings of those GPs go in ``gp`` (e.g. ``{"burnin": 50}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from hpo.ensembles.agnostic_bayes import (
    bootstrap_counts,
    bootstrap_risks,
    bootstrap_rng,
    check_essr,
    check_n_bootstraps,
    example_losses,
)
from hpo.optimizers import check_settings
from hpo.optimizers.base import Optimizer, PredictionsConsumer, Proposal
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Space

if TYPE_CHECKING:
    from hpo.records import FoldPredictions


class ESMBOOptimizer(Optimizer, PredictionsConsumer):
    """Round-robin GP-EI over ``N`` bootstrap problems of the validation set.

    Settings: ``n_bootstraps`` (``N``, default ``⌊budget / 2⌋``, the paper's), ``essr`` (draws per
    resample / validation examples, in (0, 1], default 1.0 = the standard bootstrap), ``gp`` (the
    :class:`GPEIOptimizer` settings of every problem). ``Proposal.batch`` is the iteration.
    """

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        n_bootstraps: int | None = None,
        essr: float = 1.0,
        gp: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(space, budget, rng)
        if n_bootstraps is None and budget < 2:
            raise ValueError(
                f"ESMBO's default N = floor(budget / 2) needs budget >= 2, got {budget}"
            )
        self.n_bootstraps = check_n_bootstraps(
            budget // 2 if n_bootstraps is None else n_bootstraps
        )
        self.essr = check_essr(essr)
        check_settings("gp", dict(gp or {}))  # one line naming the valid GP settings
        self.problems = [
            GPEIOptimizer(space, budget, rng, **dict(gp or {})) for _ in range(self.n_bootstraps)
        ]
        self._bootstrap_rng = bootstrap_rng(rng)
        self.counts: np.ndarray | None = None  # (N, m), built at the first predictions
        self.rows: np.ndarray | None = None  # the validation examples, in fold order
        self._pending: np.ndarray | None = None  # the last model's N bootstrap risks
        self.current = 0  # the problem that proposed last

    def ask(self) -> Proposal:
        """One GP-EI step of problem ``(k - 1) mod N`` on its bootstrap history."""
        self.current = len(self.y) % self.n_bootstraps
        return self.problems[self.current].ask()

    def observe_predictions(self, proposal: Proposal, folds: tuple[FoldPredictions, ...]) -> None:
        """The new model's risk on every resample (the bootstraps are drawn on first call)."""
        rows, losses = example_losses(folds)
        if self.counts is None:
            self.rows = rows
            self.counts = bootstrap_counts(
                self._bootstrap_rng, len(rows), self.n_bootstraps, self.essr
            )
        elif not np.array_equal(rows, self.rows):
            raise ValueError(
                "ESMBO needs one validation set for all evaluations; this one was validated on "
                "other examples (reshuffled splits are not supported)"
            )
        self._pending = bootstrap_risks(self.counts, losses)

    def tell(self, proposal: Proposal, loss: float) -> None:
        """Record the validation loss, and each bootstrap risk in its problem's history."""
        if self._pending is None:
            raise ValueError("ESMBO is told a loss without the model's predictions")
        super().tell(proposal, loss)
        for problem, risk in zip(self.problems, self._pending, strict=True):
            problem.tell(proposal, float(risk))
        self._pending = None

    def histories(self) -> np.ndarray:
        """``(N, k)`` the bootstrap risks of the ``k`` evaluated models, one row per problem."""
        return np.array([problem.y for problem in self.problems])
