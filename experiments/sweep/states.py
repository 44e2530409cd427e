"""Where a sweep stands: each run's state (done, running, failed with its cause, corrupt,
waiting, missing), each shard's (from its record and SLURM's queue), and their printed summaries."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from experiments.run.results import inspect_results_file
from experiments.sweep.experiment import chosen_profile, load_experiment
from experiments.sweep.planning import PlannedRun
from experiments.sweep.queue import job_states
from experiments.sweep.workers import (
    INTERRUPTED,
    dead_markers,
    read_record,
    worker_death,
    worker_record,
)
from runfiles import layout
from runfiles.files import write_json_atomically
from runfiles.layout import RESULTS_ROOT

SHARDS = "shards"  # a sweep's folder of shard records (who runs each shard, whether it ended)


def status(runs: Sequence[PlannedRun]) -> pd.DataFrame:
    """One row per run: part, dataset, method, protocol, repetition, state, error. A run whose
    worker holds its marker is ``running``; one whose worker died (killed by SLURM, say) is
    ``failed``, with the cause, before any sweep has recorded it."""
    rows = []
    dead = dead_markers(runs)
    for run in runs:
        problem = inspect_results_file(run.path, run.spec) if run.path.exists() else None
        if problem:
            state, error = "corrupt", problem
        elif run.path.exists():
            state, error = "done", ""
        elif (stopped := read_record(run.marker_path).get(INTERRUPTED)) and run.path in dead:
            state = "interrupted"
            error = f"the sweep was stopped ({stopped}); the same command runs it again"
        elif run.path in dead:
            state, error = "failed", dead[run.path]
        elif run.marker_path.exists():
            state, error = "running", ""
        elif run.failure_path.exists():
            state = "failed"
            error = json.loads(run.failure_path.read_text()).get("error", "")
        elif run.waiting:
            state, error = "waiting", run.waiting
        else:
            state, error = "missing", ""
        rows.append(
            {
                "part": run.part,
                "dataset": run.spec.task.dataset,
                "method": run.spec.method.name,
                "protocol": run.spec.task.protocol_name,
                "repetition": run.spec.repetition,
                "state": state,
                "error": error,
            }
        )
    return pd.DataFrame(rows)


def shard_path(
    experiment: str,
    profile: str | None,
    shard: int,
    n_shards: int,
    results_root: Path = RESULTS_ROOT,
    parts: Sequence[str] | None = None,
) -> Path:
    """Where shard ``shard`` of ``n_shards`` (of ``parts`` only, when given) keeps its record
    (who runs it, whether it ended)."""
    config = load_experiment(experiment)
    folder = layout.sweep_dir(
        config.get("name", experiment), chosen_profile(config, profile), results_root
    )
    stage = "" if parts is None else "." + "+".join(parts)
    return folder / SHARDS / f"shard-{shard}-of-{n_shards}{stage}.json"


def record_shard(path: Path, counts: Mapping[str, int] | None = None) -> None:
    """Record that this process runs the shard of ``path`` (``counts`` None) or has ended it
    (``counts``: its runs done, failed, skipped). A requeued job records its start again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = worker_record() if counts is None else {**read_record(path), "ended": time.time()}
    write_json_atomically(path, record if counts is None else {**record, "counts": dict(counts)})


def shard_status(
    experiment: str,
    profile: str | None,
    runs: Sequence[PlannedRun],
    n_shards: int,
    results_root: Path = RESULTS_ROOT,
) -> pd.DataFrame:
    """One row per shard of ``runs`` (the whole sweep) cut into ``n_shards``: its state, its SLURM
    job, its runs done and failed, and why it failed. ``pending``: not started (queued, or not
    submitted), or requeued; ``running``; ``finished``: ended with every run done (or done by
    another sweep); ``failed``: ended with failed runs, or its job ended before the shard did
    (cancelled, killed for memory or time: the cause is SLURM's)."""
    frame = status(runs)
    frame["shard"] = [i % n_shards for i in range(len(runs))]
    records = [
        read_record(path) if path.exists() else None
        for path in (
            shard_path(experiment, profile, i, n_shards, results_root) for i in range(n_shards)
        )
    ]
    states = job_states(r["slurm_job"] for r in records if r and r.get("slurm_job"))
    rows = []
    for shard, record in enumerate(records):
        runs_of = frame[frame["shard"] == shard]
        done = int((runs_of["state"] == "done").sum())
        failed = int(runs_of["state"].isin(["failed", "corrupt"]).sum())
        job = (record or {}).get("slurm_job", "")
        queue = states.get(job)
        detail = ""
        if record is None:
            state = "finished" if done == len(runs_of) else "pending"
        elif "ended" in record:
            state = "failed" if failed else "finished"
        elif queue is not None and queue.active:
            state = "pending" if queue.queued else "running"
        else:
            detail = worker_death(record) or ""
            state = "failed" if detail else "running"
        rows.append(
            {"shard": shard, "state": state, "job": job, "runs": len(runs_of), "done": done,
             "failed": failed, "detail": detail or (queue.state if queue else "")}
        )  # fmt: skip
    return pd.DataFrame(rows)


def print_shards(frame: pd.DataFrame) -> None:
    states = ["pending", "running", "finished", "failed"]
    counts = frame["state"].value_counts().reindex(states, fill_value=0)
    print(f"{len(frame)} shards: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    for row in frame.itertuples():
        job = f", SLURM job {row.job}" if row.job else ""
        detail = f": {row.detail}" if row.state == "failed" and row.detail else ""
        print(
            f"shard {row.shard}/{len(frame)}: {row.state}, {row.done} of {row.runs} runs done, "
            f"{row.failed} failed{job}{detail}"
        )


def print_status(frame: pd.DataFrame) -> None:
    states = ["done", "failed", "corrupt", "missing", "waiting"]
    for state in ("running", "interrupted"):  # named only where there is one
        if (frame["state"] == state).any():
            states.insert(3, state)
    counts = frame["state"].value_counts().reindex(states, fill_value=0)
    print(f"{len(frame)} runs: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    failed = frame[frame["state"].isin(["failed", "corrupt"])]
    if len(failed):
        print(failed.drop(columns="state").to_string(index=False, max_colwidth=100))
