"""Run one configured run, write its results file and print a short summary."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from experiments.results import read_run, write_run
from experiments.runner import RunSpec, run
from hpo.datasets import Dataset


def run_and_save(
    spec: RunSpec, path: Path, data_dir: str | None = None, data: Dataset | None = None
) -> Path:
    """Execute ``spec`` and write its results to ``path``, unless that file exists."""
    if path.exists():
        return path
    started = time.perf_counter()
    result = run(spec, data=data, data_dir=data_dir)
    try:
        return write_run(result, path, spec, time.perf_counter() - started)
    except FileExistsError:  # another worker finished the same run first: same results
        return path


def summarize(path: Path) -> pd.DataFrame:
    """Final validation/test error per method of one results file."""
    table = read_run(path)
    outcomes = table[table["row_type"] == "outcome"]
    final = outcomes[outcomes["iteration"] == outcomes["iteration"].max()]
    trace = table[table["row_type"] == "trace"]
    return pd.DataFrame(
        {
            "method": final["method"].to_numpy(),
            "dataset": final["dataset"].to_numpy(),
            "protocol": final["protocol"].to_numpy(),
            "evaluations": len(trace),
            "valid_error_%": (100 * final["incumbent_valid_loss"]).round(2).to_numpy(),
            "test_error_%": (100 * final["test_error"]).round(2).to_numpy(),
            "seconds": final["run_seconds"].round(1).to_numpy(),
        }
    )
