"""Sizing a cluster submission (``python -m experiments.sweep cost``): the estimate's arithmetic
on a stub cost table, the MaxArraySize warning, and bad input."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.cluster.costs import (
    BASE_MEMORY_GB,
    SELECTION_STAGE_ALLOWANCE,
    Estimate,
    estimate,
    memory_gb,
    run_seconds,
)
from experiments.cluster.report import array_warning
from experiments.configuration.config import UsageError

REPO = Path(__file__).resolve().parents[1]
KEYS = ["family", "protocol", "bin"]
STUB_COSTS = pd.Series(
    [36.0, 3.6, 360.0],
    index=pd.MultiIndex.from_tuples(
        [("gp", "holdout", 0), ("rs", "holdout", 0), ("gp", "cv5", 3)], names=KEYS
    ),
)


def _runs(*rows: tuple[str, str, int, int]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=[*KEYS, "budget"])
    table = table.assign(
        cost_family=table["family"], evaluations=table["budget"], epochs=0.0, budget_seconds=0.0,
        selection_stage=True,  # only read for timed runs: seed 003's runs with a selection stage
    )  # fmt: skip
    return table.assign(train_rows=100, distance_cache_mb=1024, cache_size_mb=500)


def test_run_cost_is_its_cell_scaled_to_its_budget() -> None:
    runs = _runs(("gp", "holdout", 0, 100), ("rs", "holdout", 0, 50), ("gp", "cv5", 3, 10))
    assert run_seconds(runs, STUB_COSTS).tolist() == pytest.approx([36.0, 1.8, 36.0])


def test_estimate_sums_runs_and_shards_them_as_run_py_does() -> None:
    runs = _runs(*[("gp", "holdout", 0, 100)] * 3, ("rs", "holdout", 0, 50))
    result = estimate(runs, STUB_COSTS, n_shards=2)
    assert result.core_hours == pytest.approx((3 * 36 + 1.8) / 3600)
    assert result.longest_shard_hours == pytest.approx(72 / 3600)  # shard 0: runs 0 and 2
    assert result.longest_run_hours == pytest.approx(36 / 3600)
    assert result.memory_gb == pytest.approx(memory_gb(100, 1024, 500))


def test_memory_bound_caps_the_kept_distances() -> None:
    matrix_mb = 6000**2 * 8 / 2**20  # one 6000-row matrix: 275 MB; five of them exceed 1024
    expected = BASE_MEMORY_GB + (1024 + matrix_mb + 500) / 1024
    assert memory_gb(6000, 1024, 500) == pytest.approx(expected)
    assert memory_gb(6000, 0, 500) == pytest.approx(expected - 1)


def test_suggestions_round_up_with_a_margin() -> None:
    result = Estimate(n_runs=10, n_shards=2, core_hours=1.0, longest_shard_hours=0.5,
                      longest_run_hours=0.1, memory_gb=2.1)  # fmt: skip
    assert result.suggested_timeout_min == 90  # 3 x 30 min
    assert result.suggested_mem_gb == math.ceil(2.1 * 1.25)


def test_a_cell_missing_from_the_table_is_named() -> None:
    with pytest.raises(UsageError, match=r"\('cma', 'holdout', 0\)"):
        run_seconds(_runs(("cma", "holdout", 0, 100)), STUB_COSTS)


def test_array_warning_only_above_max_array_size_and_says_how_to_pack() -> None:
    assert array_warning(56640, 1001, 1001) is None
    warning = array_warning(56640, 2000, 1001)
    assert warning.startswith("warning: 2000 shards make a job array of 2000 > MaxArraySize 1001")
    assert "--n-shards 1001 or less (about 57 runs per shard)" in warning


def _cost(*arguments: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "experiments.sweep", "cost", "cluster_ci", *arguments]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_cost_command_warns_about_the_array_and_exits_0() -> None:
    result = _cost("--n-shards", "3", "--max-array-size", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "cluster_ci/default: 4 runs in 3 shards (up to 2 runs each)"
    assert lines[2].startswith("estimated cost: 0.0")  # 4 tiny runs
    assert result.stderr.startswith("warning: 3 shards make a job array of 3 > MaxArraySize 2")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--max-array-size", "0"], "error: --max-array-size must be >= 1, got 0\n"),
        (["--n-shards", "0"], "error: shard must be in [0, 0), got 0\n"),
    ],
)
def test_cost_bad_input_is_one_line_exit_2(arguments: list[str], message: str) -> None:
    result = _cost(*arguments)
    assert (result.returncode, result.stderr) == (2, message)


def test_a_timed_run_costs_its_budget_and_the_selection_stage_allowance() -> None:
    """Seed 003's paper runs stop on time, not on evaluations: the table's cell is not used."""
    runs = _runs(("gp", "holdout", 0, 100), ("hrs", "seed003", 0, 100000))
    runs.loc[1, ["cost_family", "evaluations", "budget_seconds"]] = ["time budget", 0.0, 3600.0]
    expected = 3600.0 * (1 + SELECTION_STAGE_ALLOWANCE)
    assert run_seconds(runs, STUB_COSTS).tolist() == pytest.approx([36.0, expected])
    runs["selection_stage"] = [False, False]  # seed 003's priors part: no stage, no allowance
    assert run_seconds(runs, STUB_COSTS).tolist() == pytest.approx([36.0, 3600.0])


def test_hierarchical_paper_profile_is_costed_by_its_time_budget() -> None:
    """``sweep cost hierarchical --profile paper``: every run 8 h + the stated allowance (a
    tree space's learner is not a network's name; it used to crash)."""
    finished = subprocess.run(
        [sys.executable, "-m", "experiments.sweep", "cost", "hierarchical", "--profile", "paper"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr
    first = finished.stdout.splitlines()[0]
    n_runs = int(first.split(": ")[1].split()[0])
    # the priors part (Algorithm 4's evaluations): one run per standard set, 1 h, no stage
    n_priors = int(re.search(r"(\d+) runs with a time budget \(1 h of optimisation each\) "
                             "have no model-selection stage", finished.stdout)[1])  # fmt: skip
    assert n_priors >= 1
    hours = 8 * (1 + SELECTION_STAGE_ALLOWANCE) * (n_runs - n_priors) + 1 * n_priors
    assert f"estimated cost: {hours:.2f} core-hours" in finished.stdout
    assert f"{n_runs - n_priors} runs with a time budget (8 h of optimisation each)" in (
        finished.stdout
    )
