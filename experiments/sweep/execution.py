"""Executing planned runs: one run in a worker (skipped when finished or claimed, its errors
recorded beside its results file), all of a plan in parallel with a progress bar or lines, and a
shard of a profile planned again while runs of later parts become ready."""

from __future__ import annotations

import os
import resource
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any

from experiments.run.interrupt import Interrupted
from experiments.run.progress import StatusLines, duration, interval_seconds, on_terminal, remaining
from experiments.run.results import inspect_results_file
from experiments.sweep.experiment import chosen_profile, load_experiment, parts_of
from experiments.sweep.planning import PlannedRun, of_parts, plan
from experiments.sweep.workers import claim, mark_run_interrupted, record_dead_workers, signal_name
from hpo.data.catalog import (
    Dataset,
    load_dataset,
)
from runfiles.files import set_aside, write_json_atomically
from runfiles.layout import RESULTS_ROOT


@lru_cache(maxsize=4)
def _dataset(name: str, data_dir: str | None) -> Dataset:
    return load_dataset(name, data_dir)


def limit_memory(max_memory_gb: float | None) -> None:
    """Cap this process's address space, so running out of memory is a MemoryError in the run
    (recorded as its failure) rather than the death of the worker."""
    if max_memory_gb:
        limit = int(max_memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def execute(
    run: PlannedRun, data_dir: str | None = None, max_memory_gb: float | None = None
) -> tuple[str, float]:
    """Run one planned run unless finished or claimed by another worker; returns (status,
    seconds). Never raises for the run's own errors: they are written to its ``*.failed.json``
    record."""
    from experiments.run.single import run_and_save

    if run.path.exists():
        return "skipped", 0.0
    run.path.parent.mkdir(parents=True, exist_ok=True)
    if not claim(run):
        return "skipped", 0.0
    if run.path.exists():  # finished by another worker between our look and our claim
        run.marker_path.unlink(missing_ok=True)
        return "skipped", 0.0
    started = time.perf_counter()
    interrupted = False
    try:
        limit_memory(max_memory_gb)
        data = _dataset(run.spec.task.dataset, data_dir)
        run_and_save(run.spec, run.path, data=data)
    except (KeyboardInterrupt, Interrupted) as stop:  # Ctrl-C: not the run's failure
        interrupted = True
        mark_run_interrupted(run.marker_path, signal_name(stop))
        raise
    except Exception as err:  # noqa: BLE001 - every error of a run is recorded, not raised
        if _ends_the_job(err):
            raise
        write_json_atomically(
            run.failure_path,
            {
                "run": str(run.path),
                "error": f"{type(err).__name__}: {err}",
                "traceback": traceback.format_exc(),
            },
        )
        status = "failed"
    else:
        run.failure_path.unlink(missing_ok=True)
        status = "done"
    finally:
        if not interrupted:
            run.marker_path.unlink(missing_ok=True)
    return status, time.perf_counter() - started


def _ends_the_job(err: BaseException) -> bool:
    """Whether ``err`` comes from the job around the run, not from the run: submitit's signal
    handler raises it in the middle of a run to end a job that timed out and cannot be requeued.
    Raised on (the run is left for the next attempt); recorded, it would fail a healthy run and
    keep the shard going after its job was told to end."""
    return type(err).__module__.split(".")[0] == "submitit"


def set_aside_invalid(runs: Sequence[PlannedRun]) -> list[str]:
    """Move every existing results file that is not a valid finished run aside (``*.corrupt``),
    so that the run is done again; returns one message per file moved."""
    messages = []
    for run in runs:
        if run.path.exists():
            problem = inspect_results_file(run.path, run.spec)
            if problem:
                moved = set_aside(run.path, "corrupt")
                messages.append(f"{run.path}: {problem}; moved to {moved.name}, will run again")
    return messages


def run_sweep(
    runs: Sequence[PlannedRun],
    n_jobs: int = -1,
    data_dir: str | None = None,
    max_memory_gb: float | None = None,
    progress: bool = True,
) -> dict[str, int]:
    """Execute every unfinished run (finished ones are skipped, failed ones retried).
    ``progress``: a bar on a terminal, else a line every ``$HPO_PROGRESS_SECONDS`` seconds."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError
    from tqdm.auto import tqdm

    if n_jobs != 1:  # one process per core: the GP engine must not start threads of its own
        os.environ.setdefault("HPO_GP_THREADS", "1")
    for message in set_aside_invalid(runs):
        print(message, file=sys.stderr)
    record_dead_workers(runs)  # markers left by a sweep that was killed
    pending = [run for run in runs if not run.path.exists() and not run.waiting]
    counts = {"done": 0, "failed": 0, "skipped": len(runs) - len(pending)}
    lines = progress and not on_terminal()
    bar = tqdm(
        total=len(runs),
        initial=counts["skipped"],
        unit="run",
        disable=not progress or lines,
        desc="runs",
        dynamic_ncols=True,
    )
    started, to_do = time.perf_counter(), len(pending)

    def describe() -> str:
        finished = counts["done"] + counts["failed"]
        elapsed = time.perf_counter() - started
        return (
            f"runs: {finished + counts['skipped']}/{len(runs)} finished ({counts['failed']} "
            f"failed, {counts['skipped']} from before), {duration(elapsed)} elapsed"
            + remaining(elapsed, finished, to_do)
        )

    with StatusLines(describe, interval_seconds()) if lines else nullcontext():
        while pending:
            try:
                for status, _ in _executed(pending, n_jobs, data_dir, max_memory_gb):
                    counts[status] += 1
                    bar.update(1)
                    bar.set_postfix(failed=counts["failed"], refresh=False)
                pending = []
            except TerminatedWorkerError:
                counts["failed"] += record_dead_workers(pending)
                pending = [
                    r for r in pending if not r.path.exists() and not r.failure_path.exists()
                ]
    bar.close()
    return counts


def _executed(
    runs: Sequence[PlannedRun], n_jobs: int, data_dir: str | None, max_memory_gb: float | None
) -> Iterator[tuple[str, float]]:
    """Each run's (status, seconds) as it ends: in joblib's worker processes (any order), or
    here one after another with ``n_jobs`` 1."""
    if n_jobs == 1:
        return (execute(run, data_dir, max_memory_gb) for run in runs)
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    return parallel(delayed(execute)(run, data_dir, max_memory_gb) for run in runs)


def run_all(
    experiment: str,
    profile: str | None,
    results_root: Path = RESULTS_ROOT,
    data_dir: str | None = None,
    shard: int = 0,
    n_shards: int = 1,
    parts: Sequence[str] | None = None,
    **options: Any,
) -> tuple[list[PlannedRun], dict[str, int]]:
    """Run shard ``shard`` of ``n_shards`` of a profile (of its ``parts`` only, when given: a
    stage of a submission whose later parts wait for it), planning again while runs of a part
    that runs after another (``after``) may have become ready or been derived anew; the last
    plan and the summed counts."""
    config = load_experiment(experiment)
    dependent = {p for p, s in parts_of(config, chosen_profile(config, profile)) if s.get("after")}
    total = {"done": 0, "failed": 0, "skipped": 0}
    tried: set[Path] = set()
    while True:
        runs = of_parts(plan(experiment, profile, results_root, data_dir), parts)
        runs = runs[shard::n_shards]
        ready = [r for r in runs if not r.waiting and r.path not in tried]
        counts = run_sweep(ready, data_dir=data_dir, **options)
        for key in ("done", "failed"):
            total[key] += counts[key]
        total["skipped"] += counts["skipped"] if not tried else 0
        tried |= {r.path for r in ready}
        # a dependent run's specification is derived from the earlier runs finished so far:
        # plan again while a round finishes runs (a retried earlier run can change it)
        if not counts["done"] + counts["failed"] or not any(r.part in dependent for r in runs):
            return runs, total
