"""Seed 004's profiles as cluster jobs: the runs split into stages and shards, and the SLURM
submission that runs them.

I/F-Race's budget is calibrated from the random-search runs finished on its dataset (seed B1.6,
:func:`experiments.autoweka.irace_budget`), so a profile runs in two **stages**: stage 1 is every
method but I/F-Race, stage 2 is I/F-Race, after stage 1. Within a stage, shard ``i`` of ``k``
takes every k-th run from the i-th (runs already finished are skipped, so a shard can be re-run).
:func:`slurm_script` writes the submission: one job array per stage, the second depending on the
first, then the report; each task's time limit covers its shard's budgets times
``OVERHEAD`` (the work after a budget ends: the incumbent's remaining folds, its retraining and
the diagnostic; an allowance, not measured at the medium or paper scale: the smoke's 42 runs of
15 s took 10.3 min in all, so about 1.0) plus ``TASK_ALLOWANCE_S``. Tasks run
``.venv/bin/python`` from the repository.

    python -m experiments.autoweka slurm --profile medium --n-shards 16 > medium.sbatch.sh
    bash medium.sbatch.sh                   # three sbatch calls
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

STAGES = ("all", "1", "2")  # all: both in order; 1: every method but I/F-Race; 2: I/F-Race
OVERHEAD = 1.5  # a run's wall time over its budget, for the time limit (an allowance)
OPTIMISER_MEMORY_MB = 1024  # the seed: 3 GB for the learner plus 1 GB for the optimiser (§4.1)
TASK_ALLOWANCE_S = 600  # per task: starting Python, loading (or fetching) the data
PYTHON = ".venv/bin/python"  # the repository's environment (`make install`)
LONGEST_TASK_S = 7 * 24 * 3600  # past this a task is flagged (a common cluster limit)


def stage_of(family: str) -> str:
    """The stage of a run of method family ``family``."""
    return "2" if family == "irace" else "1"


def select(
    runs: Sequence[Any], families: Sequence[str], stage: str, shard: int = 0, n_shards: int = 1
) -> list[Any]:
    """The runs of ``stage`` (``families[i]`` is run i's method family), shard ``shard`` of
    ``n_shards``; ``ValueError`` naming the valid values otherwise."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; valid choices: {', '.join(STAGES)}")
    if n_shards < 1 or not 0 <= shard < n_shards:
        raise ValueError(f"shard {shard} of {n_shards}: need 0 <= shard < n_shards")
    pairs = list(zip(runs, families, strict=True))
    wanted = ("1", "2") if stage == "all" else (stage,)
    ordered = [run for s in wanted for run, family in pairs if stage_of(family) == s]
    return ordered[shard::n_shards]


def _hours(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def slurm_script(
    profile: Mapping[str, Any],
    stage_seconds: Mapping[str, Sequence[float]],
    n_shards: int,
    extra_args: Sequence[str] = (),
) -> str:
    """The submission of ``profile`` as three dependent SLURM jobs (see the module).
    ``stage_seconds[s]`` lists the budget seconds of stage ``s``'s runs, in plan order."""
    if n_shards < 1:
        raise ValueError(f"--n-shards must be >= 1, got {n_shards}")
    name = str(profile["name"])
    memory = int((profile.get("limits") or {}).get("memory_mb") or 3072) + OPTIMISER_MEMORY_MB
    extra = " ".join(shlex.quote(a) for a in extra_args)
    lines = [
        "#!/bin/bash",
        f"# seed 004 (Auto-WEKA), profile {name}: stage 1 (every method but I/F-Race), then",
        "# stage 2 (I/F-Race, its budget calibrated from stage 1's random search), then the",
        "# report. Written by `python -m experiments.autoweka slurm`; run it with bash from the",
        "# repository (each job starts where sbatch was called).",
        "set -euo pipefail",
        "job=",
    ]
    for stage in ("1", "2"):
        seconds = list(stage_seconds.get(stage, []))
        if not seconds:
            continue
        shards = min(n_shards, len(seconds))
        longest = max(sum(seconds[i::shards]) for i in range(shards)) * OVERHEAD
        longest += TASK_ALLOWANCE_S
        total = sum(seconds) / 3600
        command = (
            f"{PYTHON} -m experiments.autoweka reproduce --profile {name} --stage {stage} "
            f"--shard $SLURM_ARRAY_TASK_ID --n-shards {shards} --no-report {extra}"
        ).strip()
        if longest > LONGEST_TASK_S:
            lines.append(
                f"# NOTE: a task of stage {stage} runs up to {_hours(longest)}, past the 7 days "
                "many clusters allow; more shards, or the runs split over several submissions"
            )
        lines += [
            f"# stage {stage}: {len(seconds)} runs, {total:.1f} core-hours of budget, "
            f"{shards} tasks of at most {_hours(longest)}",
            f"job=$(sbatch --parsable ${{job:+--dependency=afterok:$job}} --array=0-{shards - 1} "
            f"--cpus-per-task=1 --mem={memory}M --time={_hours(longest)} "
            f"--job-name=autoweka-{name}-{stage} --wrap {shlex.quote(command)})",
        ]
    report = f"{PYTHON} -m experiments.autoweka report --profile {name} {extra}".strip()
    lines += [
        f"sbatch --dependency=afterok:$job --cpus-per-task=1 --mem=4096M --time=1:00:00 "
        f"--job-name=autoweka-{name}-report --wrap {shlex.quote(report)}",
    ]
    return "\n".join(lines) + "\n"
