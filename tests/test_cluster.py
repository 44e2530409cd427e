"""The cluster path, exercised: a sweep cut into shards, each a Hydra job submitted through
submitit (its local executor: same pickling, job folders and result collection as on SLURM),
gives the same results, run for run, as ``python -m experiments.sweep run``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.sweep import consolidate, plan
from runfiles.files import without_timing

pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="needs the cluster extra")

REPO = Path(__file__).resolve().parents[1]
EXPERIMENT = "cluster_ci"
PROVENANCE = ["git_revision"]  # differs between a worktree's runs and nothing else
SORT = ["run_id", "row_type", "method", "iteration"]


def _run(command: list[str], results_root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HPO_RESULTS_ROOT": str(results_root), "PYTHONPATH": str(REPO)}
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def _consolidated(root: Path) -> pd.DataFrame:
    paths = consolidate(plan(EXPERIMENT, None, root), root / "merged")
    table = pd.concat([without_timing(pd.read_parquet(p)) for p in paths.values()])
    table = table.drop(columns=[c for c in PROVENANCE if c in table.columns])
    return table.sort_values(SORT).reset_index(drop=True)


def _submitit_sweep(root: Path, *overrides: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "run.py", "-m", f"experiment={EXPERIMENT}", "n_shards=2"]
    command += ["hydra/launcher=slurm_local", f"hydra.sweep.dir={root / 'hydra'}", *overrides]
    # (a later hydra/launcher in ``overrides`` replaces slurm_local, as on the command line)
    return _run(command, root)


@pytest.mark.slow
def test_submitit_shards_equal_the_sweep_run_for_run(tmp_path: Path) -> None:
    cluster, direct = tmp_path / "cluster", tmp_path / "direct"
    submitted = _submitit_sweep(cluster, "shard=range(0,2)")
    assert submitted.returncode == 0, submitted.stderr[-2000:]
    logs = sorted((cluster / "hydra" / "submitit").glob("*/*_log.out"))
    assert len(logs) == 2  # one submitit job per shard, each with its folder
    assert all(f"{EXPERIMENT}/default shard" in log.read_text() for log in logs)
    swept = _run([sys.executable, "-m", "experiments.sweep", "run", EXPERIMENT, "--jobs", "1",
                  "--results-root", str(direct)], direct)  # fmt: skip
    assert swept.returncode == 0, swept.stderr[-2000:]
    written = sorted(p.relative_to(cluster) for p in cluster.rglob("*.parquet"))
    assert all(p.parts[0] in (EXPERIMENT, "hydra") for p in written)  # nothing outside the tree
    ours, theirs = _consolidated(cluster), _consolidated(direct)
    assert len(ours) and ours["run_id"].nunique() == 4
    pd.testing.assert_frame_equal(ours, theirs)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["shard=range(0,3)"], "error: shard must be in [0, 2), got 2"),
        (["shard=range(0,2)", "hydra.launcher.partitionn=x"], "error: unknown setting "
         "hydra.launcher.partitionn of launcher slurm_local; valid: submitit_folder, "),
        (["shard=0", "hydra/launcher=slurmx"], "error: unknown launcher 'slurmx'; valid: "),
    ],
)  # fmt: skip
def test_bad_submission_is_one_line_exit_2_before_any_job(
    tmp_path: Path, overrides: list[str], message: str
) -> None:
    result = _submitit_sweep(tmp_path, *overrides)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert not (tmp_path / "hydra").exists()  # nothing submitted
