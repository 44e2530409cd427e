"""Seed 003's model-selection stage inside a run (Bermúdez-Chacón 2014, §3.5, Fig. 3.1 step 3):
from the optimisation trace to the ranked, statistically tied set of models.

1. Candidates: every distinct evaluated configuration, grouped by leaf — its learner and the
   values of its categorical parameters (its signature, §3.1.2), virtual ones included.
2. Per leaf, the k-means filter (§3.5.1, :func:`hpo.significance.comparisons.kmeans_filter`, k =
10) on
   the configurations' unit-cube points keeps the best one (by optimisation score) per cluster.
3. Each kept candidate is scored by ``repeats`` × ``folds``-fold stratified CV (3 × 10 = 30
   scores, §3.3) on the hold-out part H — the run's outer split D_G, which the optimisation
   never saw — with the run's performance index (``1 −`` the zero-one error without one).
4. Algorithm 3 (:func:`hpo.significance.comparisons.select_hierarchically`): the cascade (Algorithm
2)
   within each leaf, then among each learner's promoted models, then among the learners at the
   root, promoting the ``top_n`` tied models ranked by the criteria's importances (Table 3.2).

The output (:class:`StageResult`) has one row per scored candidate: its optimisation score, its
30 hold-out scores (mean, standard deviation = stability), mean fit seconds (runtime), and for
the models that reached the root their rank, p-value against the best and tied flag.

The defaults baseline (§5, Table 5.1's "Default Worst/Best", Figs 5.1–5.2's thin boxes), with
``defaults``: every learner of the space at scikit-learn's defaults (the configuration that
names the learner only, so its factory builds the bare estimator) scored by the same index on
the same 30 folds of H as the candidates; one row each, ``ms_kind == "default"``, outside the
cascade (the seed tests the optimised models only).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold

from hpo import seeding
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.fitting import config_key
from hpo.evaluation.protocol import Fold
from hpo.significance.comparisons import (
    DEFAULT_IMPORTANCES,
    Candidate,
    HierarchicalSelection,
    ModelSelectionError,
    check_alpha,
    check_importances,
    kmeans_filter,
    select_hierarchically,
)
from hpo.space.search_space import Categorical, Space


@dataclass(frozen=True)
class SelectionSettings:
    """The stage's settings (``optimizer.model_selection`` in a method config)."""

    alpha: float = 0.05  # [decision] the seed leaves α to the user
    k: int = 10  # [seed §3.5.1] k-means clusters per leaf
    repeats: int = 3  # [seed §3.3] m = 3 repetitions ...
    folds: int = 10  # ... of k = 10-fold CV on H: 30 scores per model
    top_n: int = 3  # [decision] models promoted per node (Algorithm 3)
    importances: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_IMPORTANCES))
    defaults: bool = False  # [seed §5] score every learner at its defaults too (the baseline)

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        check_importances(self.importances)
        for name, low in (("k", 1), ("repeats", 1), ("folds", 2), ("top_n", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ModelSelectionError(f"{name}={value!r} must be an integer >= {low}")
        if not isinstance(self.defaults, bool):
            raise ModelSelectionError(f"defaults={self.defaults!r} must be true or false")


@dataclass(frozen=True)
class StageResult:
    """The stage's rows (see the module docstring), the root's ranking first, and its cost."""

    rows: list[dict[str, Any]]
    selection: HierarchicalSelection
    fit_seconds: float  # the CV fits on H, summed
    stage_seconds: float  # the whole stage (fits, k-means, tests)


def leaf_of(space: Space, config: Mapping[str, Any]) -> tuple[str, str]:
    """(learner, signature): the categorical values of ``config`` other than the learner choice,
    in the space's order, as ``name=value`` joined by ``,`` (``-`` for none)."""
    learner = space.learner_of(config)
    parts = [
        f"{p.name}={config[p.name]}"
        for p in space.parameters
        if isinstance(p, Categorical) and p.name in config and p.name != space.learner_parameter
    ]
    return learner, ",".join(parts) or "-"


def holdout_folds(evaluator: Evaluator, settings: SelectionSettings, seed_key: tuple) -> list[Fold]:
    """``repeats`` × ``folds`` stratified folds of H (the run's outer split), each repetition
    shuffled by its own derived seed."""
    rows = evaluator.splits.test
    labels = evaluator.y[rows]
    folds = []
    for repeat in range(settings.repeats):
        seed = seeding.int_seed(seeding.seed_sequence(*seed_key, "selection-cv", repeat))
        splitter = StratifiedKFold(settings.folds, shuffle=True, random_state=seed % 2**32)
        for train, valid in splitter.split(np.zeros(len(rows)), labels):
            folds.append(Fold(rows[train], rows[valid]))
    return folds


def default_config(space: Space, learner: str) -> dict[str, Any]:
    """``learner`` at scikit-learn's defaults: the configuration that names it and sets nothing
    else (the factories fill in only what the framework always sets: seeds, ``n_jobs``, the fit
    guard's limits; ``tests/test_appendix_a_learners.py``)."""
    return {} if space.learner_parameter is None else {space.learner_parameter: learner}


def score_defaults(
    evaluator: Evaluator, space: Space, folds: Sequence[Fold]
) -> tuple[list[dict[str, Any]], float]:
    """The defaults baseline (§5): one row per learner of ``space``, scored like a candidate
    (:meth:`~hpo.evaluation.evaluator.Evaluator.holdout_scores` on the same ``folds``); and the
    summed
    fit seconds."""
    rows, fit_seconds = [], 0.0
    for learner in space.learners:
        config = default_config(space, learner)
        holdout, seconds = evaluator.holdout_scores(config, folds)
        fit_seconds += seconds * len(folds)
        row = _row(0, learner, "defaults", math.nan, holdout, seconds, config)
        rows.append(row | {"ms_kind": "default"})
    return rows, fit_seconds


def _row(
    iteration: int,
    learner: str,
    signature: str,
    optimization_score: float,
    holdout: Sequence[float],
    seconds: float,
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """One scored model's row (the module docstring), not (yet) ranked."""
    return {
        "iteration": iteration,
        "learner": learner,
        "ms_kind": "optimized",
        "ms_signature": signature,
        "ms_optimization_score": optimization_score,
        "ms_holdout_mean": float(np.mean(holdout)),
        "ms_holdout_std": float(np.std(holdout, ddof=1)),
        "ms_holdout_scores": json.dumps([float(s) for s in holdout]),
        "ms_holdout_fit_seconds": seconds,
        "ms_config": json.dumps(dict(config), sort_keys=True, default=str),
        "ms_rank": None,
        "ms_p_value": math.nan,
        "ms_tied": None,
    }


def run_stage(
    evaluator: Evaluator,
    space: Space,
    configs: Sequence[Mapping[str, Any]],
    learner_configs: Sequence[Mapping[str, Any]],
    points: np.ndarray,
    losses: Sequence[float],
    settings: SelectionSettings,
    seed_key: tuple,
) -> StageResult:
    """The stage on a finished optimisation: ``configs`` as proposed (for the leaves),
    ``learner_configs`` as fitted, ``points`` their unit-cube encodings, ``losses`` their
    validation losses (``1 − S``)."""
    started = time.perf_counter()
    leaves: dict[tuple[str, str], list[int]] = {}
    seen: set[tuple] = set()
    for i, (config, loss) in enumerate(zip(configs, losses, strict=True)):
        key = config_key(learner_configs[i])
        if key in seen or not math.isfinite(loss):
            continue
        seen.add(key)
        leaves.setdefault(leaf_of(space, config), []).append(i)
    if not leaves:
        raise ModelSelectionError("the model-selection stage has no evaluated configuration")
    folds = holdout_folds(evaluator, settings, seed_key)
    seed = seeding.int_seed(seeding.seed_sequence(*seed_key, "selection-kmeans")) % 2**31
    tree: dict[str, dict[str, list[Candidate]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    fit_seconds = 0.0
    for (learner, signature), members in sorted(leaves.items()):
        scores = [1.0 - losses[i] for i in members]
        kept = [members[j] for j in kmeans_filter(points[members], scores, settings.k, seed)]
        for i in kept:
            holdout, seconds = evaluator.holdout_scores(learner_configs[i], folds)
            fit_seconds += seconds * len(folds)
            name = f"it{i + 1}"
            tree.setdefault(learner, {}).setdefault(signature, []).append(
                Candidate(name, tuple(holdout), runtime=seconds)
            )
            rows[name] = _row(
                i + 1, learner, signature, 1.0 - losses[i], holdout, seconds, learner_configs[i]
            )
    selection = select_hierarchically(
        tree, settings.alpha, settings.top_n, settings.importances, settings.k, seed
    )
    for rank, model in enumerate(selection.selection.ranked, start=1):
        rows[model.name] |= {"ms_rank": rank, "ms_p_value": model.p_value, "ms_tied": model.tied}
    ordered = sorted(
        rows.values(), key=lambda r: (r["ms_rank"] is None, r["ms_rank"] or 0, r["iteration"])
    )
    if settings.defaults:
        baseline, seconds = score_defaults(evaluator, space, folds)
        ordered += baseline
        fit_seconds += seconds
    return StageResult(ordered, selection, fit_seconds, time.perf_counter() - started)
