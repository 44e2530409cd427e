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
    """One job as ``sacct`` reports it: its state's first word and requested memory."""

    job: str
    state: str
    req_mem: str = ""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def queued(self) -> bool:
        return self.state in QUEUED

    def cause(self) -> str:
        """Why the job ended, in words a failure record can carry."""
        if self.state == "OUT_OF_MEMORY":
            limit = f" of {self.req_mem}" if self.req_mem else ""
            return (
                f"SLURM job {self.job} ended OUT_OF_MEMORY: over its memory limit{limit} "
                "(--mem; hydra.launcher.mem_gb)"
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
    command = ["sacct", "-X", "-n", "-P", "-o", "JobID,State,ReqMem", "-j", ",".join(jobs)]
    try:
        output = subprocess.run(
            command, capture_output=True, text=True, timeout=SACCT_TIMEOUT_S, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    states = {}
    for line in output.splitlines():
        listed, state, req_mem = (line.split("|") + ["", ""])[:3]
        for job in set(expand(listed)) & set(jobs):  # a job's last line is its latest attempt
            states[job] = JobState(job, state.split()[0] if state else "UNKNOWN", req_mem)
    return states


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
