"""What SLURM says about a sweep's jobs: which job this process is, whether a job still runs,
and why a job that ended early ended (out of memory, cancelled, timed out).

A worker's ``.running`` marker and a shard's record (``experiments.sweep``) carry the SLURM job
they ran in (``12_3``: task 3 of array 12), so that a sweep or ``status`` read on another machine
than the compute node tells a worker that still runs from one that SLURM killed, and names the
cause, e.g. a job over its memory limit. Off SLURM (no ``sacct``, or it fails) nothing is known
and callers keep their own rule (a marker from another host is assumed alive).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

SACCT_TIMEOUT_S = 20.0
# states of a job that has not ended: queued, running, or on its way back to the queue
ACTIVE = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
    }
)
QUEUED = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "CONFIGURING"})


@dataclass(frozen=True)
class JobState:
    """One job as ``sacct`` reports it: its state's first word, requested memory and the most
    memory a step of it was seen to use (sampled; bytes)."""

    job: str
    state: str
    req_mem: str = ""
    max_rss: float = 0.0

    @property
    def over_memory(self) -> bool:
        """Killed for memory: SLURM's OUT_OF_MEMORY (cgroups), or, as jobacct_gather's
        OverMemoryKill leaves it, FAILED with a step seen at or over the requested memory."""
        limit = to_bytes(self.req_mem)
        return self.state == "OUT_OF_MEMORY" or (
            self.state in ("FAILED", "CANCELLED") and 0 < limit <= self.max_rss
        )

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def queued(self) -> bool:
        return self.state in QUEUED

    def cause(self) -> str:
        """Why the job ended, in words a failure record can carry."""
        if self.over_memory:
            limit = f" of {self.req_mem}" if self.req_mem else ""
            seen = f", {self.max_rss / 2**30:.2f} GiB seen" if self.max_rss else ""
            return (
                f"SLURM job {self.job} ended {self.state}: over its memory limit{limit}{seen} "
                "(--mem: hydra.launcher.mem_gb)"
            )
        if self.state == "TIMEOUT":
            return f"SLURM job {self.job} ended TIMEOUT: over its time limit (timeout_min)"
        return f"SLURM job {self.job} ended {self.state} during the run"


def this_job() -> str | None:
    """This process's SLURM job (``<array>_<task>`` in a job array), or None off SLURM."""
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if array and task:
        return f"{array}_{task}"
    return os.environ.get("SLURM_JOB_ID") or None


def job_states(jobs: Iterable[str]) -> dict[str, JobState]:
    """The state of each job ``sacct`` knows (its latest attempt after a requeue); empty when
    SLURM cannot be asked."""
    jobs = sorted(set(jobs))
    if not jobs:
        return {}
    command = ["sacct", "-n", "-P", "-o", "JobID,State,ReqMem,MaxRSS", "-j", ",".join(jobs)]
    try:
        output = subprocess.run(
            command, capture_output=True, text=True, timeout=SACCT_TIMEOUT_S, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    states: dict[str, JobState] = {}
    for line in output.splitlines():
        listed, state, req_mem, max_rss = (line.split("|") + ["", "", ""])[:4]
        job, dot, _ = listed.partition(".")
        if dot:  # a step (batch, 0, ...) of the job on the line before: its memory
            if job in states:
                rss = max(states[job].max_rss, to_bytes(max_rss))
                states[job] = JobState(job, states[job].state, states[job].req_mem, rss)
            continue
        for job in set(expand(listed)) & set(jobs):  # a job's last line is its latest attempt
            states[job] = JobState(job, state.split()[0] if state else "UNKNOWN", req_mem)
    return states


def to_bytes(size: str) -> float:
    """``1G``, ``1139812K``, ``2Gn`` (per node; ``c``: per CPU) in bytes; 0 when empty."""
    size = size.strip().rstrip("nc")
    if not size:
        return 0.0
    units = "KMGTP"
    if size[-1] in units:
        return float(size[:-1]) * 1024 ** (units.index(size[-1]) + 1)
    return float(size)


def expand(listed: str) -> list[str]:
    """The jobs of one ``sacct``/``squeue`` job id: ``12_[0-2,5%4]`` (the pending tasks of an
    array, throttled to 4 at once) is ``12_0``, ``12_1``, ``12_2``, ``12_5``."""
    array, _, tasks = listed.partition("_[")
    if not tasks:
        return [listed]
    jobs = []
    for item in tasks.rstrip("]").split("%")[0].split(","):
        first, _, last = item.partition("-")
        jobs += [f"{array}_{task}" for task in range(int(first), int(last or first) + 1)]
    return jobs
