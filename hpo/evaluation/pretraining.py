"""Checkpoints and pretraining: where a resumable learner (the seed-002 network) keeps each
configuration's model per split and fold, and several configurations' models of one learner and
split trained together (``register_learner(batch_trainer=…)``, :mod:`hpo.learners.batched_network`)
into those checkpoints, whose validations then resume from them and are credited what was
trained there."""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from hpo.evaluation.fitting import Fitter, config_key
from hpo.evaluation.protocol import Fold
from hpo.learners import FitGuard, learner_batch_trainer, make_estimator


class Checkpoints:
    """The checkpoint files of one run (a temporary folder, removed with this object, unless
    ``folder`` is given) and the epochs and seconds pretraining spent on each fold's model."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self._folder = None if folder is None else Path(folder)
        self._temporary: tempfile.TemporaryDirectory | None = None
        self._pretrained: dict[tuple, tuple[int, float]] = {}  # (epochs, seconds) per fold fit

    def path(self, config: Mapping[str, object], split: tuple, fold: int) -> Path:
        """Where ``config``'s model for fold ``fold`` of the split ``split`` is kept."""
        if self._folder is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="hpo-checkpoints-")
            self._folder = Path(self._temporary.name)
        text = json.dumps([config_key(config), split, fold], default=str)
        return self._folder / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.pt"

    def pretrained(
        self, config: Mapping[str, object], split: tuple, fold: int
    ) -> tuple[int, float] | None:
        """The (epochs, seconds) pretraining spent on this fold's model, once: the validation
        that resumes from it is credited them, and a later one trains anew."""
        return self._pretrained.pop((config_key(config), split, fold), None)

    def train_together(
        self,
        fitter: Fitter,
        guard: FitGuard,
        learner: str,
        configs: list[Mapping[str, object]],
        split: tuple,
        folds: Sequence[Fold],
        selection: np.ndarray,
        resource: float | None,
    ) -> None:
        """Train ``learner``'s ``configs`` together on each of ``folds`` of ``split`` up to
        ``resource`` epochs (None: to the learner's own end, its early stopping on the fold's
        validation rows), into their checkpoints; a fold whose training rows have one class is
        left (a constant model, as :func:`~hpo.learners.fit_and_predict` makes it)."""
        fit_together = learner_batch_trainer(learner)
        assert fit_together is not None
        y = fitter.y
        for index, fold in enumerate(folds):
            y_train = y[fold.train]
            if np.unique(y_train).size < 2:  # a constant model, as fit_and_predict makes it
                continue
            X_train, X_evals = fitter.features(fold.train, [fold.valid, selection])
            nets = [
                make_estimator(
                    learner, {**fitter.learner_settings, **c}, guard, fitter.learner_seed(c),
                    n_train=len(y_train),
                )
                for c in configs
            ]  # fmt: skip
            paths = [self.path(c, split, index) for c in configs]
            started = time.perf_counter()
            fit_together(nets, X_train, y_train, (X_evals[0], y[fold.valid]), resource, paths)
            seconds = (time.perf_counter() - started) / len(configs)
            for c, net in zip(configs, nets, strict=True):
                self._pretrained[(config_key(c), split, index)] = (net.epochs_run_, seconds)
