"""The pool ``H`` of evaluated models as their validation predictions, per fold (thesis §4.1).

:class:`PredictionPool` is what ensemble methods read: EO (Alg. 4.1) grows it one model at a
time, the post-hoc rules rebuild it from a run's trace. Every model of a pool must have been
validated on the same folds (the same validation rows): ensembles combine models fold by fold
(thesis §4.4.1), which a protocol that reshuffles the folds would break.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from hpo.ensembles.caruana import Fold
from hpo.ensembles.losses import FoldVotes, Votes, loss_of_votes
from hpo.records import FoldPredictions
from hpo.tasks import REGRESSION, task_of_targets


class PredictionPool:
    """Validation predictions of ``len(pool)`` models on ``n_folds`` folds."""

    def __init__(self) -> None:
        self.labels: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._matrices: list[np.ndarray] = []  # per fold (capacity, n_f); first len(self) rows
        self._size = 0

    @classmethod
    def of(cls, models: Iterable[Sequence[FoldPredictions]]) -> PredictionPool:
        """The pool of ``models`` (each a tuple of per-fold predictions), in order."""
        pool = cls()
        for folds in models:
            pool.add(folds)
        return pool

    def __len__(self) -> int:
        return self._size

    def add(self, folds: Sequence[FoldPredictions]) -> None:
        """Append one model's per-fold validation predictions."""
        if not folds:
            raise ValueError("a model needs the predictions of at least one fold")
        if not self._matrices:
            self._rows = [np.asarray(f.valid_rows) for f in folds]
            # labels int64 and votes int32; float64 both for regression targets
            # (hpo.tasks)
            regression = task_of_targets(folds[0].valid_labels) == REGRESSION
            label_type, vote_type = (np.float64, np.float64) if regression else (np.int64, np.int32)
            self.labels = [np.asarray(f.valid_labels, dtype=label_type) for f in folds]
            self._matrices = [np.empty((16, len(f.valid)), dtype=vote_type) for f in folds]
        if len(folds) != len(self._rows) or any(
            not np.array_equal(f.valid_rows, rows)
            for f, rows in zip(folds, self._rows, strict=True)
        ):
            raise ValueError(
                "every model of an ensemble pool must be validated on the same folds "
                "(no reshuffling between evaluations)"
            )
        if self._size == self._matrices[0].shape[0]:
            self._matrices = [np.concatenate([m, np.empty_like(m)]) for m in self._matrices]
        for matrix, fold in zip(self._matrices, folds, strict=True):
            matrix[self._size] = fold.valid
        self._size += 1

    def folds(self, models: Sequence[int] | slice | None = None) -> list[Fold]:
        """Per fold, ``(predictions of models (K, n_f), labels (n_f,))``; all models by default."""
        chosen = slice(0, self._size) if models is None else models
        return [
            (m[: self._size][chosen], labels)
            for m, labels in zip(self._matrices, self.labels, strict=True)
        ]

    def candidate_votes(self, ensemble: Sequence[int], candidates: Sequence[int]) -> list[Votes]:
        """Per fold, the votes of ``E ∪ {h}`` (:meth:`FoldVotes.with_candidates`) for the pool
        models ``candidates``, ``E`` = the pool models ``ensemble``."""
        members, others = list(ensemble), list(candidates)
        return [
            FoldVotes(labels, p[members]).with_candidates(p[others]) for p, labels in self.folds()
        ]

    def candidate_losses(
        self, ensemble: Sequence[int], candidates: Sequence[int], loss: str
    ) -> np.ndarray:
        """``(K,)`` mean over folds of ``L(E ∪ {h}, D_V | loss)`` for the pool models
        ``candidates``, ``E`` = the pool models ``ensemble`` (the mean of per-fold losses)."""
        return mean_loss(self.candidate_votes(ensemble, candidates), loss)


def mean_loss(votes: Sequence[Votes], loss: str) -> np.ndarray:
    """The unweighted mean over folds of ``loss`` of per-fold votes (thesis §4.4; the author's
    code averages per-fold losses)."""
    return np.mean([loss_of_votes(loss, fold) for fold in votes], axis=0)


def stack_votes(first: Sequence[Votes], second: Sequence[Votes]) -> list[Votes]:
    """Per fold, the candidates of ``first`` followed by those of ``second`` (same ensemble)."""
    return [
        (np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]), a[2])
        for a, b in zip(first, second, strict=True)
    ]
