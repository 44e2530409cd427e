"""Chapter 4's selection rules: a several-member choice per iteration (thesis §4.4).

* :class:`PostHocRule` (``post_hoc``): forward greedy selection with replacement over the pool of
  evaluations up to ``t`` (:func:`hpo.ensembles.forward_greedy`; BO-post, RS-post, EO-post),
  read from the trace's validation predictions; weights = multiplicities;
* :class:`EnsembleOptimizerRule` (``eo``): the ensemble EO holds after iteration ``t``, read
  through the :class:`~hpo.optimizers.base.EnsembleProvider` capability (the EO method).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpo.ensembles.caruana import (
    DEFAULT_N_INIT,
    DEFAULT_N_ITERATIONS,
    DEFAULT_TIE_LOSS,
    forward_greedy,
)
from hpo.ensembles.losses import check_loss
from hpo.ensembles.pool import PredictionPool
from hpo.records import Choice, Trace
from hpo.rules.final_selection import ENSEMBLE_OPTIMIZER, POST_HOC, SelectionRule

if TYPE_CHECKING:
    from hpo.optimizers.base import Optimizer


class PostHocRule(SelectionRule):
    """Caruana's forward greedy selection over every model evaluated up to ``t``.

    Computed only at the iterations the run reports (``observe``'s ``wanted``; all of them when
    the rule is used without the runner). Settings (the run's ``post_hoc`` block):
    ``n_init`` best models to start from (3), ``size`` = members with multiplicity (100),
    ``loss`` minimised (``zero_one``), ``tie_loss`` breaking its ties (``sqm``; ``null`` = none,
    which collapses to the best model on small validation sets: docs/ensembles.md).
    """

    name = POST_HOC
    needs_predictions = True

    def __init__(
        self,
        n_init: int = DEFAULT_N_INIT,
        size: int = DEFAULT_N_ITERATIONS,
        loss: str = "zero_one",
        tie_loss: str | None = DEFAULT_TIE_LOSS,
    ) -> None:
        check_loss(loss)
        if tie_loss is not None:
            check_loss(tie_loss)
        for name, value in (("post_hoc.n_init", n_init), ("post_hoc.size", size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        self.n_init, self.n_iterations, self.loss = n_init, size, loss
        self.tie_loss = tie_loss
        self._wanted: set[int] | None = None

    def observe(self, optimizer: Optimizer, iteration: int, wanted: bool) -> None:
        self._wanted = set() if self._wanted is None else self._wanted
        if wanted:
            self._wanted.add(iteration)

    def choices(self, trace: Trace) -> list[Choice | None]:
        if trace.predictions is None:
            raise ValueError("the post_hoc rule needs the run's validation predictions")
        pool = PredictionPool.of(trace.predictions)
        result: list[Choice | None] = []
        for t in range(1, len(pool) + 1):
            if self._wanted is not None and t not in self._wanted:
                result.append(None)
                continue
            counts = forward_greedy(
                pool.folds(slice(0, t)), self.n_init, self.n_iterations, self.loss, self.tie_loss
            )
            chosen = np.flatnonzero(counts)
            members = tuple(trace.member(int(i)) for i in chosen)
            result.append(Choice(members, tuple(float(c) for c in counts[chosen])))
        return result


class EnsembleOptimizerRule(SelectionRule):
    """The optimizer's current ensemble after every reported iteration (EO, thesis Alg. 4.1)."""

    name = ENSEMBLE_OPTIMIZER

    def __init__(self) -> None:
        self._chosen: dict[int, tuple[int, ...]] = {}

    def check(self, optimizer: Optimizer) -> None:
        from hpo.optimizers.base import EnsembleProvider

        if not isinstance(optimizer, EnsembleProvider):
            raise ValueError(f"{type(optimizer).__name__} keeps no ensemble for the eo rule")

    def observe(self, optimizer: Optimizer, iteration: int, wanted: bool) -> None:
        if wanted:
            self._chosen[iteration] = optimizer.current_ensemble()  # type: ignore[attr-defined]

    def choices(self, trace: Trace) -> list[Choice | None]:
        return [
            Choice(tuple(trace.member(i - 1) for i in self._chosen[t]))
            if self._chosen.get(t)
            else None
            for t in range(1, len(trace.valid_loss) + 1)
        ]
