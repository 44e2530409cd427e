"""Run one configured run, write its results file and print a short summary."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from experiments.results import (
    ensure_writable,
    inspect_results_file,
    is_stale,
    read_run,
    set_aside,
    stored_revision,
    write_run,
)
from experiments.runner import RunSpec, run
from hpo.data.catalog import Dataset, dataset_task


def progress_bar(spec: RunSpec) -> tqdm:
    """A progress bar with ETA over the run's evaluations, on stderr when it is a terminal
    (nothing in logs or pipes), showing the best validation error so far."""
    return tqdm(
        total=spec.budget, desc=f"{spec.run_method} {spec.dataset}", unit="eval", disable=None
    )


def run_and_save(
    spec: RunSpec,
    path: Path,
    data_dir: str | None = None,
    data: Dataset | None = None,
    show_progress: bool = False,
) -> Path:
    """Execute ``spec`` and write its results to ``path``, unless that file exists
    (``show_progress``: :func:`progress_bar` while it runs)."""
    if path.exists():
        return path
    started = time.perf_counter()
    if show_progress:
        with progress_bar(spec) as bar:
            best = [float("inf")]
            regression = dataset_task(spec.dataset) == "regression"

            def advance(iteration: int, loss: float) -> None:
                best[0] = min(best[0], loss)
                shown = f"{best[0]:.4g} MSE" if regression else f"{100 * best[0]:.2f}%"
                bar.set_postfix_str(f"best valid {shown}", refresh=False)
                bar.update(1)

            result = run(spec, data=data, data_dir=data_dir, progress=advance)
    else:
        result = run(spec, data=data, data_dir=data_dir)
    try:
        return write_run(result, path, spec, time.perf_counter() - started)
    except FileExistsError:  # another worker finished the same run first: same results
        return path


def reuse_existing(path: Path, spec: RunSpec, rerun_stale: bool = False) -> tuple[bool, list[str]]:
    """Whether ``path`` holds this run's finished results, and what was done about it.

    A file that is not a valid finished run of ``spec`` (truncated, unreadable, another run's)
    is moved aside to ``*.corrupt``; with ``rerun_stale``, one written by another code revision
    is moved aside to ``*.stale``; either way the run is done again. Nothing is deleted.
    """
    if not path.exists():
        return False, []
    problem = inspect_results_file(path, spec)
    if problem:
        moved = set_aside(path, "corrupt")
        return False, [f"{path} is not a valid results file ({problem}); moved to {moved.name}"]
    if is_stale(path):
        revision = stored_revision(path)
        if rerun_stale:
            moved = set_aside(path, "stale")
            return False, [f"{path} came from code revision {revision}; moved to {moved.name}"]
        return True, [
            f"note: these results came from code revision {revision}, not this checkout's "
            "(rerun_stale=true runs it again)"
        ]
    return True, []


def prepare(path: Path, spec: RunSpec, rerun_stale: bool = False) -> tuple[bool, list[str]]:
    """Pre-flight of one run before any computation: the results folder must be writable;
    returns :func:`reuse_existing`'s answer."""
    ensure_writable(path.parent)
    return reuse_existing(path, spec, rerun_stale)


def summarize(path: Path) -> pd.DataFrame:
    """Final validation/test error per method of one results file."""
    table = read_run(path)
    outcomes = table[table["row_type"] == "outcome"]
    if "instance" in table.columns:  # seed 004: its final choice (none before a configuration
        outcomes = outcomes[outcomes["rule"] == "final"]  # completed every instance)
        if outcomes.empty:
            empty = {"learner": pd.NA, "incumbent_valid_loss": np.nan, "test_error": np.nan}
            outcomes = table.iloc[:1].assign(**empty)
    final = outcomes[outcomes["iteration"] == outcomes["iteration"].max()]
    trace = table[table["row_type"] == "trace"]
    # regression: mean squared errors as they are; classification: error rates in %
    regression = dataset_task(str(final["dataset"].iloc[0])) == "regression"
    scale, unit = (1.0, "mse") if regression else (100.0, "error_%")
    return pd.DataFrame(
        {
            "method": final["method"].to_numpy(),
            "dataset": final["dataset"].to_numpy(),
            "learner": final["learner"].fillna("ensemble").to_numpy(),
            "protocol": final["protocol"].to_numpy(),
            "evaluations": len(trace),
            f"valid_{unit}": (scale * final["incumbent_valid_loss"])
            .round(4 if regression else 2)
            .to_numpy(),
            f"test_{unit}": (scale * final["test_error"]).round(4 if regression else 2).to_numpy(),
            "seconds": final["run_seconds"].round(1).to_numpy(),
        }
    )
