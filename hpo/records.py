"""The records that pass between the library's layers: what an evaluation predicted, what a rule
reads of a run, and what it chooses.

This module owns the shared value types and imports nothing else of :mod:`hpo`, so every layer
can use them without an import circle (``tests/test_pipeline.py`` walks the imports):

* :class:`FoldPredictions` — one fold model's predictions, written by
:mod:`hpo.evaluation.evaluator`,
  read by optimizers that consume predictions (EO, ESMBO) and by :mod:`hpo.ensembles`;
* :class:`Trace` — a run's evaluations as a selection rule reads them
(:mod:`hpo.rules.final_selection`,
  :mod:`hpo.rules.ensemble`, :mod:`hpo.ensembles.agnostic_bayes`);
* :class:`Member` and :class:`Choice` — the model(s) a rule returns after one iteration, scored
  by :class:`hpo.evaluation.evaluator.ChoiceScorer`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FoldPredictions:
    """One fold model's predicted labels on its validation rows and on D_S, with the true labels
    of the validation rows (what an optimizer that reads predictions may see: never test labels).
    """

    valid_rows: np.ndarray
    valid_labels: np.ndarray
    valid: np.ndarray
    selection: np.ndarray
    # (n, n_classes) class probabilities (one-hot where the learner gives none), when the run
    # keeps them (seed 003's performance index, ``probabilities=true``)
    valid_probabilities: np.ndarray | None = None
    selection_probabilities: np.ndarray | None = None


@dataclass(frozen=True)
class Member:
    """One model of a choice: its configuration and the 1-based trace row that evaluated it
    (None for a configuration the run never evaluated, e.g. a posterior-mean argmin)."""

    config: Mapping[str, Any]
    iteration: int | None


@dataclass(frozen=True)
class Choice:
    """The model(s) a rule returns after one iteration: members with weights (multiplicity).

    A single model is a one-member choice; its test error is that model's. A choice of several
    members is scored by their weighted majority vote (:mod:`hpo.ensembles`).
    """

    members: tuple[Member, ...]
    weights: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError("a choice needs at least one member")
        if not self.weights:
            object.__setattr__(self, "weights", (1.0,) * len(self.members))
        if len(self.weights) != len(self.members):
            raise ValueError(f"{len(self.members)} members but {len(self.weights)} weights")

    @property
    def is_single(self) -> bool:
        return len(self.members) == 1


@dataclass(frozen=True)
class Trace:
    """What a rule reads of a run: per evaluation (0-based index ``i`` = iteration ``i + 1``) the
    validation and selection losses, the batch, the configuration and, when the run keeps them,
    each fold model's predictions (what ensemble rules such as Caruana selection read)."""

    valid_loss: np.ndarray
    selection_loss: np.ndarray
    batch: np.ndarray
    configs: Sequence[Mapping[str, Any]]
    predictions: Sequence[tuple[FoldPredictions, ...]] | None = None  # when the run keeps them

    def member(self, index: int) -> Member:
        """The evaluated model at 0-based trace ``index``."""
        return Member(self.configs[index], index + 1)
