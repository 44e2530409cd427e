"""A run's tables, the rows its results file keeps: one trace row per evaluation, one outcome row
per (method, iteration) a rule chose, and the predictions sidecar's blocks (layout: README,
"Results schema" and "Predictions sidecar"), with their column types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from experiments.configuration.spec import RunSpec
from hpo.evaluation.choices import ChoiceScorer
from hpo.evaluation.evaluator import Evaluator, Validation
from hpo.optimizers import (
    Optimizer,
)
from hpo.records import Choice, Trace
from hpo.rules.final_selection import SelectionRule, population_ends
from hpo.space.search_space import Categorical, Integer, Space
from runfiles.schema import PREDICTION_COLUMNS, PREDICTION_KINDS, PROBABILITY_PREFIX


@dataclass(frozen=True)
class RunResult:
    """A finished run's tables: one row per evaluation, one per (method, iteration) outcome, and
    (when the run keeps them) the predictions, one row per (model, split, fold, example); and the
    rows of its post-run stages, by row type (:mod:`hpo.stages`)."""

    trace: pd.DataFrame
    outcomes: pd.DataFrame
    predictions: pd.DataFrame | None = None
    data_provenance: Mapping[str, Any] = field(default_factory=dict)
    stage_rows: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class Evaluation:
    iteration: int
    batch: int
    u: np.ndarray
    config: dict[str, Any]  # as proposed, virtual parameters included (the trace's columns)
    learner_config: dict[str, Any]  # what the learner sees: virtual parameters removed (§3.1.2)
    scored: Validation
    optimizer_seconds: float
    elapsed_seconds: float  # since the loop started, when this evaluation ended
    bracket: int | None = None  # Hyperband's bracket (seed 002)


def outcome_table(
    spec: RunSpec,
    rules: Mapping[str, SelectionRule],
    trace: Trace,
    scorer: ChoiceScorer,
    optimizer: Optimizer,
    space: Space,
) -> pd.DataFrame:
    n = len(trace.valid_loss)
    reported = population_ends(trace.batch) if optimizer.reports_at_batch_ends else np.ones(n, bool)
    if not spec.outputs.curves:
        reported &= np.arange(n) == n - 1
    records = []
    for method, rule in rules.items():
        for t, choice in enumerate(rule.choices(trace)):
            if choice is None or not reported[t]:
                continue
            test_error, limit_hit, test_seconds = scorer.score(choice, t + 1)
            single = choice.members[0] if choice.is_single else None
            index = None if single is None or single.iteration is None else single.iteration - 1
            records.append(
                {
                    "method": method,
                    "rule": rule.name,
                    "iteration": t + 1,
                    "incumbent_iteration": None if index is None else index + 1,
                    "incumbent_valid_loss": np.nan if index is None else trace.valid_loss[index],
                    "incumbent_selection_loss": (
                        np.nan if index is None else trace.selection_loss[index]
                    ),
                    "learner": None if single is None else space.learner_of(single.config),
                    "n_members": len(choice.members),
                    "members": _members_text(choice),
                    "test_error": test_error,
                    "test_fit_limit_hit": limit_hit,
                    "test_fit_seconds": test_seconds,
                    "config": {} if single is None else single.config,
                }
            )
    columns = {
        "method": "string",
        "rule": "string",
        "iteration": "int64",
        "incumbent_iteration": "Int64",
        "incumbent_valid_loss": "float64",
        "incumbent_selection_loss": "float64",
        "learner": "string",
        "n_members": "int64",
        "members": "string",
        "test_error": "float64",
        "test_fit_limit_hit": "bool",
        "test_fit_seconds": "float64",
    }
    frame = pd.DataFrame(
        {name: pd.Series([r[name] for r in records], dtype=kind) for name, kind in columns.items()}
    )
    for name, column in _param_columns(space, [r["config"] for r in records]).items():
        frame[name] = column
    return frame


def _members_text(choice: Choice) -> str:
    """The members as their trace iterations, repeated by weight when weights are integers
    (``"3,3,7"``), else ``"3:0.5,7:0.5"``; ``pm`` for a never-evaluated configuration."""
    names = ["pm" if m.iteration is None else str(m.iteration) for m in choice.members]
    pairs = list(zip(names, choice.weights, strict=True))
    if all(float(w).is_integer() for w in choice.weights):
        return ",".join(name for name, w in pairs for _ in range(int(w)))
    return ",".join(f"{name}:{w:g}" for name, w in pairs)


def _param_columns(space: Space, configs: list[Mapping[str, Any]]) -> dict[str, pd.Series]:
    columns = {}
    for p in space.parameters:
        values = [c.get(p.name) for c in configs]
        if isinstance(p, Categorical):
            columns[f"param_{p.name}"] = pd.Series(values, dtype="string")
        elif isinstance(p, Integer):
            columns[f"param_{p.name}"] = pd.Series(values, dtype="Int64")
        else:
            columns[f"param_{p.name}"] = pd.Series(
                [np.nan if v is None else v for v in values], dtype="float64"
            )
    return columns


def trace_table(evaluations: list[Evaluation], space: Space) -> pd.DataFrame:
    scored = [e.scored for e in evaluations]
    frame = pd.DataFrame(
        {
            "iteration": pd.Series([e.iteration for e in evaluations], dtype="int64"),
            "batch": pd.Series([e.batch for e in evaluations], dtype="int64"),
            "valid_loss": pd.Series([s.valid_loss for s in scored], dtype="float64"),
            "selection_loss": pd.Series([s.selection_loss for s in scored], dtype="float64"),
            "n_fits": pd.Series([s.n_fits for s in scored], dtype="int64"),
            "fit_limit_hits": pd.Series([s.fit_limit_hits for s in scored], dtype="int64"),
            "constant_fits": pd.Series([s.constant_fits for s in scored], dtype="int64"),
            "learner": pd.Series([space.learner_of(e.config) for e in evaluations], dtype="string"),
            "failure": pd.Series([s.failure for s in scored], dtype="string"),
            "fit_seconds": pd.Series([s.fit_seconds for s in scored], dtype="float64"),
            "optimizer_seconds": pd.Series(
                [e.optimizer_seconds for e in evaluations], dtype="float64"
            ),
            "elapsed_seconds": pd.Series([e.elapsed_seconds for e in evaluations], dtype="float64"),
        }
    )
    _add_resource_columns(frame, evaluations)
    for i, name in enumerate(space.names):
        frame[f"u_{name}"] = pd.Series([float(e.u[i]) for e in evaluations], dtype="float64")
    for name, column in _param_columns(space, [e.config for e in evaluations]).items():
        frame[name] = column
    return frame


def _add_resource_columns(frame: pd.DataFrame, evaluations: list[Evaluation]) -> None:
    """Partial evaluations (seed 002): the resource asked (NaN for a full evaluation), spent
    (epochs trained after early stopping, or training shares; all folds) and spent so far in
    the run, and Hyperband's bracket. Only runs that have them get these columns, so every
    other run's trace is as before."""
    scored = [e.scored for e in evaluations]
    if any(s.resource is not None or s.resource_spent is not None for s in scored):
        asked = [np.nan if s.resource is None else s.resource for s in scored]
        spent = [np.nan if s.resource_spent is None else s.resource_spent for s in scored]
        frame["resource"] = pd.Series(asked, dtype="float64")
        frame["resource_spent"] = pd.Series(spent, dtype="float64")
        frame["resource_cumulative"] = pd.Series(np.nancumsum(spent), dtype="float64")
    if any(e.bracket is not None for e in evaluations):
        frame["bracket"] = pd.Series([e.bracket for e in evaluations], dtype="Int64")


def prediction_block(
    model: int,
    kind: str,
    fold: int,
    rows: np.ndarray,
    labels: np.ndarray,
    probabilities: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One model's predicted ``labels`` for ``rows`` of one split (``kind``) and fold, as the
    sidecar's compact columns (layout: README, "Predictions sidecar"). Predicted values of a
    regression model (floats) are kept as float64; labels as int16. ``probabilities``
    (``(len(rows), n_classes)``, seed 003) add one float64 column ``proba_<class>`` per class."""
    regression = np.issubdtype(np.asarray(labels).dtype, np.floating)
    block = {
        "model": np.full(len(rows), model, dtype=np.int32),
        "split": np.full(len(rows), PREDICTION_KINDS[kind], dtype=np.int8),
        "fold": np.full(len(rows), fold, dtype=np.int8),
        "row": rows.astype(np.int32),
        "prediction": labels.astype(np.float64 if regression else np.int16),
    }
    if probabilities is not None:
        for c in range(probabilities.shape[1]):
            block[f"{PROBABILITY_PREFIX}{c}"] = probabilities[:, c].astype(np.float64)
    return block


def predictions_frame(
    evaluations: list[Evaluation], evaluator: Evaluator, scorer: ChoiceScorer
) -> pd.DataFrame:
    """Every model's predicted labels (layout: README, "Predictions sidecar")."""
    blocks = []
    selection = evaluator.splits.selection
    for e in evaluations:
        for fold, kept in enumerate(e.scored.predictions):
            model = e.iteration
            blocks.append(
                prediction_block(
                    model, "valid", fold, kept.valid_rows, kept.valid, kept.valid_probabilities
                )
            )
            if len(selection):
                blocks.append(
                    prediction_block(
                        model,
                        "selection",
                        fold,
                        selection,
                        kept.selection,
                        kept.selection_probabilities,
                    )
                )
    test_rows = evaluator.splits.test
    for model_id, result in sorted(scorer.tested.values(), key=lambda item: item[0]):
        blocks.append(
            prediction_block(
                model_id, "test", 0, test_rows, result.predictions, result.probabilities
            )
        )
    return predictions_table(blocks)


def predictions_table(blocks: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """The sidecar table of :func:`prediction_block` blocks, in their order (with the
    probability columns when the blocks carry them)."""
    columns = list(blocks[0]) if blocks else list(PREDICTION_COLUMNS)
    return pd.DataFrame(
        {c: np.concatenate([b[c] for b in blocks]) if blocks else np.empty(0) for c in columns}
    )
