"""Ensembles of classifiers: the (weighted) majority vote of members' predicted labels.

A choice of several members (Chapter 4's ensembles, Caruana selection, agnostic Bayes) is scored
by the vote of its members' predictions (thesis §4.2). Ties are a setting (``ties``) because the
thesis and its author's code differ [decide, thesis §4.2 says "broken at random"; the author's
code takes the smallest label]: ``"lowest"`` (default: deterministic, the author's code) or
``"random"`` (a seeded draw among the tied labels). Members whose fit failed predict
:data:`hpo.learners.FAILED_LABEL` (-1) and abstain; where every member abstains the vote is -1
(an error).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

TIE_RULES = ("lowest", "random")


def vote_counts(predictions: ArrayLike, weights: ArrayLike | None = None) -> np.ndarray:
    """``(n, n_labels)`` summed weights per label; ``predictions`` is ``(m, n)`` with labels
    ``>= 0`` (negative labels abstain)."""
    votes = np.asarray(predictions)
    if votes.ndim != 2 or votes.shape[0] == 0:
        raise ValueError(f"predictions must be (members, examples), got shape {votes.shape}")
    w = np.ones(votes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (votes.shape[0],) or np.any(w < 0):
        raise ValueError(f"need {votes.shape[0]} non-negative weights, got {w}")
    n_labels = max(int(votes.max()) + 1, 1)
    counts = np.zeros((votes.shape[1], n_labels))
    columns = np.arange(votes.shape[1])
    for member_votes, weight in zip(votes, w, strict=True):
        valid = member_votes >= 0
        np.add.at(counts, (columns[valid], member_votes[valid]), weight)
    return counts


def majority_vote(
    predictions: ArrayLike,
    weights: ArrayLike | None = None,
    ties: str = "lowest",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The weighted majority vote of ``(m, n)`` member predictions, one label per example."""
    if ties not in TIE_RULES:
        raise ValueError(f"unknown ties {ties!r}; valid choices: {', '.join(TIE_RULES)}")
    counts = vote_counts(predictions, weights)
    top = counts.max(axis=1)
    if ties == "lowest":
        labels = np.argmax(counts, axis=1)
    else:
        if rng is None:
            raise ValueError("ties='random' needs a seeded rng")
        tied = (counts == top[:, None]) & (top[:, None] > 0)
        noise = rng.random(counts.shape)
        labels = np.argmax(np.where(tied, noise, -1.0), axis=1)
    return np.where(top > 0, labels, -1)
