"""The results layout: where run files, prediction sidecars, consolidated tables and reports live.

The one module that knows it. ``experiments`` writes through it and ``analysis`` reads through
it::

    results/                                  RESULTS_ROOT ($HPO_RESULTS_ROOT)
      runs/<dataset>/<run file>               single runs (python run.py ...)
      <experiment>/<profile>/                 a sweep
        dataset_notes.json                    datasets named but not run as named, and why
        runs/<part>/<dataset>/<run file>      one file per finished run
        consolidated/{outcomes,traces}.parquet
        report/                               report.md, tables/, figures/

A run file is ``<method>__<protocol>__seed<s>__rep<r>__<config hash>.parquet``; beside it
``<same stem>.predictions.parquet`` (the run's predictions, when it kept them),
``<run file>.failed.json`` (the error of its last failed attempt) and ``<run file>.running``
(a worker's claim while it runs).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

RESULTS_ROOT = Path(os.environ.get("HPO_RESULTS_ROOT", "results"))
RUN_SUFFIX = ".parquet"
PREDICTIONS_SUFFIX = ".predictions.parquet"
FAILED_SUFFIX = ".failed.json"
RUNNING_SUFFIX = ".running"
CONSOLIDATED = "consolidated"
RUNS = "runs"
REPORT = "report"
DATASET_NOTES = "dataset_notes.json"
CANDIDATES = "candidates.json"  # a benchmark's candidate optimizers (experiments.sweep)


def run_filename(
    dataset: str, method: str, protocol: str, seed: int, repetition: int, config_hash: str
) -> str:
    """``<dataset>/<method>__<protocol>__seed<s>__rep<r>__<hash>.parquet``. ``dataset`` is the
    name the run's identity holds (a user's file by its content, ``file:sha256=<hex>:<target>``),
    its folder :func:`dataset_folder`."""
    folder = dataset_folder(dataset)
    method = method.replace("/", "_")  # a label derived from a setting whose value is a path
    return f"{folder}/{method}__{protocol}__seed{seed}__rep{repetition}__{config_hash}{RUN_SUFFIX}"


def dataset_folder(dataset: str) -> str:
    """A dataset's results folder: its name with every character but letters, digits and
    ``.``, ``_``, ``+``, ``-`` made ``-`` (no ``:`` or ``/``: ``openml:31`` is ``openml-31``, a
    file ``file-sha256-<hex>-<target>``), the same on every file system."""
    return re.sub(r"[^A-Za-z0-9._+-]", "-", dataset)


def sweep_dir(experiment: str, profile: str, root: Path = RESULTS_ROOT) -> Path:
    """The folder of one experiment profile's sweep."""
    return Path(root) / experiment / profile


def predictions_path(run_path: Path) -> Path:
    """The predictions sidecar of the run file ``run_path``."""
    return run_path.with_name(run_path.name[: -len(RUN_SUFFIX)] + PREDICTIONS_SUFFIX)


def failure_path(run_path: Path) -> Path:
    return run_path.with_name(run_path.name + FAILED_SUFFIX)


def marker_path(run_path: Path) -> Path:
    return run_path.with_name(run_path.name + RUNNING_SUFFIX)


def is_run_file(path: Path) -> bool:
    """A results file below a runs folder (not a predictions sidecar, not a hidden temporary)."""
    name = path.name
    return name.endswith(RUN_SUFFIX) and not name.endswith(PREDICTIONS_SUFFIX) and name[0] != "."


def run_files(folder: Path) -> list[Path]:
    """Every run file at any depth below ``folder``, sorted."""
    return sorted(p for p in Path(folder).rglob(f"*{RUN_SUFFIX}") if is_run_file(p))
