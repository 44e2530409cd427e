"""What the ESMBO report reads: per part (one space), the test risk of every method's output at
every iteration, and the per-example test losses the PB test needs.

Methods of the experiment and their names in the paper: ``esmbo`` → ESMBO, ``smbo`` → SMBO,
``ers`` → ERS and ``ers-argmin`` → RS (the same random-search run as ERS). A (dataset,
repetition) is one "dataset" of the statistics (the paper has one run per dataset).

Per-example losses are rebuilt from each run's predictions sidecar (``predictions: true``): the
test predictions of every retrained member, combined as the run scored the choice (one member:
its predictions; several: the weighted majority vote with ties to the lowest label, or for
regression the weighted mean), against the dataset's targets (loaded through
:mod:`hpo.data.catalog`). The mean of these losses is the run's ``test_error`` (checked).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from hpo.data.catalog import load_dataset
from hpo.ensembles import majority_vote
from hpo.tasks import REGRESSION, example_losses, task_of_targets
from runfiles import layout

PAPER_NAMES = {"esmbo": "ESMBO", "ers": "ERS", "smbo": "SMBO", "ers-argmin": "RS"}
PAPER_ORDER = ("ESMBO", "ERS", "SMBO", "RS")
# Chapter 4's methods on the same pools (conf/experiment/ensembles.yaml): the same statistics
# compare EO, Caruana's post-hoc ensembles and the single best with ESMBO (ESMBO's own argmin
# stays out: the paper compares four methods, and their expected ranks depend on the set).
COMPARED_NAMES = {
    "BO-best": "BO-best",
    "BO-post": "BO-post (Caruana)",
    "EO": "EO",
    "EO-post": "EO-post",
}
METHOD_NAMES = {**PAPER_NAMES, **COMPARED_NAMES}
# part -> (label, task, table of the paper); the parts of conf/experiment/esmbo.yaml
SPACES = {
    "svr": ("Support Vector Regressor", "regression", "Table 2"),
    "gbr": ("Gradient Boosting Regressor", "regression", "Table 2"),
    "rf_regression": ("Random Forest (regression)", "regression", "Table 2"),
    "svm": ("Support Vector Machine", "classification", "Table 3"),
    "gbc": ("Gradient Boosting Classifier", "classification", "Table 3"),
    "rf": ("Random Forest (classification)", "classification", "Table 3"),
    "mlp": ("Multilayer Perceptron", "classification", "Table 3"),
}


def _unit(frame: pd.DataFrame) -> pd.Series:
    """The statistics' dataset unit: the dataset, with ``#repetition`` when there are several."""
    several = frame.groupby("dataset")["repetition"].transform("nunique") > 1
    return frame["dataset"].where(
        ~several, frame["dataset"] + "#" + frame["repetition"].astype(str)
    )


def risks(outcomes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per part: ``dataset, method, iteration, loss`` (test risk, paper names; Chapter 4's
    methods and ESMBO's argmin too when the results have them)."""
    rows = outcomes[outcomes["method"].isin(list(METHOD_NAMES))].copy()
    result = {}
    for part, frame in rows.groupby("part"):
        result[str(part)] = pd.DataFrame(
            {
                "dataset": _unit(frame).to_numpy(),
                "method": frame["method"].map(METHOD_NAMES).to_numpy(),
                "iteration": frame["iteration"].to_numpy(),
                "loss": frame["test_error"].to_numpy(dtype=float),
            }
        )
    return result


def member_weights(members: str) -> dict[int, float]:
    """``"3,3,7"`` → {3: 2, 7: 1}; ``"3:0.5,7:1.5"`` → {3: 0.5, 7: 1.5} (the outcomes' text)."""
    weights: dict[int, float] = {}
    for part in members.split(","):
        model, _, weight = part.partition(":")
        weights[int(model)] = weights.get(int(model), 0.0) + (float(weight) if weight else 1.0)
    return weights


def choice_losses(test: Mapping[int, np.ndarray], members: str, labels: np.ndarray) -> np.ndarray:
    """Per-example test losses of one choice from each model's test predictions (by row)."""
    weights = member_weights(members)
    stacked = np.stack([test[m] for m in weights])
    if len(weights) == 1:
        predictions = stacked[0]
    elif task_of_targets(labels) == REGRESSION:
        predictions = np.average(stacked, axis=0, weights=list(weights.values()))
    else:
        predictions = majority_vote(stacked, np.array(list(weights.values())), "lowest")
    return example_losses(predictions, labels)


def first_iterations(trace: pd.DataFrame) -> dict[int, int]:
    """Iteration → the first iteration that evaluated the same configuration (its ``param_*``
    columns), the id under which the sidecar holds its retrained model's test predictions."""
    params = sorted(c for c in trace.columns if c.startswith("param_"))
    seen: dict[str, int] = {}
    result = {}
    for iteration, values in zip(
        trace.iteration, trace[params].astype(str).to_numpy(), strict=True
    ):
        result[int(iteration)] = seen.setdefault("\x1f".join(values), int(iteration))
    return result


def run_example_losses(path: Path, data_dir: str | None = None) -> pd.DataFrame:
    """``dataset, repetition, method, iteration, example, loss`` of one run file's outputs."""
    table = pd.read_parquet(path)
    outcome = table[(table.row_type == "outcome") & table.method.isin(list(METHOD_NAMES))]
    if outcome.empty:
        return pd.DataFrame()
    predictions = pd.read_parquet(layout.predictions_path(path))  # the sidecar
    test = predictions[predictions.split == 2]
    data = load_dataset(str(outcome.dataset.iloc[0]), data_dir)
    y = data.y if data.y_test is None else np.concatenate([data.y, data.y_test])
    by_row = test.pivot(index="row", columns="model", values="prediction").sort_index()
    labels = y[by_row.index.to_numpy()]
    tested = {m: by_row[m].to_numpy() for m in by_row.columns}
    # a configuration evaluated twice is retrained once, under its first iteration's id
    first = first_iterations(table[table.row_type == "trace"])
    columns = {i: tested[first[i]] for i in first if first[i] in tested}
    frames = []
    for row in outcome.itertuples(index=False):
        losses = choice_losses(columns, str(row.members), labels)
        frames.append(
            pd.DataFrame(
                {
                    "dataset": row.dataset,
                    "repetition": row.repetition,
                    "method": METHOD_NAMES[row.method],
                    "iteration": row.iteration,
                    "example": np.arange(len(losses)),
                    "loss": losses,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def example_losses_by_part(source: Path, data_dir: str | None = None) -> dict[str, pd.DataFrame]:
    """Per part, the per-example test losses of every run under ``source/runs`` that has a
    predictions sidecar; {} when ``source`` holds no run files (a consolidated folder)."""
    runs_dir = source / layout.RUNS
    if not runs_dir.is_dir():
        return {}
    frames: dict[str, list[pd.DataFrame]] = {}
    for path in layout.run_files(runs_dir):
        if not layout.predictions_path(path).is_file():
            continue
        folders = path.relative_to(runs_dir).parts[:-1]
        part = folders[0] if len(folders) >= 2 else "main"
        frame = run_example_losses(path, data_dir)
        if not frame.empty:
            frames.setdefault(part, []).append(frame)
    result = {}
    for part, parts in frames.items():
        frame = pd.concat(parts, ignore_index=True)
        frame["dataset"] = _unit(frame)
        result[part] = frame.drop(columns="repetition")
    return result
