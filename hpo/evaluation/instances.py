"""A configuration's loss on one instance (seed 004 §2.2, §4.4): the optimiser's view of the data.

The data are split once per repetition by :class:`hpo.evaluation.protocol.RepetitionSplits` (seed
§4.1):
the test split (predefined, else a seeded 30 %), and inside the training set a 30 % split that
the optimiser never sees (the "validation" data of the overfitting diagnostic, §4.2.3; the
protocol's selection split) and the 70 % ``D_TV`` it optimises on. Instances are pairs of row
sets inside ``D_TV``:

* ``cv`` — the k folds of the protocol (10 in the seed);
* ``multilevel`` — SMAC-Multi-Level (§4.4, Fig. 4.9): 4 levels, level 3 = ``D_TV``, each lower
  level a random 70 % of the one above, each split into k folds; ordered level 0 first;
* ``rrsv`` — SMAC-RRSV (§4.4): ``n_rrsv`` random 70/30 train/validation splits of ``D_TV``.

:class:`InstanceObjective` scores (configuration, instance) pairs through the run's
:class:`~hpo.evaluation.evaluator.Evaluator` (its guard and per-evaluation limits), caches them,
and applies
the seed's rule: after ``max_failed_folds`` consecutive instances past a limit the
configuration's later instances are failed without fitting.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo import seeding
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.fitting import breach_loss, failure_if_not_finite

# seed 004 §4.1: "RMSE 10^10 for a learner that cannot predict"; irace's wrapper scores a
# non-numeric result as the failure loss too (spec B1.6)
NOT_FINITE = "non-finite predictions (scored as a failed fold)"

INSTANCE_KINDS = ("cv", "multilevel", "rrsv")


@dataclass(frozen=True)
class Instance:
    """Training and validation rows (indices into the evaluator's ``[X; X_test]``)."""

    train: np.ndarray
    valid: np.ndarray
    level: int = 0


@dataclass(frozen=True)
class InstanceResult:
    """One evaluation: the validation loss, the loss on the diagnostic split, its cost."""

    loss: float
    diagnostic_loss: float
    seconds: float
    breached: bool
    skipped: bool = False
    failure: str | None = None


def config_id(config: Mapping[str, Any]) -> str:
    """A stable text key of a configuration."""
    return json.dumps(sorted(config.items()), default=str)


def make_instances(
    evaluator: Evaluator, kind: str, seed: int, dataset: str, repetition: int, n_rrsv: int = 1000
) -> list[Instance]:
    """The instances of ``kind`` (see the module) for the evaluator's repetition."""
    if kind not in INSTANCE_KINDS:
        raise ValueError(f"unknown instances {kind!r}; valid choices: {', '.join(INSTANCE_KINDS)}")
    folds = evaluator.splits.folds(0)
    if kind == "cv":
        return [Instance(f.train, f.valid) for f in folds]
    rows = np.sort(np.concatenate([folds[0].train, folds[0].valid]))
    rng = seeding.rng(seed, dataset, repetition, "instances", kind)
    k = len(folds)
    if kind == "rrsv":
        out = []
        for _ in range(n_rrsv):
            order = rng.permutation(rows)
            cut = int(round(0.7 * len(order)))
            out.append(Instance(np.sort(order[:cut]), np.sort(order[cut:])))
        return out
    levels = [rows]
    for _ in range(3):  # levels 2, 1, 0: each a random 70 % of the one above
        above = levels[-1]
        levels.append(np.sort(rng.choice(above, int(round(0.7 * len(above))), replace=False)))
    out = []
    for level, level_rows in enumerate(reversed(levels)):
        order = rng.permutation(level_rows)
        parts = np.array_split(order, k)
        for i in range(k):
            train = np.sort(np.concatenate([p for j, p in enumerate(parts) if j != i]))
            out.append(Instance(train, np.sort(parts[i]), level))
    return out


class InstanceObjective:
    """Losses of configurations on instances, cached, with the seed's failed-fold rule."""

    def __init__(self, evaluator: Evaluator, instances: list[Instance]) -> None:
        if not instances:
            raise ValueError("an objective needs at least one instance")
        self.evaluator = evaluator
        self.instances = instances
        self.diagnostic = evaluator.splits.selection
        self._cache: dict[tuple[str, int], InstanceResult] = {}
        self._failed_in_a_row: dict[str, int] = {}
        self._by_config: dict[str, dict[int, float]] = {}
        limits = evaluator.limits
        self.max_failed = limits.max_failed_folds if limits is not None else None

    @property
    def n_instances(self) -> int:
        return len(self.instances)

    def evaluate(self, config: Mapping[str, Any], index: int) -> InstanceResult:
        """The loss of ``config`` on instance ``index`` (fitted once per pair)."""
        key = (config_id(config), index)
        if key in self._cache:
            return self._cache[key]
        instance = self.instances[index]
        in_a_row = self._failed_in_a_row.get(key[0], 0)
        if self.max_failed is not None and in_a_row >= self.max_failed:
            loss = breach_loss(self.evaluator.y)
            result = InstanceResult(loss, loss, 0.0, False, True, "skipped after failing folds")
        else:
            outcome = self.evaluator.fit_rows(
                config, instance.train, [instance.valid, self.diagnostic]
            )
            loss, diagnostic = (self.seed_loss(e) for e in outcome.errors)
            predicted = bool(np.isfinite(outcome.errors[0]))  # the validation fold's
            failure = outcome.failure or (None if predicted else NOT_FINITE)
            result = InstanceResult(
                loss, diagnostic, outcome.fit_seconds, outcome.breached, False, failure
            )
            failed = outcome.breached or not predicted
            self._failed_in_a_row[key[0]] = in_a_row + 1 if failed else 0
        self._cache[key] = result
        self._by_config.setdefault(key[0], {})[index] = result.loss
        return result

    def estimate(self, config: Mapping[str, Any]) -> float:
        """The mean loss of ``config`` over the instances evaluated so far (NaN if none)."""
        losses = self._by_config.get(config_id(config), {})
        return float(np.mean(list(losses.values()))) if losses else float("nan")

    def n_evaluated(self, config: Mapping[str, Any]) -> int:
        """How many instances ``config`` has been evaluated on."""
        return len(self._by_config.get(config_id(config), {}))

    def seed_loss(self, loss: float) -> float:
        """``loss``, or the seed's failure loss when it is not finite (§4.1: a learner that
        cannot predict scores RMSE 1e10): every loss of a seed-004 run passes through here."""
        return failure_if_not_finite(loss, self.evaluator.y)

    def test_loss(self, config: Mapping[str, Any]) -> float:
        """``config`` retrained on the whole training set and scored once on the test set."""
        return self.seed_loss(self.evaluator.test(config).error)

    def mean_loss(
        self, config: Mapping[str, Any], indices: range | list[int] | None = None
    ) -> float:
        """The mean loss of ``config`` over ``indices`` (every instance by default)."""
        indices = range(self.n_instances) if indices is None else indices
        return float(np.mean([self.evaluate(config, i).loss for i in indices]))

    def diagnostic_loss(self, config: Mapping[str, Any]) -> float:
        """``config`` trained on all of ``D_TV`` and scored on the 30 % diagnostic split
        (seed §4.2.3)."""
        outcome = self.evaluator.fit_rows(
            config, self.evaluator.splits.train_valid, [self.diagnostic]
        )
        return self.seed_loss(outcome.errors[0])
