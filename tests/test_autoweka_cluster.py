"""Seed 004's profiles as cluster jobs (experiments/autoweka_cluster.py): stages and shards
partition a profile's runs, I/F-Race comes after the runs its budget is calibrated from, and the
SLURM submission chains the stages and the report."""

from __future__ import annotations

import json

import pytest

import experiments.autoweka as autoweka
from experiments.autoweka_cluster import select, slurm_script

RUNS = [f"run{i}" for i in range(10)]
FAMILIES = ["random", "smac", "irace", "random", "irace", "tpe", "grid", "irace", "exdef", "smac"]


def test_stages_and_shards_partition_the_runs_with_i_f_race_last():
    first = select(RUNS, FAMILIES, "1")
    second = select(RUNS, FAMILIES, "2")
    assert second == ["run2", "run4", "run7"] and set(first) | set(second) == set(RUNS)
    assert select(RUNS, FAMILIES, "all") == first + second
    for stage in ("all", "1", "2"):
        shards = [select(RUNS, FAMILIES, stage, i, 3) for i in range(3)]
        assert sorted(sum(shards, [])) == sorted(select(RUNS, FAMILIES, stage))


@pytest.mark.parametrize(
    "stage, shard, n_shards, message",
    [("3", 0, 1, "unknown stage '3'; valid choices: all, 1, 2"), ("1", 2, 2, "shard 2 of 2")],
)
def test_bad_stages_and_shards_are_refused(stage, shard, n_shards, message):
    with pytest.raises(ValueError, match=message):
        select(RUNS, FAMILIES, stage, shard, n_shards)


def test_the_slurm_submission_chains_stage_1_stage_2_and_the_report():
    profile = {"name": "medium", "limits": {"memory_mb": 3072}}
    script = slurm_script(profile, {"1": [120.0] * 9, "2": [120.0] * 3}, 4)
    lines = [line for line in script.splitlines() if "sbatch" in line and not line.startswith("#")]
    assert len(lines) == 3
    assert "--array=0-3" in lines[0] and "--stage 1" in lines[0] and "--mem=4096M" in lines[0]
    assert "--array=0-2" in lines[1] and "--stage 2" in lines[1]  # no more tasks than runs
    assert "--time=0:19:00" in lines[0]  # 3 runs x 120 s x 1.5 + 10 min, rounded up
    assert "${job:+--dependency=afterok:$job}" in lines[1]
    assert "--dependency=afterok:$job" in lines[2] and "autoweka report" in lines[2]
    assert "NOTE" not in script
    long = slurm_script(profile, {"1": [108000.0] * 12}, 2)  # 6 runs of 30 h per task
    assert "NOTE: a task of stage 1 runs up to 270:10:00" in long  # x 1.5 + 10 min
    with pytest.raises(ValueError, match="--n-shards must be >= 1, got 0"):
        slurm_script(profile, {"1": [1.0]}, 0)


def test_sharded_stages_then_the_report_give_every_run_of_the_profile(tmp_path, monkeypatch):
    profile = {
        "name": "tiny", "classification": ["sklearn-iris"], "methods": ["random", "irace"],
        "runs": 2, "best_of": 1, "budget": 20, "budget_kind": "evaluations",
        "limits": {}, "bootstrap": 20,
    }  # fmt: skip
    monkeypatch.setattr(autoweka, "load_profile", lambda name: profile)
    base = ["--profile", "tiny", "--results-dir", str(tmp_path)]
    for shard in ("0", "1"):
        argv = ["reproduce", *base, "--stage", "1", "--shard", shard, "--n-shards", "2"]
        assert autoweka.main([*argv, "--no-report"]) == 0
    runs = tmp_path / "tiny" / "runs" / "sklearn-iris"
    assert sorted(p.name for p in runs.glob("*.json")) == [
        "random__seed0__rep0.json", "random__seed1__rep0.json",
    ]  # fmt: skip
    assert not (tmp_path / "tiny" / "report").exists()
    assert autoweka.main(["reproduce", *base, "--stage", "2", "--no-report"]) == 0
    irace = json.loads((runs / "irace__seed1__rep0.json").read_text())
    assert irace["max_evaluations"] == 20 and irace["max_evaluations_source"]
    assert autoweka.main(["report", *base]) == 0
    assert (tmp_path / "tiny" / "report" / "report.md").exists()
    assert autoweka.main(["reproduce", *base, "--stage", "4"]) == 2  # one line, exit 2
