"""Bit-identity on one machine: the same run in two fresh processes writes the same numbers.

Every random stream is derived from (seed, dataset, repetition, purpose) (:mod:`hpo.seeding`),
so two fresh interpreters given the same command must write results whose every value is the
same to the last bit: floats are compared by their bit patterns, not to a tolerance. Only the
timing columns (:data:`runfiles.schema.TIMING_COLUMNS`) may differ. Across machines the
last bits may differ; that is ``tests/test_chapter3_regression.py``'s concern.

The second test plants one unseeded draw (a sitecustomize that nudges random search's proposals
with ``np.random.default_rng()``, seeded from the OS) and checks that the comparison catches it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from runfiles.files import bit_differences, without_timing

REPO = Path(__file__).resolve().parents[1]
PLANTED_UNSEEDED_DRAW = """
import numpy as np
from hpo.optimizers.random_search import RandomSearch

_ask = RandomSearch.ask


def ask(self):
    proposal = _ask(self)
    proposal.u[0] = min(1.0, proposal.u[0] + 1e-3 * np.random.default_rng().random())
    return proposal


RandomSearch.ask = ask
"""


def _run_in_fresh_process(args: list[str], out: Path, env: dict[str, str]) -> pd.DataFrame:
    result = subprocess.run(
        [sys.executable, "run.py", *args, f"results_dir={out}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (path,) = out.rglob("*.parquet")
    return without_timing(pd.read_parquet(path))


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["optimizer=gp_r", "dataset=sklearn-wine", "budget=8", "seed=5"],
            marks=pytest.mark.slow,  # the slowest of the three; `make test-slow` and CI run it
        ),
        ["optimizer=cma_pv_r", "dataset=sklearn-iris", "budget=8", "seed=5", "protocol=cv5"],
        ["optimizer=rs", "dataset=sklearn-wine", "budget=8", "seed=5"],
    ],
    ids=["gp_r", "cma_pv_r", "rs"],
)
def test_the_same_run_in_two_fresh_processes_is_bit_identical(
    args: list[str], tmp_path: Path, isolated_env: dict
) -> None:
    first = _run_in_fresh_process(args, tmp_path / "a", isolated_env)
    second = _run_in_fresh_process(args, tmp_path / "b", isolated_env)
    assert len(first) > 8  # trace and outcome rows
    assert bit_differences(first, second) == []


def test_a_planted_unseeded_draw_is_caught(tmp_path: Path, isolated_env: dict) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "sitecustomize.py").write_text(PLANTED_UNSEEDED_DRAW)
    env = {**isolated_env, "PYTHONPATH": f"{planted}:{REPO}"}
    args = ["optimizer=rs", "dataset=sklearn-wine", "budget=8", "seed=5"]
    first = _run_in_fresh_process(args, tmp_path / "a", env)
    second = _run_in_fresh_process(args, tmp_path / "b", env)
    assert "param_C" in bit_differences(first, second)
