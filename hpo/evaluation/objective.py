"""What a fitted fold is scored by: the run's objective, a part the configuration picks.

An objective turns one fit's outcome on one evaluation set (the fold's validation rows, the
selection split, a hold-out fold) into a *loss*, which the optimizer minimises, and a *score*
(higher is better), which seed 003's model-selection stage compares. Two are defined:

* ``zero_one`` (every study's default): the loss is the fit's zero-one error (squared error on a
  regression set, :mod:`hpo.tasks`), the score ``1 −`` that error.
* ``performance_index`` (seed 003, Bermúdez-Chacón 2014 §3.2, eq. 3.7): the score is the index
  ``S`` of the fold model's class probabilities (one-hot predictions for a learner without
  them) against the class frequencies of the fold's training rows, the loss ``1 − S``. A failed
  fit scores 0, the baseline [decision: Fig. 5.1 draws failures there].

A run names its objective as ``{"name": <one of OBJECTIVES>, **settings}``
(:func:`make_objective`); a new objective is one class here and one entry in
:data:`OBJECTIVES`, and the evaluator does not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hpo.evaluation.performance_index import PerformanceIndex, class_frequencies
from hpo.learners import FAILED_LABEL, FitOutcome
from hpo.registry import Registry


@dataclass(frozen=True)
class ScoredSet:
    """One fit's outcome on one of its evaluation sets (``which``, an index into the sets the
    fit predicted): the dataset's labels ``y``, the fit's training rows and the scored rows
    (indices into ``y``; an objective that reads their labels indexes them, the zero-one error
    does not), and the dataset's class labels when the evaluator asks fits for probabilities."""

    outcome: FitOutcome
    which: int
    y: np.ndarray
    train: np.ndarray
    rows: np.ndarray
    classes: np.ndarray | None
    learner: str

    @property
    def y_train(self) -> np.ndarray:
        return self.y[self.train]

    @property
    def y_rows(self) -> np.ndarray:
        return self.y[self.rows]


class Objective(Protocol):
    """What a fold is scored by."""

    name: str
    needs_probabilities: bool  # the evaluator must ask the fits for class probabilities

    def loss(self, scored: ScoredSet) -> float:
        """The loss the optimizer minimises (NaN for an empty set)."""
        ...

    def score(self, scored: ScoredSet) -> float:
        """The score, higher is better (NaN for an empty set)."""
        ...


class ZeroOneLoss:
    """The fit's own zero-one error (squared error for regression) as the loss."""

    name = "zero_one"
    needs_probabilities = False

    def loss(self, scored: ScoredSet) -> float:
        return scored.outcome.errors[scored.which]

    def score(self, scored: ScoredSet) -> float:
        return 1.0 - scored.outcome.errors[scored.which]


class IndexLoss:
    """Seed 003's performance index ``S`` as the score, ``1 − S`` as the loss."""

    name = "performance_index"
    needs_probabilities = True

    def __init__(self, index: PerformanceIndex) -> None:
        self.index = index

    def loss(self, scored: ScoredSet) -> float:
        return 1.0 - self.score(scored)

    def score(self, scored: ScoredSet) -> float:
        outcome, which = scored.outcome, scored.which
        if not len(scored.rows):
            return float("nan")
        if outcome.failure is not None or np.any(outcome.predictions[which] == FAILED_LABEL):
            return 0.0
        assert scored.classes is not None, "the index needs the evaluator's classes"
        given = outcome.probabilities[which] if outcome.gives_probabilities else None
        return self.index.score(
            scored.y_rows,
            scored.classes,
            class_frequencies(scored.y_train, scored.classes),
            labels=outcome.predictions[which],
            probabilities=given,
            learner=scored.learner,
        ).index


OBJECTIVES: Registry[Callable[..., Objective]] = Registry(
    "objective",
    {
        ZeroOneLoss.name: ZeroOneLoss,
        IndexLoss.name: lambda **settings: IndexLoss(PerformanceIndex(**settings)),
    },
)
ZERO_ONE: Mapping[str, Any] = {"name": ZeroOneLoss.name}  # a run's default objective


def make_objective(part: Mapping[str, Any]) -> Objective:
    """The objective a run names: ``{"name": <one of OBJECTIVES>, **its settings}``."""
    settings = dict(part)
    name = settings.pop("name", None)
    return OBJECTIVES.get(str(name))(**settings)
