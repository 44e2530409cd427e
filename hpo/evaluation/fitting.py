"""One fit of a configuration: a learner fitted on some rows and scored on others, with the run's
fixed learner settings, its seeds, standardisation, the cached squared distances of a learner that
fits a precomputed kernel, and, under :class:`~hpo.evaluation.isolation.EvaluationLimits`, in a
limited child process (a fit past a limit is a failed one with the seed's loss)."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from hpo import seeding
from hpo.evaluation.isolation import EvaluationLimits, IsolatedWorker
from hpo.learners import (
    FitGuard,
    FitOutcome,
    SquaredDistanceCache,
    failed_predictions,
    fit_and_predict,
    learner_gram_parameter,
    learner_parameters,
)
from hpo.tasks import task_of_targets

LearnerOf = Callable[[Mapping[str, object]], str]  # a configuration's learner, by name

BREACH_LOSS = {"classification": 1.0, "regression": 1e20}  # error 100 %; RMSE 1e10 squared


def breach_loss(y: np.ndarray) -> float:
    """The loss of a fold past a resource limit [seed 004 §3, §4.1]: a zero-one error of 1.0
    (100 %) for classification, a squared error of 1e20 (an RMSE of 1e10) for regression."""
    return BREACH_LOSS[task_of_targets(y)]


def failure_if_not_finite(loss: float, y: np.ndarray) -> float:
    """``loss``, or :func:`breach_loss` when it is not finite (a regression learner whose
    predictions hold NaN or infinity cannot predict: seed 004 §4.1 scores it RMSE 1e10)."""
    return float(loss) if math.isfinite(loss) else breach_loss(y)


def config_key(config: Mapping[str, object]) -> tuple:
    """A hashable, order-independent key of a configuration."""
    return tuple(sorted(config.items()))


def standardize_features(
    X_train: np.ndarray, X_others: list[np.ndarray]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """``X_train`` and ``X_others`` z-scored with ``X_train``'s column means and standard
    deviations (thesis §5.5; a constant column is only centred), so no statistic of a validation
    or test row enters its own transformation."""
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    scale = np.where(std > 0, std, 1.0)
    return (X_train - mean) / scale, [(X - mean) / scale for X in X_others]


class Fitter:
    """Fits configurations on rows of ``X``/``y`` (the concatenation ``[X; X_test]``).

    ``learner_of`` names a configuration's learner; ``learner_settings`` are the space's fixed
    settings given to every fit; ``seed_key`` (seed, dataset stream, repetition) derives each
    configuration's learner seed; ``standardize`` z-scores the features of each fit with its
    training rows' statistics; ``distance_cache_mb`` > 0 keeps squared distances for learners
    that fit a precomputed RBF kernel (not with standardisation: its features differ per fit);
    ``limits`` runs every fit in a child process; ``n_classes`` asks for class probabilities.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        learner_of: LearnerOf,
        seed_key: tuple[int, str, int],
        standardize: bool,
        learner_settings: Mapping[str, object],
        distance_cache_mb: float,
        limits: EvaluationLimits | None,
        n_classes: int | None,
    ) -> None:
        self.X, self.y = X, y
        self.learner_of = learner_of
        self.seed_key = seed_key
        self.standardize = standardize
        self.learner_settings = dict(learner_settings)
        self.n_classes = n_classes
        self.worker = IsolatedWorker(limits) if limits is not None else None
        self.distances = (
            SquaredDistanceCache(X, distance_cache_mb)
            if distance_cache_mb > 0 and not standardize
            else None  # standardised features differ per fit: no shared distances
        )

    def learner_seed(self, config: Mapping[str, object]) -> int:
        """The seed of a stochastic learner at ``config``: its validation fits and its final
        retraining share it, so the cached results are those of one model."""
        seed, dataset, repetition = self.seed_key
        text = json.dumps(config_key(config), default=str)
        return seeding.int_seed(seeding.seed_sequence(seed, dataset, repetition, "learner", text))

    def features(
        self, train: np.ndarray, evals: list[np.ndarray]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The features of the rows ``train`` and of each of ``evals``, standardised with the
        training rows' statistics when the run standardises."""
        X_train, X_evals = self.X[train], [self.X[rows] for rows in evals]
        if self.standardize:
            X_train, X_evals = standardize_features(X_train, X_evals)
        return X_train, X_evals

    def fit(
        self,
        config: Mapping[str, object],
        train: np.ndarray,
        evals: list[np.ndarray],
        train_key: tuple,
        guard: FitGuard,
        early_stopping: bool = False,
        epochs: float | None = None,
        checkpoint: Path | None = None,
    ) -> FitOutcome:
        """Fit on rows ``train`` (identified by ``train_key`` for the distance cache), predict
        each of ``evals``; the fit's seconds include computing a precomputed RBF kernel. With
        ``early_stopping`` a learner that supports it stops on ``evals[0]`` (the validation
        rows); ``epochs`` and ``checkpoint`` go to a resumable learner."""
        learner = self.learner_of(config)
        started = time.perf_counter()
        gram = None
        width = learner_gram_parameter(learner)  # a learner that fits a precomputed kernel
        if self.distances is not None and width is not None:
            gamma = float(learner_parameters(learner, config)[width])  # prefixed names too
            gram = self.distances.gram(train_key, train, gamma)
        gram_seconds = time.perf_counter() - started
        X_train, X_evals = self.features(train, evals)
        arguments = (
            learner,
            {**self.learner_settings, **config},
            guard,
            X_train,
            self.y[train],
            [(X, self.y[rows]) for X, rows in zip(X_evals, evals, strict=True)],
            self.learner_seed(config),
            gram,
        )
        keywords = {  # a resumable learner's settings (seed 002); probabilities (seed 003)
            "validation": (X_evals[0], self.y[evals[0]]) if early_stopping else None,
            "epochs": epochs,
            "checkpoint": None if checkpoint is None else str(checkpoint),
            **({} if self.n_classes is None else {"n_classes": self.n_classes}),
        }
        if self.worker is None:
            outcome = fit_and_predict(*arguments, **keywords)
        else:
            outcome = self._fit_isolated(arguments, keywords, evals)
        return dataclasses.replace(outcome, fit_seconds=outcome.fit_seconds + gram_seconds)

    def _fit_isolated(
        self, arguments: tuple, keywords: Mapping[str, object], evals: list[np.ndarray]
    ) -> FitOutcome:
        """:func:`fit_and_predict` in the child process; a breach is a failed outcome with the
        seed's loss on every evaluation set."""
        assert self.worker is not None
        isolated = self.worker.run(functools.partial(fit_and_predict, **keywords), *arguments)
        if isolated.failure is None:
            return isolated.value
        y_train = arguments[4]
        return self.failed(y_train, evals, isolated.seconds, isolated.failure, breached=True)

    def failed(
        self,
        y_train: np.ndarray,
        evals: list[np.ndarray],
        seconds: float,
        failure: str,
        breached: bool = False,
    ) -> FitOutcome:
        """A fit that gave no model (seed 004): failed predictions and the seed's loss on each
        evaluation set; rows of zero class probabilities when the run keeps them (seed 003)."""
        predictions = tuple(failed_predictions(y_train, len(rows)) for rows in evals)
        loss = breach_loss(self.y)
        errors = tuple(loss if len(rows) else float("nan") for rows in evals)
        probabilities = (
            None
            if self.n_classes is None
            else tuple(np.zeros((len(rows), self.n_classes)) for rows in evals)
        )
        return FitOutcome(
            predictions, errors, seconds, False, failure, breached=breached,
            probabilities=probabilities,
        )  # fmt: skip

    def warm_up(self) -> None:
        """Start the limits' child process now (a forkserver start with its imports takes
        seconds), so that a run's time budget does not pay for it."""
        if self.worker is not None:
            self.worker.run(int, 0)

    @property
    def child_cpu_seconds(self) -> float:
        """CPU seconds spent in the limits' child processes (0 without limits)."""
        return self.worker.cpu_seconds if self.worker is not None else 0.0

    def close(self) -> None:
        """Stop the child process of the limits, if any."""
        if self.worker is not None:
            self.worker.close()
