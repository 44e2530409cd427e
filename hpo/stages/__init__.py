"""Post-run stages: work a run's configuration adds after its optimization loop.

A stage reads the finished loop (:class:`FinishedLoop`: every evaluated configuration and its
validation loss, and the evaluator that scored them) and returns rows of its own
(:class:`StageRows`), which the results file keeps under the stage's ``row_type``, and numbers
for the run's provenance. A run names its stages as ``{<name>: settings}`` (``RunSpec.stages``);
each name is an entry of :data:`POST_RUN_STAGES`, so a new stage is one function and one entry
here, and neither the run description nor the runner changes. The library defines them, as it
defines the selection rules and the objectives: the run description checks a stage's settings
and the runner runs it.

One stage is defined: ``model_selection``, seed 003's statistical model selection (Bermúdez-Chacón
2014 §3.3–3.5, :mod:`hpo.significance.stage`), whose rows are the models that reached the root,
by rank (``row_type == "selection"``; README, "Results").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hpo.evaluation.evaluator import Evaluator
from hpo.registry import Registry
from hpo.significance.stage import SelectionSettings, run_stage
from hpo.space.search_space import Space


@dataclass(frozen=True)
class FinishedLoop:
    """What a stage may read of a finished optimization loop, in evaluation order."""

    evaluator: Evaluator
    space: Space
    configs: list[dict[str, Any]]  # as proposed (virtual parameters included)
    learner_configs: list[dict[str, Any]]  # what the learners saw
    u: np.ndarray  # (n, d) unit-cube points
    valid_losses: list[float]
    seed_key: tuple[int, str, int]  # (seed, dataset, repetition): the stage's random streams


@dataclass(frozen=True)
class StageRows:
    """A stage's rows (kept as ``row_type`` rows of the results file) and provenance numbers."""

    row_type: str
    rows: pd.DataFrame
    provenance: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PostRunStage:
    """A stage: its settings' checker (raises ``ValueError``/``TypeError`` on bad settings)
    and the function that runs it."""

    check: Callable[..., object]
    run: Callable[[FinishedLoop, Mapping[str, Any]], StageRows]


SELECTION_COLUMNS = {
    "iteration": "int64",
    "learner": "string",
    "ms_kind": "string",  # "optimized" (a candidate) or "default" (the §5 baseline, iteration 0)
    "ms_signature": "string",
    "ms_optimization_score": "float64",
    "ms_holdout_mean": "float64",
    "ms_holdout_std": "float64",
    "ms_holdout_scores": "string",
    "ms_holdout_fit_seconds": "float64",
    "ms_config": "string",
    "ms_rank": "Int64",
    "ms_p_value": "float64",
    "ms_tied": "boolean",
}


def selection_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The model-selection stage's rows (:func:`hpo.significance.stage.run_stage`) as a typed
    table: the models that reached the root first, by rank (README, "Results")."""
    return pd.DataFrame(
        {c: pd.Series([r[c] for r in rows], dtype=kind) for c, kind in SELECTION_COLUMNS.items()}
    )


def model_selection(loop: FinishedLoop, settings: Mapping[str, Any]) -> StageRows:
    """Seed 003's statistical model selection on the loop's configurations."""
    stage = run_stage(
        loop.evaluator,
        loop.space,
        loop.configs,
        loop.learner_configs,
        loop.u,
        loop.valid_losses,
        SelectionSettings(**settings),
        loop.seed_key,
    )
    numbers = {
        "selection_fit_seconds": stage.fit_seconds,
        "selection_stage_seconds": stage.stage_seconds,
    }
    return StageRows("selection", selection_frame(stage.rows), numbers)


POST_RUN_STAGES: Registry[PostRunStage] = Registry(
    "post-run stage", {"model_selection": PostRunStage(SelectionSettings, model_selection)}
)


def check_stages(stages: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse, in one line, an unknown stage name or a stage's bad settings."""
    for name, settings in stages.items():
        POST_RUN_STAGES.get(name).check(**settings)


def run_stages(loop: FinishedLoop, stages: Mapping[str, Mapping[str, Any]]) -> list[StageRows]:
    """Every stage of ``stages``, in their order."""
    return [POST_RUN_STAGES[name].run(loop, settings) for name, settings in stages.items()]
