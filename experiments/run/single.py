"""Run one configured run, write its results file and print a short summary, with the notes
that explain it (rows without a validation error, fewer evaluations than the budget)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from experiments.configuration.spaces import plain_space
from experiments.configuration.spec import RunSpec
from experiments.run.interrupt import writing_results
from experiments.run.journal import Journal
from experiments.run.progress import RunProgress, StatusLines, interval_seconds, on_terminal
from experiments.run.results import inspect_results_file, is_stale, write_run
from experiments.run.run_tables import RunResult
from experiments.run.runner import run
from hpo.data.catalog import Dataset, dataset_task
from hpo.optimizers import optimizer_class
from runfiles.files import ensure_writable, read_run, set_aside, spec_from_file, stored_revision


def planned_evaluations(spec: RunSpec) -> int:
    """How many evaluations the run makes unless its time budget ends it first: the budget, or
    the optimizer's own plan (a grid's size, Hyperband's brackets) when that is smaller."""
    budget = spec.budget.evaluations
    cls = optimizer_class(spec.method.optimizer)
    own = cls.planned_evaluations(spec.method.settings, budget, spec.task.search_space.dim)
    return budget if own is None else min(budget, own)


def loss_text(dataset: str) -> Callable[[float], str]:
    """How a validation loss of ``dataset`` is shown: an error in %, or a regression's MSE."""
    if dataset_task(dataset) == "regression":
        return lambda loss: f"MSE {loss:.4g}"
    return lambda loss: f"error {100 * loss:.2f}%"


def _run_with_progress(
    spec: RunSpec, data_dir: str | None, data: Dataset | None, journal: Journal | None
) -> RunResult:
    """``run`` with a bar on a terminal (stderr), else a progress line at a steady interval."""
    watch = RunProgress(
        f"{spec.method.name} {spec.task.dataset}",
        planned_evaluations(spec),
        loss_text(spec.task.dataset),
        replayed=0 if journal is None else len(journal.entries),
    )
    if not on_terminal():
        with StatusLines(watch.line, interval_seconds()):
            return run(spec, data=data, data_dir=data_dir, progress=watch, journal=journal)
    with tqdm(total=watch.total, desc=watch.label, unit="eval") as bar:

        def advance(iteration: int, loss: float) -> None:
            watch(iteration, loss)
            bar.set_postfix_str(watch.best_text(), refresh=False)
            bar.update(1)

        return run(spec, data=data, data_dir=data_dir, progress=advance, journal=journal)


def run_and_save(
    spec: RunSpec,
    path: Path,
    data_dir: str | None = None,
    data: Dataset | None = None,
    show_progress: bool = False,
    journal: Journal | None = None,
) -> Path:
    """Execute ``spec`` and write its results to ``path``, unless that file exists
    (``show_progress``: a progress bar on a terminal, else a progress line on stderr every
    ``$HPO_PROGRESS_SECONDS`` seconds, :mod:`experiments.run.progress`). With a ``journal`` the run
    resumes from the evaluations it holds and records the others; it is removed once the
    results are written (:mod:`experiments.run.journal`)."""
    if path.exists():
        return path
    started = time.perf_counter()
    if show_progress:
        result = _run_with_progress(spec, data_dir, data, journal)
    else:
        result = run(spec, data=data, data_dir=data_dir, journal=journal)
    try:
        with writing_results():
            written = write_run(result, path, spec, time.perf_counter() - started)
    except FileExistsError:  # another worker finished the same run first: same results
        written = path
    if journal is not None:
        journal.remove()
    return written


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


def _methods(rows: pd.DataFrame) -> str:
    return ", ".join(dict.fromkeys(rows["method"].astype(str)))


def footnotes(path: Path) -> list[str]:
    """The lines under a run's summary: why a row's validation error is n/a (only the reasons
    its rows have, :func:`missing_valid_notes`), and why the run made fewer evaluations than its
    budget."""
    table = read_run(path)
    outcomes = table[table["row_type"] == "outcome"]
    final = outcomes[outcomes["iteration"] == outcomes["iteration"].max()]
    evaluations = int((table["row_type"] == "trace").sum())
    return missing_valid_notes(final) + _evaluations_note(spec_from_file(path), evaluations)


def missing_valid_notes(final: pd.DataFrame) -> list[str]:
    """Why rows of ``final`` (outcome rows: method, incumbent_valid_loss, members, n_members)
    have no validation error: a posterior-mean choice (member ``pm``, never evaluated), or an
    ensemble of several models. Rows with a validation error need no note, and neither do the
    rows of a run that races over instances (Auto-WEKA's), whose choices are single
    configurations and which have no ``members``."""
    if "members" not in final.columns:
        return []
    missing = final[final["incumbent_valid_loss"].isna()]
    names = missing["members"].astype(str).str.split(",")  # "3,3,7", "pm" or "pm:0.5,3:0.5"
    posterior_mean = names.map(lambda members: any(m.split(":")[0] == "pm" for m in members))
    ensemble = ~posterior_mean & (missing["n_members"] > 1)
    notes = []
    if posterior_mean.any():
        notes.append(
            f"n/a for {_methods(missing[posterior_mean])}: the argmin of the posterior mean "
            "need not be an evaluated point, so it has no validation error"
        )
    if ensemble.any():
        notes.append(
            f"n/a for {_methods(missing[ensemble])}: an ensemble of several models has no "
            "validation error recorded (its members' are in the trace)"
        )
    return notes


def _evaluations_note(spec: dict[str, Any], evaluations: int) -> list[str]:
    budget = int(spec["budget"])
    if evaluations >= budget:
        return []
    settings, family = spec["optimizer_settings"], str(spec["optimizer"])
    cls = optimizer_class(family)
    dim = plain_space(spec["space"]).dim
    if evaluations == cls.planned_evaluations(settings, budget, dim):
        note = cls.plan_note(settings, budget, dim)
        if note is not None:
            return [f"{family}: {evaluations} evaluations ({note})"]
    why = (
        f"its time budget of {spec['time_budget']:g} s ran out"
        if spec.get("time_budget") is not None
        else "the optimizer proposed no more"
    )
    return [f"{spec['optimizer']}: {evaluations} evaluations of budget {budget} ({why})"]
