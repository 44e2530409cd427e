"""Learning tasks and their losses: classification (zero-one) and regression (squared error).

A dataset's task is carried by its targets' dtype, set once by the loader
(:mod:`hpo.data.catalog`): integer class labels ``0..C-1`` (int64) for classification, float64
values
for regression. Every loss of the framework is computed from predictions here, so a trace loss,
a test error and a per-example loss of agnostic Bayes (:mod:`hpo.ensembles.agnostic_bayes`) are one
definition:

* classification: zero-one loss, ``predictions != y`` (a failed fit predicts the label -1, which
  no dataset uses, so it is an error on every example);
* regression: squared error ``(y - ŷ)²`` (UAI 2014's authors' code; the paper names no loss).
  A failed regression fit predicts the mean of its training targets (the constant model), so its
  loss is finite and comparable, as a failed classifier's 1.0 is.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

CLASSIFICATION, REGRESSION = "classification", "regression"
TASKS = (CLASSIFICATION, REGRESSION)


def check_task(task: str) -> str:
    """``task``, refused with one line naming the valid tasks."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid choices: {', '.join(TASKS)}")
    return task


def task_of_targets(y: ArrayLike) -> str:
    """``regression`` for floating-point targets, ``classification`` for integer labels."""
    return REGRESSION if np.issubdtype(np.asarray(y).dtype, np.floating) else CLASSIFICATION


def example_losses(predictions: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Per-example losses (float): zero-one for integer labels, squared error for float targets.
    ``predictions`` may hold several models as rows (``(K, n)`` against ``(n,)``)."""
    target = np.asarray(y)
    if task_of_targets(target) == CLASSIFICATION:
        return (np.asarray(predictions) != target).astype(float)
    return (np.asarray(predictions, dtype=float) - target) ** 2


def mean_loss(predictions: np.ndarray, y: np.ndarray) -> float:
    """The mean loss on a set (NaN when empty): the zero-one error ``mean(pred != y)`` exactly as
    Chapter 3 computes it, or the mean squared error."""
    if not len(y):
        return float("nan")
    if task_of_targets(y) == CLASSIFICATION:
        return float(np.mean(predictions != y))
    return float(np.mean((np.asarray(predictions, dtype=float) - y) ** 2))
