"""Ensemble margins and losses (thesis §4.3), vectorised over candidate members.

Everything here is a function of three per-example quantities of a majority vote over an
ensemble ``E`` of (possibly repeated) members on validation examples ``(x, y)``:

* ``correct`` = ``v*``, the votes for the true label (Eq. 4.25);
* ``wrong_max`` = ``v_max``, the votes of the strongest wrong label (Eq. 4.26);
* ``size`` = ``|E|``, the number of members (sum of the weights).

The multiclass margin is ``M = (1/|E|) Σ_h [1 − 2 ℓ01(h(x), y)] = (2 v* − |E|) / |E|``
(Eq. 4.6; equal to the binary margin of Eq. 4.5 for two classes). A member whose fit failed
predicts :data:`hpo.learners.FAILED_LABEL` (-1): it counts in ``|E|`` and as a wrong vote in the
margin (``ℓ01 = 1``), and abstains in ``v*``/``v_max`` (as in :func:`~hpo.ensembles.majority_vote`).

Losses, each averaged over the examples (Eq. 4.2) except the C-bound, which is dataset-level:

* ``zero_one``: ``I[v* <= v_max]`` — a tie counts as an error [decide; the thesis's
  toy Tables 4.1-4.2 count margin 0 as an error; deterministic, unlike a random tie-break];
* ``margin``: ``(1 − M)/2`` (Eq. 4.7; the mean individual error, for figures and toy tables);
* ``sqm``: ``(1 − M)²/4`` (Eq. 4.8);
* ``cbound``: the adapted C-bound ``½ (1 − sign(μ1) μ1²/μ2)`` with ``μz = mean(M^z)``
  (Eqs 4.21-4.22); corner cases [decide]: ``μ1 = 0`` gives ``½`` (sign(0) = 0) and ``μ2 = 0``
  (every margin is 0, only possible for even sizes) gives ``½``, the limit along ``μ1 = 0`` and
  the value of an ensemble that is right exactly half the time;
* ``sigmoid``: ``1 − s((v* − v_max)/|E|, a)`` with ``s(x, a) = 1/(1 + e^{−a x})`` (Eq. 4.23 and
  its multiclass form of §4.3.3; the division by ``|E|`` makes two classes equal Eq. 4.23,
  [decide]), ``a = a(|E|)`` from :func:`sigmoid_scale` unless given.

:class:`FoldVotes` holds one ensemble's votes on one fold; :meth:`FoldVotes.with_candidates`
gives the three quantities of ``E ∪ {h}`` for every candidate ``h`` of a ``(K, n)`` label matrix
in one pass (no loop over candidates), which :func:`candidate_losses` reduces to ``(K,)`` losses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit

LOSSES = ("zero_one", "margin", "sqm", "cbound", "sigmoid")
SIGMOID_EPSILON = 1e-3  # d_min(a | m) = 1e-3 (thesis §4.3.3)
SMALLEST_SIGMOID_SIZE = 3  # no root a > 1 for m <= 2: a(3) is used [decide]

Votes = tuple[np.ndarray, np.ndarray, np.ndarray | float]  # (correct, wrong_max, size)


class FoldVotes:
    """The vote counts of an ensemble (``predictions (m, n)`` with ``weights``, or empty) on one
    fold's validation examples with true ``labels (n,)``."""

    def __init__(
        self,
        labels: ArrayLike,
        predictions: ArrayLike | None = None,
        weights: ArrayLike | None = None,
    ) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        if self.labels.ndim != 1 or np.any(self.labels < 0):
            raise ValueError("labels must be a 1-D array of labels >= 0")
        n = self.labels.size
        votes = np.zeros((0, n), dtype=np.int64) if predictions is None else np.asarray(predictions)
        if votes.ndim != 2 or votes.shape[1] != n:
            raise ValueError(f"predictions must be (members, {n}), got shape {votes.shape}")
        w = np.ones(votes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (votes.shape[0],) or np.any(w < 0):
            raise ValueError(f"need {votes.shape[0]} non-negative weights, got {w}")
        n_labels = int(max(self.labels.max(initial=0), votes.max(initial=0))) + 1
        valid = votes >= 0
        flat = (np.arange(n) * n_labels + np.where(valid, votes, 0)).ravel()
        weight = np.where(valid, w[:, None], 0.0).ravel()
        counts = np.bincount(flat, weight, minlength=n * n_labels).astype(float)
        self.counts = counts.reshape(n, n_labels)
        self.size = float(w.sum())
        self._refresh()

    @classmethod
    def _of_counts(cls, labels: np.ndarray, counts: np.ndarray, size: float) -> FoldVotes:
        votes = object.__new__(cls)
        votes.labels, votes.counts, votes.size = labels, counts, size
        votes._refresh()
        return votes

    def _refresh(self) -> None:
        n, n_labels = self.counts.shape
        rows = np.arange(n)
        self.correct = self.counts[rows, self.labels]
        # the wrong labels' counts; -1 at the true label and in a last column that a failed
        # prediction (-1) reaches through the flat index row * (n_labels + 1) - 1
        others = np.full((n, n_labels + 1), -1.0)
        others[:, :n_labels] = self.counts
        others[rows, self.labels] = -1.0
        self.wrong_max = np.maximum(others.max(axis=1), 0.0)
        self._others = others.ravel()
        self._row_starts = rows * (n_labels + 1)

    def plus(self, member: ArrayLike, weight: float = 1.0) -> FoldVotes:
        """The votes with one more member (predicted labels ``(n,)``), as a new object."""
        labels = np.asarray(member)
        counts = self._padded(int(labels.max(initial=0)) + 1).copy()
        valid = labels >= 0
        counts[np.flatnonzero(valid), labels[valid]] += weight
        return FoldVotes._of_counts(self.labels, counts, self.size + weight)

    def _padded(self, n_labels: int) -> np.ndarray:
        """The counts with at least ``n_labels`` label columns."""
        missing = n_labels - self.counts.shape[1]
        return np.pad(self.counts, ((0, 0), (0, missing))) if missing > 0 else self.counts

    def own(self) -> Votes:
        """``(correct (n,), wrong_max (n,), size)`` of the ensemble itself."""
        if self.size <= 0:
            raise ValueError("an empty ensemble has no loss")
        return self.correct, self.wrong_max, self.size

    def with_candidates(self, candidates: ArrayLike) -> Votes:
        """``(correct (K, n), wrong_max (K, n), size + 1)`` of ``E ∪ {h}`` for every row ``h`` of
        the candidates' predicted labels ``(K, n)``."""
        labels = np.asarray(candidates)
        if labels.ndim != 2 or labels.shape[1] != self.labels.size:
            raise ValueError(
                f"candidates must be (K, {self.labels.size}), got shape {labels.shape}"
            )
        n_labels = int(labels.max(initial=0)) + 1
        if n_labels > self.counts.shape[1]:  # a label no member nor example has
            wider = FoldVotes._of_counts(self.labels, self._padded(n_labels), self.size)
            return wider.with_candidates(labels)
        # a wrong candidate label raises v_max to its count + 1; the true label and a failed
        # prediction read -1 (+ 1 = 0 <= v_max): one gather, no masks
        at_label = self._others[self._row_starts + labels]
        wrong_max = np.maximum(self.wrong_max, at_label + 1.0)
        correct = self.correct + (labels == self.labels)
        return correct, wrong_max, self.size + 1.0


def _margin(correct: np.ndarray, size: np.ndarray | float) -> np.ndarray:
    return 2.0 * correct / size - 1.0


def _zero_one(correct, wrong_max, size, a=None) -> np.ndarray:
    return np.mean(correct <= wrong_max, axis=-1)


def _margin_loss(correct, wrong_max, size, a=None) -> np.ndarray:
    return np.mean((1.0 - _margin(correct, size)) / 2.0, axis=-1)


def _squared_margin(correct, wrong_max, size, a=None) -> np.ndarray:
    return np.mean((1.0 - _margin(correct, size)) ** 2 / 4.0, axis=-1)


def _cbound(correct, wrong_max, size, a=None) -> np.ndarray:
    margin = _margin(correct, size)
    mu1, mu2 = margin.mean(axis=-1), (margin**2).mean(axis=-1)
    ratio = np.divide(mu1**2, mu2, out=np.zeros_like(mu1), where=mu2 > 0)
    return 0.5 * (1.0 - np.sign(mu1) * ratio)


def _sigmoid(correct, wrong_max, size, a=None) -> np.ndarray:
    scale = sigmoid_scale(int(round(float(size)))) if a is None else a
    return np.mean(1.0 - expit(scale * (correct - wrong_max) / size), axis=-1)


_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "zero_one": _zero_one,
    "margin": _margin_loss,
    "sqm": _squared_margin,
    "cbound": _cbound,
    "sigmoid": _sigmoid,
}


def check_loss(loss: str, valid: tuple[str, ...] = LOSSES) -> None:
    """Raise ``ValueError`` naming ``loss`` and the valid choices when it is not one of them."""
    if loss not in valid:
        raise ValueError(f"unknown ensemble loss {loss!r}; valid choices: {', '.join(valid)}")


def loss_of_votes(loss: str, votes: Votes, a: float | None = None) -> np.ndarray:
    """``loss`` of votes from :class:`FoldVotes` (reduced over the last, example axis)."""
    check_loss(loss)
    return _FUNCTIONS[loss](*votes, a=a)


def candidate_losses(
    loss: str,
    candidates: ArrayLike,
    labels: ArrayLike,
    ensemble: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    a: float | None = None,
) -> np.ndarray:
    """``(K,)``: ``L(E ∪ {h}, D_V | loss)`` for every candidate ``h`` (rows of ``(K, n)``), with
    ``E`` the ``(m, n)`` ``ensemble`` predictions (or empty) weighted by ``weights``."""
    votes = FoldVotes(labels, ensemble, weights)
    return loss_of_votes(loss, votes.with_candidates(candidates), a)


def ensemble_loss(
    loss: str,
    predictions: ArrayLike,
    labels: ArrayLike,
    weights: ArrayLike | None = None,
    a: float | None = None,
) -> float:
    """``L(E, D_V | loss)`` of the ensemble whose members predict ``(m, n)`` labels."""
    return float(loss_of_votes(loss, FoldVotes(labels, predictions, weights).own(), a))


def margins(predictions: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None):
    """``(n,)`` margins ``M(E, x, y)`` of Eq. 4.6 (Eq. 4.5 for two classes)."""
    correct, _, size = FoldVotes(labels, predictions, weights).own()
    return _margin(correct, size)


def zero_one_loss(predictions, labels, weights=None) -> float:
    """Majority-vote error, ties counted as errors (Eq. 4.2 with ℓ01)."""
    return ensemble_loss("zero_one", predictions, labels, weights)


def margin_loss(predictions, labels, weights=None) -> float:
    """Mean of ``(1 − M)/2`` (Eq. 4.7)."""
    return ensemble_loss("margin", predictions, labels, weights)


def squared_margin_loss(predictions, labels, weights=None) -> float:
    """Mean of ``(1 − M)²/4`` (Eq. 4.8)."""
    return ensemble_loss("sqm", predictions, labels, weights)


def cbound_loss(predictions, labels, weights=None) -> float:
    """Adapted C-bound ``½ (1 − sign(μ1) μ1²/μ2)`` (Eqs 4.21-4.22; corner cases: module doc)."""
    return ensemble_loss("cbound", predictions, labels, weights)


def sigmoid_loss(predictions, labels, weights=None, a: float | None = None) -> float:
    """Mean of ``1 − s((v* − v_max)/|E|, a)`` (Eq. 4.23, §4.3.3); ``a = a(|E|)`` by default."""
    return ensemble_loss("sigmoid", predictions, labels, weights, a)


@cache
def sigmoid_scale(m: int, epsilon: float = SIGMOID_EPSILON) -> float:
    """The sigmoid's slope ``a(m)``: the root ``a > 1`` of
    ``d_min(a | m) = s(1, a) − s(1 − 2/m, a) = ε`` (thesis §4.3.3, ε = 1e-3).

    For ``m <= 2`` there is no such root and ``a(3)`` is used [decide]. For very large ``m``
    (about 450 and more) ``d_min`` never reaches ε and the ``a`` maximising it is returned.
    """
    m = max(int(m), SMALLEST_SIGMOID_SIZE)

    def gap(a: float) -> float:
        return float(expit(a) - expit(a * (1.0 - 2.0 / m)) - epsilon)

    peak = minimize_scalar(lambda a: -gap(a), bounds=(1e-6, 50.0), method="bounded").x
    if gap(peak) <= 0:
        return float(peak)
    return float(brentq(gap, peak, 1e4, xtol=1e-12))
