"""The performance index of seed 003 (Bermúdez-Chacón 2014, §3.2, Table 3.1, eq. 3.7).

Every prediction becomes a probability vector: a probabilistic classifier's own, or the one-hot
vector of a hard label (§3.2). Each metric ``m`` is *homogenised* between a baseline and the
ideal, ``m~ = (m - m_base) / (m_ideal - m_base)`` (so 0 is the baseline, 1 the ideal, below 0 is
worse than the baseline, and lower-is-better metrics flip sign by themselves), and the index is
the weighted sum ``S = sum_i w_i m~_i`` with ``sum_i w_i = 1`` (eq. 3.7).

The baseline is the "virtual prediction" that gives every instance the class relative
frequencies as its probability vector, "equivalent to weighted-randomly assigning classes"
(§3.2). For the label metrics it is the expectation under that random assignment, computed in
closed form from the frequencies ``p`` the caller gives (the training fold's, [decision]) and
those ``q`` of the labels scored: accuracy ``sum_c q_c p_c``; macro-F_beta the mean over classes of
``(1 + beta^2) q_c p_c / (beta^2 q_c + p_c)``; MCC 0; the Brier score of ``p`` itself; AUC 1/2.
Regression metrics (R^2, MAE, MSE) take the training mean as their baseline prediction.

This module computes the index from labels and probabilities only; it does not fit, predict or
read a trace, so the evaluation can call it once it keeps probabilities.
Decisions and defaults: ``docs/hierarchical.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.metrics import (
    fbeta_score,
    matthews_corrcoef,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)


class PerformanceIndexError(ValueError):
    """Bad settings or input for the index; the one-line message names the value and the valid
    choices."""


@dataclass(frozen=True)
class Metric:
    """One entry of Table 3.1: its task, whether it needs real probabilities, its ideal value."""

    name: str
    task: str  # "classification" or "regression"
    ideal: float
    needs_probabilities: bool = False  # one-hot vectors are not enough (AUC)
    uses_probabilities: bool = False  # reads the probability vectors (Brier, AUC)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", "classification", 1.0),
        Metric("f_beta", "classification", 1.0),
        Metric("brier", "classification", 0.0, uses_probabilities=True),
        Metric("mcc", "classification", 1.0),
        Metric("auc", "classification", 1.0, needs_probabilities=True, uses_probabilities=True),
        Metric("r2", "regression", 1.0),
        Metric("mae", "regression", 0.0),
        Metric("mse", "regression", 0.0),
    )
}
DEFAULT_WEIGHTS: Mapping[str, float] = {"accuracy": 1.0, "f_beta": 1.0, "brier": 1.0, "mcc": 1.0}


@dataclass(frozen=True)
class MetricScore:
    """One metric of the index: its raw value, baseline, ideal and homogenised value."""

    name: str
    value: float
    baseline: float
    ideal: float
    homogenised: float
    weight: float


@dataclass(frozen=True)
class IndexScore:
    """The index ``S`` (eq. 3.7) and the metrics it is made of (weights normalised)."""

    index: float
    metrics: tuple[MetricScore, ...]

    def metric(self, name: str) -> MetricScore:
        return next(m for m in self.metrics if m.name == name)


def homogenise(value: float, baseline: float, ideal: float) -> float:
    """``(value - baseline) / (ideal - baseline)``; 0 when the baseline is already ideal (one
    class only), [decision]."""
    if ideal == baseline:
        return 0.0
    return (value - baseline) / (ideal - baseline)


def gives_probabilities(estimator: Any) -> bool:
    """Whether a fitted or unfitted scikit-learn estimator offers ``predict_proba`` (an SVC
    without ``probability=True`` does not)."""
    return hasattr(estimator, "predict_proba")


def class_frequencies(labels: Sequence[Any] | np.ndarray, classes: Sequence[Any]) -> np.ndarray:
    """The relative frequency of each of ``classes`` among ``labels``, shape ``(len(classes),)``."""
    labels = np.asarray(labels)
    if not len(labels):
        raise PerformanceIndexError("class frequencies need at least one label")
    return np.array([np.mean(labels == c) for c in classes], dtype=float)


@dataclass(frozen=True)
class PerformanceIndex:
    """Settings of the index: metric ``weights`` (>= 0, not all 0, normalised to sum to 1; a
    zero weight disables a metric, §3.2), ``beta`` of F_beta, and ``one_hot_fallback``: whether
    a learner without probabilities may be scored on a probability metric through the one-hot
    vectors of its labels (the seed's rule, §3.2; AUC always needs real probabilities)."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    beta: float = 1.0
    one_hot_fallback: bool = True

    def __post_init__(self) -> None:
        for name, weight in self.weights.items():
            if name not in METRICS:
                raise PerformanceIndexError(
                    f"unknown metric {name!r}; valid choices: {', '.join(METRICS)}"
                )
            if not (isinstance(weight, int | float) and math.isfinite(weight) and weight >= 0):
                raise PerformanceIndexError(
                    f"metric weight {name}={weight!r} must be a finite number >= 0"
                )
        if not any(w > 0 for w in self.weights.values()):
            raise PerformanceIndexError(
                f"metric weights are all zero ({dict(self.weights)}); give at least one a "
                f"positive weight; valid metrics: {', '.join(METRICS)}"
            )
        tasks = {METRICS[n].task for n in self.active}
        if len(tasks) > 1:
            raise PerformanceIndexError(
                f"metrics {', '.join(self.active)} mix classification and regression; valid "
                f"classification metrics: {', '.join(_of_task('classification'))}; regression: "
                f"{', '.join(_of_task('regression'))}"
            )
        if not (math.isfinite(self.beta) and self.beta > 0):
            raise PerformanceIndexError(f"beta={self.beta} must be > 0")

    @property
    def active(self) -> tuple[str, ...]:
        """The metrics with a positive weight, in Table 3.1's order."""
        return tuple(n for n in METRICS if self.weights.get(n, 0) > 0)

    @property
    def task(self) -> str:
        return METRICS[self.active[0]].task

    def normalised_weights(self) -> dict[str, float]:
        total = sum(self.weights[n] for n in self.active)
        return {n: self.weights[n] / total for n in self.active}

    def needs_probabilities(self) -> tuple[str, ...]:
        """The active metrics a learner without probabilities cannot be scored on."""
        return tuple(
            n
            for n in self.active
            if METRICS[n].needs_probabilities
            or (METRICS[n].uses_probabilities and not self.one_hot_fallback)
        )

    def check_learner(self, learner: str, probabilities: bool) -> None:
        """Refuse a learner that gives no probabilities when a metric needs them."""
        needed = self.needs_probabilities()
        if needed and not probabilities:
            raise PerformanceIndexError(
                f"metric {needed[0]!r} needs predicted probabilities and learner {learner!r} "
                f"gives none; set its weight to 0 or leave the learner out"
            )

    def score(
        self,
        y_true: Sequence[Any] | np.ndarray,
        classes: Sequence[Any],
        train_frequencies: Sequence[float] | np.ndarray,
        labels: Sequence[Any] | np.ndarray | None = None,
        probabilities: np.ndarray | None = None,
        learner: str = "(unnamed)",
    ) -> IndexScore:
        """The index of a classifier's predictions on ``y_true``.

        ``probabilities``: shape ``(n, len(classes))``, columns in the order of ``classes``;
        ``labels``: the predicted labels (default: the most probable class). Without
        probabilities the labels' one-hot vectors are used (§3.2), if every active metric allows
        it (else :class:`PerformanceIndexError` naming ``learner``). ``train_frequencies``: the
        baseline's class frequencies, in the order of ``classes``.
        """
        if self.task != "classification":
            raise PerformanceIndexError(
                f"metrics {', '.join(self.active)} score regression; use score_regression"
            )
        classes_array = np.asarray(classes)
        y = np.asarray(y_true)
        unknown = sorted(set(y.tolist()) - set(classes_array.tolist()))
        if unknown:
            raise PerformanceIndexError(
                f"label {unknown[0]!r} is not one of the classes; valid choices: "
                f"{', '.join(map(str, classes_array.tolist()))}"
            )
        p = np.asarray(train_frequencies, dtype=float)
        if p.shape != (len(classes_array),) or abs(p.sum() - 1.0) > 1e-9 or (p < 0).any():
            raise PerformanceIndexError(
                f"train_frequencies must be {len(classes_array)} frequencies summing to 1, got "
                f"{p.tolist()}"
            )
        if probabilities is None:
            self.check_learner(learner, probabilities=False)
            if labels is None:
                raise PerformanceIndexError("score needs predicted labels or probabilities")
            probabilities = (np.asarray(labels)[:, None] == classes_array).astype(float)
        probabilities = np.asarray(probabilities, dtype=float)
        if probabilities.shape != (len(y), len(classes_array)):
            raise PerformanceIndexError(
                f"probabilities must have shape {(len(y), len(classes_array))}, got "
                f"{probabilities.shape}"
            )
        if labels is None:
            labels = classes_array[np.argmax(probabilities, axis=1)]
        predicted = np.asarray(labels)
        q = class_frequencies(y, classes_array)
        one_hot = (y[:, None] == classes_array).astype(float)
        metrics: dict[
            str, Callable[[], tuple[float, float]]
        ] = {  # (value, baseline) of each metric, computed only when active
            "accuracy": lambda: (float(np.mean(predicted == y)), float(q @ p)),
            "f_beta": lambda: (self._f_beta(y, predicted), self._f_beta_baseline(q, p)),
            "brier": lambda: (
                float(np.mean(np.sum((probabilities - one_hot) ** 2, axis=1))),
                float(p @ p - 2 * p @ q + 1.0),  # the constant vector p against frequencies q
            ),
            "mcc": lambda: (float(matthews_corrcoef(y, predicted)), 0.0),
            "auc": lambda: (_macro_auc(one_hot, probabilities), 0.5),
        }
        return self._combine({name: metrics[name]() for name in self.active})

    def score_regression(
        self,
        y_true: Sequence[float] | np.ndarray,
        y_pred: Sequence[float] | np.ndarray,
        train_mean: float,
    ) -> IndexScore:
        """The index of a regressor's predictions; the baseline predicts ``train_mean``."""
        if self.task != "regression":
            raise PerformanceIndexError(
                f"metrics {', '.join(self.active)} score classification; use score"
            )
        y, f = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
        base = np.full_like(y, float(train_mean))
        metrics: dict[str, Callable[[], tuple[float, float]]] = {
            "r2": lambda: (float(r2_score(y, f)), float(r2_score(y, base))),
            "mae": lambda: (float(mean_absolute_error(y, f)), float(mean_absolute_error(y, base))),
            "mse": lambda: (float(mean_squared_error(y, f)), float(mean_squared_error(y, base))),
        }
        return self._combine({name: metrics[name]() for name in self.active})

    def _combine(self, values: Mapping[str, tuple[float, float]]) -> IndexScore:
        weights = self.normalised_weights()
        metrics = []
        for name, weight in weights.items():
            value, baseline = values[name]
            ideal = METRICS[name].ideal
            metrics.append(
                MetricScore(
                    name, value, baseline, ideal, homogenise(value, baseline, ideal), weight
                )
            )
        index = float(sum(m.weight * m.homogenised for m in metrics))
        return IndexScore(index, tuple(metrics))

    def _f_beta(self, y: np.ndarray, predicted: np.ndarray) -> float:
        """Macro-F_beta over the classes present in the labels or the predictions [decision]."""
        return float(fbeta_score(y, predicted, beta=self.beta, average="macro", zero_division=0))

    def _f_beta_baseline(self, q: np.ndarray, p: np.ndarray) -> float:
        """Macro-F_beta of the expected confusion matrix of random assignment with ``p``, over
        the classes the labels or the assignment can hold (``q_c > 0`` or ``p_c > 0``)."""
        b2 = self.beta**2
        present = (q > 0) | (p > 0)
        per_class = (1 + b2) * q * p / np.where(present, b2 * q + p, 1.0)
        return float(per_class[present].mean())


def _macro_auc(one_hot: np.ndarray, probabilities: np.ndarray) -> float:
    """ROC AUC: binary on the second class's probability; with more classes, the mean of the
    one-vs-rest AUCs over the classes present with both outcomes [decision]."""
    if one_hot.shape[1] == 2:
        if one_hot[:, 1].min() == one_hot[:, 1].max():
            return math.nan
        return float(roc_auc_score(one_hot[:, 1], probabilities[:, 1]))
    scores = [
        roc_auc_score(one_hot[:, c], probabilities[:, c])
        for c in range(one_hot.shape[1])
        if 0 < one_hot[:, c].sum() < len(one_hot)
    ]
    return float(np.mean(scores)) if scores else math.nan


def _of_task(task: str) -> list[str]:
    return [n for n, m in METRICS.items() if m.task == task]
