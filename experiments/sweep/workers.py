"""Who runs a run: a worker's claim on it (its ``.running`` marker, created atomically), whether
the worker that left a marker or a shard record is still alive (this host's processes, SLURM's
queue), and the marks a stopped sweep leaves on the runs it was running."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from experiments.run.interrupt import Interrupted
from experiments.sweep.planning import PlannedRun
from experiments.sweep.queue import job_states, this_job
from runfiles.files import write_json_atomically


def claim(run: PlannedRun) -> bool:
    """Claim ``run`` for this process: its ``.running`` marker (host, pid) is created atomically,
    with its content, and fails if another worker holds it. A dead worker's claim is taken over
    (of several takers, one wins the rename). Returns False when another live worker has it."""
    marker = run.marker_path
    record = worker_record()
    temporary = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record))
    try:
        for _ in range(3):
            try:
                os.link(temporary, marker)  # atomic, content included; fails if it exists
                return True
            except FileExistsError:
                if worker_death(read_record(marker)) is None:
                    return False
                taken = marker.with_name(f".{marker.name}.dead.{os.getpid()}")
                try:
                    os.rename(marker, taken)
                except FileNotFoundError:
                    continue  # another worker took it over first
                taken.unlink()
        return False
    finally:
        temporary.unlink(missing_ok=True)


INTERRUPTED = "interrupted"  # a .running marker's key: the sweep was stopped by a signal


def signal_name(stop: BaseException) -> str:
    """The signal that stopped the sweep: an :class:`Interrupted`'s, else SIGINT (a
    ``KeyboardInterrupt``, as in a worker, where no handler turns signals into Interrupted)."""
    return stop.signal.name if isinstance(stop, Interrupted) else "SIGINT"


def mark_run_interrupted(marker: Path, name: str) -> bool:
    """Keep ``marker`` as the record of a run the signal ``name`` stopped (``status``:
    interrupted; the next sweep runs it again), not of a worker that died; whether there was a
    record to mark."""
    record = read_record(marker)
    if record:
        write_json_atomically(marker, {**record, INTERRUPTED: name})
    return bool(record)


def mark_interrupted(runs: Sequence[PlannedRun], name: str) -> int:
    """After this sweep was stopped by the signal ``name``: mark the runs its own workers (this
    process or its children) were running as interrupted; another sweep's runs on the same
    folder are left alone. Returns how many."""
    ours = {os.getpid()}
    marked = 0
    for run in runs:
        record = read_record(run.marker_path)
        if record.get("host") != socket.gethostname() or run.path.exists():
            continue
        if record.get("pid") in ours or record.get("parent") in ours:
            marked += mark_run_interrupted(run.marker_path, name)
    return marked


def worker_record() -> dict[str, Any]:
    """Who this worker is: host, pid, start time and, under SLURM, its job."""
    record = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "parent": os.getppid(),  # the sweep whose worker this is (its Ctrl-C marks the run)
        "started": time.time(),
    }
    job = this_job()
    return {**record, "slurm_job": job} if job else record


def read_record(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_deaths(records: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """For each worker record (a ``.running`` marker's, a shard's): None while that worker may
    still run, else why it ended. A worker on this host is alive while its process is; one in a
    SLURM job while SLURM lists the job as pending or running (asked once for all of them); one
    on another host, off SLURM, is assumed alive. An unreadable record is a dead worker's."""
    here = socket.gethostname()
    states = job_states(r["slurm_job"] for r in records if r.get("slurm_job"))
    deaths: list[str | None] = []
    for record in records:
        job = record.get("slurm_job")
        state = states.get(job) if job else None
        if not record:
            deaths.append("worker died during the run (its marker is unreadable)")
        elif (
            job
            and job == this_job()
            and (record.get("host"), record.get("pid")) != (here, os.getpid())
        ):
            deaths.append(f"an earlier attempt of SLURM job {job} stopped (requeued)")
        elif record.get("host") == here and _pid_alive(int(record.get("pid", -1))):
            deaths.append(None)
        elif state is not None and state.active:
            # off this host SLURM has the last word; here the process ended and SLURM lags
            same = record.get("host") == here
            deaths.append(f"SLURM job {job} stopped the worker ({state.state})" if same else None)
        elif state is not None:
            deaths.append(state.cause())
        elif record.get("host") == here:
            deaths.append("worker died during the run (out of memory?)")
        else:
            deaths.append(None)  # another host and SLURM cannot be asked: assumed alive
    return deaths


def worker_death(record: Mapping[str, Any]) -> str | None:
    """:func:`worker_deaths` of one record."""
    return worker_deaths([record])[0]


def dead_markers(runs: Sequence[PlannedRun]) -> dict[Path, str]:
    """The runs (results paths) whose ``.running`` marker a dead worker left, and why it died."""
    marked = [run for run in runs if run.marker_path.exists()]
    records = [read_record(run.marker_path) for run in marked]
    return {
        run.path: death
        for run, death in zip(marked, worker_deaths(records), strict=True)
        if death is not None
    }


def record_dead_workers(runs: Sequence[PlannedRun]) -> int:
    """Turn the markers of runs whose worker died into failure records naming the cause (markers
    of runs that finished before their worker died are just removed); returns how many failed."""
    dead = 0
    deaths = dead_markers(runs)
    for run in runs:
        if run.path not in deaths:
            continue
        if read_record(run.marker_path).get(INTERRUPTED):  # stopped on purpose: run it again
            run.marker_path.unlink(missing_ok=True)
            continue
        if not run.path.exists():  # died during the run (a death after it finished: no failure)
            write_json_atomically(
                run.failure_path, {"run": str(run.path), "error": deaths[run.path]}
            )
            dead += 1
        run.marker_path.unlink(missing_ok=True)
    return dead
