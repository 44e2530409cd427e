"""Evaluation under the protocol: a configuration goes in, losses (and predictions) come out.

This module owns what one run does with its data: for a configuration and a batch it fits the
learner the configuration names on each training fold of that batch's split and scores it on the
fold's validation rows and on the selection split D_S (thesis §3.3, Fig 3.2); for a chosen
configuration it retrains on all of D_TVS and scores on the test split D_G. Zero-one losses
(squared errors on a regression set, :mod:`hpo.tasks`) are computed from the predictions, which
are kept when the run asks for them (ensembles, Chapter 4, work on predictions, not on error
rates). A fold's loss is the run's objective's (:mod:`hpo.evaluation.objective`): the zero-one
error unless the run names another, such as seed 003's performance index (§3.2, loss ``1 − S``,
from the fold model's class probabilities), for which the fits are asked for probabilities too.

Fits are deterministic (a stochastic learner's seed is derived from the run's seed, dataset,
repetition and the configuration itself), so a configuration already scored on the same folds (a
repeated grid point, CMA-ES offspring clipped to the same corner) is not fitted again, and a
chosen configuration is retrained once per run whichever rules choose it.

With :class:`~hpo.evaluation.isolation.EvaluationLimits` (seed 004 §4.1; off unless a run sets
``limits``)
every fit runs in a child process under a time and memory limit; a fit past a limit, or whose
child dies, is a failed fold with the seed's loss (:func:`breach_loss`: error 100 %, RMSE 1e10),
and after ``max_failed_folds`` consecutive failed folds the configuration's remaining folds are
skipped and count as failed too.

Row indices index the concatenation ``[X; X_test]`` of the run's :class:`~hpo.data.catalog.Dataset`.

Partial evaluations (seed 002, multi-fidelity): :meth:`Evaluator.validate` may be given a
resource. With ``epochs`` a learner that can continue (the seed-002 network) trains up to that
many epochs, resuming from its checkpoint (one file per configuration, split and fold, in the
run's checkpoint folder); with ``train_fraction`` each fold's fit uses that share of its training
rows (a seeded subset, nested as the share grows). ``Validation.resource_spent`` is what the fits
actually used (epochs, fewer after early stopping; or the shares). Without a resource nothing
changes. :meth:`Evaluator.pretrain` trains several networks' folds at once
(:mod:`hpo.learners.batched_network`) into those checkpoints before they are validated one by
one (to a resource, or to a full evaluation's end, which that validation then resumes); each
validation then credits the epochs and seconds its network was trained there.

The module owns validation and its caches; one fit is :mod:`hpo.evaluation.fitting`'s
(:class:`~hpo.evaluation.fitting.Fitter`), checkpoints and pretraining are
:mod:`hpo.evaluation.pretraining`'s, a choice's test error :mod:`hpo.evaluation.choices`' and a
time budget's clock :mod:`hpo.evaluation.clock`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo import seeding
from hpo.data.catalog import Dataset
from hpo.evaluation.fitting import (
    Fitter,
    LearnerOf,
    config_key,
)
from hpo.evaluation.isolation import EvaluationLimits
from hpo.evaluation.objective import Objective, ScoredSet, ZeroOneLoss
from hpo.evaluation.pretraining import Checkpoints
from hpo.evaluation.protocol import Fold, ProtocolSettings, RepetitionSplits
from hpo.learners import FitGuard, FitOutcome, learner_batch_trainer
from hpo.records import FoldPredictions
from hpo.tasks import REGRESSION, task_of_targets


@dataclass(frozen=True)
class Validation:
    """A configuration scored on one batch's folds: fold means of the zero-one losses.

    ``selection_loss`` is NaN without a selection split; ``failure`` is the first fold's error
    message when the learner failed (its losses are then 1.0, see :mod:`hpo.learners`);
    ``predictions`` is set only when the evaluator keeps predictions.
    """

    valid_loss: float
    selection_loss: float
    n_fits: int
    fit_limit_hits: int
    fit_seconds: float
    failure: str | None = None
    predictions: tuple[FoldPredictions, ...] | None = None
    constant_fits: int = 0  # folds whose training rows had one class (a constant classifier)
    resource: float | None = None  # the resource asked (partial evaluations, seed 002)
    resource_spent: float | None = None  # epochs trained (or training shares used), all folds
    limit_breaches: int = 0  # folds past a time or memory limit, or whose child died (seed 004)
    skipped_folds: int = 0  # folds not fitted after max_failed_folds consecutive breaches


@dataclass(frozen=True)
class _ScoredFold:
    """One fold of a validation: its losses by the run's objective, the fit's outcome, the
    predictions kept (when the run keeps them) and the resource it spent."""

    valid_loss: float
    selection_loss: float
    outcome: FitOutcome
    kept: FoldPredictions | None
    resource_spent: tuple[float, ...]  # the share of training rows used, epochs trained
    skipped: bool = False  # not fitted: limits.max_failed_folds consecutive failed folds before


@dataclass(frozen=True)
class TestResult:
    """A configuration retrained on all of D_TVS and scored on D_G."""

    error: float
    hit_limit: bool
    fit_seconds: float
    failure: str | None = None
    predictions: np.ndarray | None = None
    probabilities: np.ndarray | None = None  # (n_test, n_classes), when the run keeps them


class Evaluator:
    """Scores configurations on the folds of a batch and tests chosen ones (both cached).

    ``learner_of`` names the learner of a configuration (the space's choice, e.g. its
    ``classifier`` parameter, or its one fixed learner). ``objective`` scores the folds
    (:mod:`hpo.evaluation.objective`; the zero-one error unless given); ``keep_probabilities``:
    keep the class probabilities with the predictions (and the test results). ``limits`` runs
    every fit in a child process under them and skips a configuration's remaining folds after
    ``limits.max_failed_folds`` consecutive failed ones.
    """

    def __init__(
        self,
        data: Dataset,
        protocol: ProtocolSettings,
        learner_of: LearnerOf,
        guard: FitGuard,
        seed: int,
        repetition: int,
        keep_predictions: bool = False,
        learner_settings: Mapping[str, object] | None = None,
        checkpoint_dir: str | Path | None = None,
        limits: EvaluationLimits | None = None,
        objective: Objective | None = None,
        keep_probabilities: bool = False,
    ) -> None:
        X_parts = [data.X] if data.X_test is None else [data.X, data.X_test]
        y_parts = [data.y] if data.y_test is None else [data.y, data.y_test]
        self.X = np.concatenate(X_parts)
        self.y = np.concatenate(y_parts)
        self.splits = RepetitionSplits(
            self.y,
            len(data.y),
            data.has_predefined_test,
            protocol,
            seed,
            data.stream_name,
            repetition,
        )
        self.learner_of = learner_of
        self.guard = guard
        self.keep_predictions = keep_predictions
        self.limits = limits
        self._max_failed_folds = math.inf if limits is None else limits.max_failed_folds
        self.objective = objective if objective is not None else ZeroOneLoss()
        self.keep_probabilities = keep_probabilities
        wants_probabilities = self.objective.needs_probabilities or keep_probabilities
        if wants_probabilities and task_of_targets(self.y) == REGRESSION:
            raise ValueError(
                f"dataset {data.name!r} is a regression dataset; the performance index and "
                "class probabilities need a classification dataset"
            )
        self.n_classes = int(self.y.max()) + 1 if wants_probabilities else None
        self._classes = None if self.n_classes is None else np.arange(self.n_classes)
        self.fitter = Fitter(
            self.X,
            self.y,
            learner_of,
            (seed, data.stream_name, repetition),
            protocol.standardize,
            learner_settings or {},
            guard.distance_cache_mb,
            limits,
            self.n_classes,
        )
        self.checkpoints = Checkpoints(checkpoint_dir)
        self._valid_cache: dict[tuple, Validation] = {}
        self._test_cache: dict[tuple, TestResult] = {}

    @property
    def learner_settings(self) -> dict[str, object]:
        """The space's fixed settings every fit is given (:attr:`Fitter.learner_settings`)."""
        return self.fitter.learner_settings

    def learner_seed(self, config: Mapping[str, object]) -> int:
        """The seed of a stochastic learner at ``config`` (:meth:`Fitter.learner_seed`)."""
        return self.fitter.learner_seed(config)

    def close(self) -> None:
        """Stop the child process of the limits, if any."""
        self.fitter.close()

    def fit_rows(
        self, config: Mapping[str, object], train: np.ndarray, evals: list[np.ndarray]
    ) -> FitOutcome:
        """``config`` fitted on rows ``train`` and scored on each of ``evals`` under the run's
        guard and limits, uncached: the per-instance evaluations of seed 004's optimizers
        (:mod:`hpo.cash`), whose instances are folds, nested subsamples or random splits."""
        key = ("rows", hashlib.sha1(train.tobytes()).hexdigest())  # the distance-cache key
        return self.fitter.fit(config, train, evals, key, self.guard)

    def warm_up(self) -> None:
        """Start the limits' child process now, so that a run's time budget does not pay for
        it (:meth:`Fitter.warm_up`)."""
        self.fitter.warm_up()

    @property
    def child_cpu_seconds(self) -> float:
        """CPU seconds spent in the limits' child processes (0 without limits)."""
        return self.fitter.child_cpu_seconds

    def checkpoint_path(self, config: Mapping[str, object], batch: int, fold: int) -> Path:
        """Where a resumable learner keeps ``config``'s model for ``batch``'s fold ``fold``: the
        run's checkpoint folder (a temporary one, removed with the evaluator, unless given)."""
        return self.checkpoints.path(config, self.splits.split_key(batch), fold)

    def pretrain(
        self, proposals: Sequence[tuple[Mapping[str, object], int]], resource: float | None
    ) -> int:
        """Train the models of ``proposals`` (configuration, batch) whose learner trains
        several at once (``register_learner(batch_trainer=…)``: the seed-002 network) up to
        ``resource`` epochs (None: a full evaluation's, the learner's ``max_epochs`` with its
        early stopping), those of one split and learner together on each of its folds, into the
        checkpoints their validation resumes from; that validation then trains nothing more
        and is credited these epochs and an equal share of the seconds. Configurations already
        validated at this resource, other learners, a split's lone model, and everything
        under isolation limits are left to :meth:`validate`. Returns how many configurations it
        trained."""
        if self.limits is not None:
            return 0
        groups: dict[tuple, tuple[int, list[Mapping[str, object]]]] = {}
        for config, batch in proposals:
            learner = self.learner_of(config)
            known = self._valid_key(config, batch, resource, "epochs") in self._valid_cache
            if learner_batch_trainer(learner) is not None and not known:
                key = (learner, self.splits.split_key(batch))
                groups.setdefault(key, (batch, []))[1].append(config)
        together = [(key[0], batch, todo) for key, (batch, todo) in groups.items() if len(todo) > 1]
        for learner, batch, todo in together:  # one model alone trains faster by itself
            self.checkpoints.train_together(
                self.fitter,
                self.guard,
                learner,
                todo,
                self.splits.split_key(batch),
                self.splits.folds(batch),
                self.splits.selection,
                resource,
            )
        return sum(len(todo) for _, _, todo in together)

    def _share_of(self, train: np.ndarray, share: float, batch: int, fold: int) -> np.ndarray:
        """A seeded ``share`` of the training rows ``train``; a larger share keeps the smaller
        one's rows (the same permutation, a longer prefix)."""
        if not 0.0 < share <= 1.0:
            raise ValueError(f"a train_fraction resource must be in (0, 1], got {share}")
        seed, dataset, repetition = self.fitter.seed_key
        purpose = ("train-fraction", str(self.splits.split_key(batch)), fold)
        order = seeding.rng(seed, dataset, repetition, *purpose).permutation(len(train))
        return np.sort(train[order[: max(1, math.ceil(share * len(train)))]])

    def _valid_key(
        self,
        config: Mapping[str, object],
        batch: int,
        resource: float | None,
        resource_kind: str,
    ) -> tuple:
        key = (config_key(config), self.splits.split_key(batch))
        if resource is not None:
            key = (*key, resource_kind, float(resource))
        return key

    def remember(
        self,
        config: Mapping[str, object],
        batch: int,
        validation: Validation,
        resource: float | None = None,
        resource_kind: str = "epochs",
    ) -> None:
        """Learn ``validation`` as :meth:`validate`'s answer for ``config`` on ``batch`` without
        fitting (a resumed run's recorded evaluations, :mod:`experiments.run.journal`); the first
        answer is the one kept, as :meth:`validate` keeps it."""
        self._valid_cache.setdefault(
            self._valid_key(config, batch, resource, resource_kind), validation
        )

    def validate(
        self,
        config: Mapping[str, object],
        batch: int,
        resource: float | None = None,
        resource_kind: str = "epochs",
    ) -> Validation:
        """The fold means of the validation and selection losses of ``config`` on ``batch``'s
        folds (a configuration already scored on the same folds is not fitted again), trained
        up to ``resource`` (``epochs`` or ``train_fraction``) when one is given."""
        key = self._valid_key(config, batch, resource, resource_kind)
        if key in self._valid_cache:
            cached = self._valid_cache[key]
            spent = None if cached.resource_spent is None else 0.0
            return dataclasses.replace(cached, n_fits=0, fit_seconds=0.0, resource_spent=spent)
        folds = self.splits.folds(batch)
        scored: list[_ScoredFold] = []
        in_a_row = 0  # consecutive failed folds (limits.max_failed_folds)
        for index, fold in enumerate(folds):
            if in_a_row >= self._max_failed_folds:  # the rest are skipped, and failed (seed 004)
                skipped = self.fitter.failed(
                    self.y[fold.train],
                    [fold.valid, self.splits.selection],
                    0.0,
                    "skipped after failing folds",
                )
                scored.append(self._score_fold(config, fold, fold.train, skipped, skipped=True))
                continue
            train, outcome, share = self._fit_fold(
                config, batch, index, fold, resource, resource_kind
            )
            in_a_row = in_a_row + 1 if outcome.breached else 0
            scored.append(self._score_fold(config, fold, train, outcome, share))
        result = self._validation(scored, resource)
        self._valid_cache[key] = result
        return result

    def _fit_fold(
        self,
        config: Mapping[str, object],
        batch: int,
        index: int,
        fold: Fold,
        resource: float | None,
        resource_kind: str,
    ) -> tuple[np.ndarray, FitOutcome, float | None]:
        """``config`` fitted on fold ``index`` of ``batch`` and scored on its validation rows and
        the selection split: on a seeded share of its training rows (``train_fraction``, the
        share returned) or up to ``resource`` epochs from its checkpoint, when a resource is
        given; a full evaluation that :meth:`pretrain` trained resumes from its checkpoint too.
        Returns the training rows used, the outcome and the share."""
        train_key: tuple = ("fold", self.splits.split_key(batch), index)
        train, fit_options, share = fold.train, {}, None
        pretrained = self.checkpoints.pretrained(config, train_key[1], index)
        if resource is not None and resource_kind == "train_fraction":
            train = self._share_of(fold.train, float(resource), batch, index)
            train_key = (*train_key, "share", float(resource))
            share = len(train) / len(fold.train)
        elif resource is not None or pretrained is not None:
            fit_options = {  # a full evaluation resumes only what pretrain trained to its end
                "epochs": resource,
                "checkpoint": self.checkpoint_path(config, batch, index),
            }
        evals = [fold.valid, self.splits.selection]
        outcome = self.fitter.fit(
            config, train, evals, train_key, self.guard, early_stopping=True, **fit_options
        )
        if pretrained is not None and outcome.resource_spent is not None:
            epochs, seconds = pretrained
            outcome = dataclasses.replace(
                outcome,
                resource_spent=outcome.resource_spent + epochs,
                fit_seconds=outcome.fit_seconds + seconds,
            )
        return train, outcome, share

    def _score_fold(
        self,
        config: Mapping[str, object],
        fold: Fold,
        train: np.ndarray,
        outcome: FitOutcome,
        share: float | None = None,
        skipped: bool = False,
    ) -> _ScoredFold:
        """One fold's losses by the run's objective, and what the validation keeps of it."""
        learner = self.learner_of(config)

        def loss(which: int, rows: np.ndarray) -> float:
            scored = ScoredSet(outcome, which, self.y, train, rows, self._classes, learner)
            return self.objective.loss(scored)

        kept = None
        if self.keep_predictions:
            probabilities = outcome.probabilities if self.keep_probabilities else (None, None)
            kept = FoldPredictions(
                fold.valid, self.y[fold.valid], *outcome.predictions, *probabilities
            )
        spent = tuple(s for s in (share, outcome.resource_spent) if s is not None)
        return _ScoredFold(
            loss(0, fold.valid), loss(1, self.splits.selection), outcome, kept, spent, skipped
        )

    def _validation(self, folds: list[_ScoredFold], resource: float | None) -> Validation:
        """The fold means and counts of a configuration's scored folds."""
        outcomes = [f.outcome for f in folds]
        spent = [s for f in folds for s in f.resource_spent]
        skipped = sum(f.skipped for f in folds)
        return Validation(
            valid_loss=float(np.mean([f.valid_loss for f in folds])),
            selection_loss=(
                float(np.mean([f.selection_loss for f in folds]))
                if len(self.splits.selection)
                else float("nan")
            ),
            n_fits=len(folds) - skipped,
            fit_limit_hits=sum(o.hit_limit for o in outcomes),
            fit_seconds=sum(o.fit_seconds for o in outcomes),
            failure=next((o.failure for o in outcomes if o.failure), None),
            predictions=tuple(f.kept for f in folds) if self.keep_predictions else None,
            constant_fits=sum(o.constant for o in outcomes),
            resource=None if resource is None else float(resource),
            resource_spent=float(sum(spent)) if spent else None,
            limit_breaches=sum(o.breached for o in outcomes),
            skipped_folds=skipped,
        )

    def holdout_scores(
        self, config: Mapping[str, object], folds: Sequence[Fold]
    ) -> tuple[list[float], float]:
        """Seed 003's model-selection scores (§3.3): ``config`` fitted on each fold's training
        rows and scored on its validation rows by the index (``1 −`` the zero-one error
        without one); returns the scores and the mean fit seconds."""
        scores, seconds = [], 0.0
        learner = self.learner_of(config)
        for fold in folds:
            train_key = ("holdout", hash(fold.train.tobytes()))
            outcome = self.fitter.fit(config, fold.train, [fold.valid], train_key, self.guard)
            seconds += outcome.fit_seconds
            scored = ScoredSet(outcome, 0, self.y, fold.train, fold.valid, self._classes, learner)
            scores.append(self.objective.score(scored))
        return scores, seconds / max(len(folds), 1)

    def test(self, config: Mapping[str, object]) -> TestResult:
        """``config`` retrained on all of D_TVS (no work limit, thesis §3.3) and scored on D_G."""
        key = config_key(config)
        if key not in self._test_cache:
            outcome = self.fitter.fit(
                config,
                self.splits.train_valid_selection,
                [self.splits.test],
                ("tvs",),
                self.guard.for_retraining(),
            )
            self._test_cache[key] = TestResult(
                outcome.errors[0],
                outcome.hit_limit,
                outcome.fit_seconds,
                outcome.failure,
                outcome.predictions[0],
                outcome.probabilities[0] if self.keep_probabilities else None,
            )
        return self._test_cache[key]
