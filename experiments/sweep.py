"""Sweeps: plan the runs of an experiment profile, execute them in parallel, resume, report.

An experiment (``conf/experiment/<name>.yaml``) has profiles (``smoke``, ``medium``, ``paper``);
a profile has parts (e.g. Chapter 3's main experiment and its posterior-mean experiment), each a
product datasets × methods × protocols × repetitions. Methods of a part that differ only in their
selection rule share one run (``cma-pv``, ``cma-bw`` and ``cma-gv`` are one CMA-ES run read by
three rules), and their seeds never depend on which rules are read, so a method run alone gives
the same numbers.

A part may run after another (``after: <part>``): its runs wait until every run of that part on
the same dataset has finished (or failed), and ``derive: <module>:<function>`` then turns each
run's specification into the one to run from those finished runs (seed 004: I/F-Race's budget
calibrated from random search's runs). A waiting run is planned (``sweep cost`` counts it, its
results file is named once it can run) but not executed; ``run`` plans again after each round,
so one command runs both parts.

Resuming is the same command as starting: a run whose results file exists is skipped; a failed
run (its error recorded next to where its results would be, ``*.failed.json``) is tried again.
One failing run never stops the sweep; the exit code says whether anything failed. A worker that
dies (e.g. out of memory) is detected from the marker its run left and recorded as a failure.

Command line::

    python -m experiments.sweep run chapter3 --profile smoke [--jobs N] [--shard i --n-shards k]
    python -m experiments.sweep run reshuffle --profile local --parts fractions,pm_incumbent
    python -m experiments.sweep status chapter3 --profile smoke
    python -m experiments.sweep consolidate chapter3 --profile smoke
    python -m experiments.sweep cost chapter3 --profile paper --n-shards 500  # before a cluster job
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import resource
import socket
import sys
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import OmegaConf

from analysis import layout
from analysis.layout import RESULTS_ROOT
from experiments.compose import compose_config, override
from experiments.config import (
    UsageError,
    check_method,
    check_task,
    group_choices,
    session_search_path,
    spec_from_config,
    use_search_path,
)
from experiments.interrupt import Interrupted, raise_on_signals
from experiments.progress import StatusLines, duration, interval_seconds, on_terminal, remaining
from experiments.queue import job_states, this_job
from experiments.results import ensure_writable, inspect_results_file, run_filename, set_aside
from experiments.spec import RunSpec
from hpo.data.catalog import (
    GET_DATA_HINT,
    Dataset,
    DatasetError,
    DatasetPlan,
    load_dataset,
    missing_datasets,
    plan_datasets,
    uci121_dir,
)
from hpo.data.catalog import unknown_choice_message as _unknown

SHARDS = "shards"  # a sweep's folder of shard records (who runs each shard, whether it ended)
_SHARED_SETTINGS = (
    "space",
    "budget",
    "seed",
    "curves",
    "pm_domain",
    "predictions",
    "vote_ties",
)


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep and where its results file goes; ``waiting`` says why it cannot run
    yet (a part that runs after another), else empty."""

    part: str
    spec: RunSpec
    path: Path
    waiting: str = ""

    @property
    def failure_path(self) -> Path:
        return layout.failure_path(self.path)

    @property
    def marker_path(self) -> Path:
        return layout.marker_path(self.path)


# ------------------------------------------------------------------------------ planning


def experiment_choices() -> list[str]:
    return group_choices("experiment")


def load_experiment(name: str) -> dict[str, Any]:
    """The experiment's config as a dict, composed by Hydra (``conf/experiment/<name>.yaml``, or
    ``experiment/<name>.yaml`` of a folder of the session's search path,
    :func:`experiments.config.use_search_path`), or a YAML file given by path; raises
    :class:`UsageError` naming the valid choices and where they were searched."""
    if name.endswith(".yaml"):
        if not Path(name).is_file():
            raise UsageError(f"experiment file {name} not found")
        return OmegaConf.to_container(OmegaConf.load(name), resolve=True)
    if name not in experiment_choices():
        searched = ", ".join(["conf (this repository)", *session_search_path()])
        raise UsageError(
            f"{_unknown('experiment', name, experiment_choices())}; search path: {searched} "
            "(an own experiment file: --search-path pkg://my_pkg/conf)"
        )
    return compose_config([f"experiment={name}"])["experiment"]


def _shared_overrides(settings: Mapping[str, Any]) -> list[str]:
    """The experiment's settings shared by all its runs, as overrides."""
    overrides = [override(k, settings[k]) for k in _SHARED_SETTINGS if k in settings]
    guard = settings.get("fit_guard") or {}
    return overrides + [override(f"fit_guard.{k}", v) for k, v in guard.items()]


def plan(
    experiment: str,
    profile: str | None = None,
    results_root: Path = RESULTS_ROOT,
    data_dir: str | None = None,
    candidates: tuple[list[str], list[str]] | None = None,
) -> list[PlannedRun]:
    """Every run of ``experiment``/``profile`` (default: its first profile), in a stable order,
    shared runs merged; a benchmark's candidates those its folder remembers, or ``candidates``
    ((names, search path), :func:`checked_candidates`: a dry run's, never written)."""
    config = load_experiment(experiment)
    profile = _profile(config, profile)
    name = config.get("name", experiment)
    runs_dir = layout.sweep_dir(name, profile, results_root) / layout.RUNS
    planned: list[PlannedRun] = []
    checked: dict[Path, bool] = {}  # the earlier parts' results files read, and whether valid
    sweep_folder = layout.sweep_dir(name, profile, results_root)
    added, paths = candidates or (read_candidates(sweep_folder), read_search_path(sweep_folder))
    for part, settings in _parts(config, profile):
        if settings.get("candidates"):
            settings = {**settings, "methods": _unique([*settings["methods"], *added])}
            settings["search_path"] = paths
        datasets = _dataset_plan(settings, data_dir).names
        if not datasets:
            raise UsageError(
                f"{name}/{profile}, part {part}: no dataset of {settings['datasets']!r} is in the "
                f"collection at {uci121_dir(data_dir)}: {GET_DATA_HINT}"
            )
        after = settings.get("after")
        if after is not None and after not in {p.part for p in planned}:
            raise UsageError(
                f"{name}/{profile}, part {part}: after {after!r}, which is not an earlier part"
            )
        for spec in _part_specs(name, settings, datasets):
            if after is None:
                planned.append(PlannedRun(part, spec, runs_dir / part / run_filename(spec)))
            else:
                planned.append(_dependent(part, spec, runs_dir, planned, after, settings, checked))
    return planned


def _unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _candidates_record(folder: Path) -> dict[str, list[str]]:
    path = Path(folder) / layout.CANDIDATES
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {key: list(record.get(key, [])) for key in ("optimizers", "search_path")}


def read_candidates(folder: Path) -> list[str]:
    """The candidate optimizers a benchmark sweep's folder remembers (none: ``[]``)."""
    return _candidates_record(folder)["optimizers"]


def read_search_path(folder: Path) -> list[str]:
    """Where the candidates' method files are found beside ``conf/`` (Hydra's search path:
    ``pkg://their_package/conf`` or ``file:///abs/conf``), as the sweep folder remembers it."""
    return _candidates_record(folder)["search_path"]


def checked_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path = RESULTS_ROOT,
    search_path: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """(every candidate, the search path): those the sweep folder remembers with ``names``
    added, each found in ``conf/optimizer/`` or on ``search_path``; writes nothing. An unknown
    optimizer, or an experiment without parts marked ``candidates: true``, is one line."""
    return _checked_candidates(experiment, profile, names, results_root, search_path)[:2]


def _checked_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path,
    search_path: Sequence[str],
) -> tuple[list[str], list[str], Path]:
    """:func:`checked_candidates` and the sweep folder that remembers them."""
    config = load_experiment(experiment)
    profile = _profile(config, profile)
    if not any(settings.get("candidates") for _, settings in _parts(config, profile)):
        raise UsageError(f"experiment {experiment!r} takes no candidates (e.g. benchmark does)")
    folder = layout.sweep_dir(config.get("name", experiment), profile, results_root)
    paths = _unique([*read_search_path(folder), *search_path])
    choices = group_choices("optimizer", paths)
    for name in names:
        if name not in choices:
            raise UsageError(_unknown("optimizer", name, choices))
    return _unique([*read_candidates(folder), *names]), paths, folder


def add_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path = RESULTS_ROOT,
    search_path: Sequence[str] = (),
) -> list[str]:
    """Add optimizer configs ``names`` to the parts of ``experiment`` marked ``candidates:
    true`` (a benchmark) (:func:`checked_candidates`), remembered in its sweep folder so that
    later commands (``run``, ``status``, a cluster shard, the report) plan the same runs;
    returns every candidate."""
    every, paths, folder = _checked_candidates(
        experiment, profile, names, results_root, search_path
    )
    folder.mkdir(parents=True, exist_ok=True)
    _write_json_atomic(folder / layout.CANDIDATES, {"optimizers": every, "search_path": paths})
    return every


def _dependent(
    part: str,
    spec: RunSpec,
    runs_dir: Path,
    planned: Sequence[PlannedRun],
    after: str,
    settings: Mapping[str, Any],
    checked: dict[Path, bool] | None = None,
) -> PlannedRun:
    """A run of a part that runs after part ``after``: waiting while a run of that part on its
    dataset has neither finished nor failed, else its specification derived from the finished
    ones (``derive``, a ``module:function`` taking the spec and those runs). A results file that
    is not a valid finished run (truncated, another run's) is not finished: that run is done
    again first. ``checked``: the files already inspected, and whether each was valid."""
    checked = {} if checked is None else checked
    earlier = [p for p in planned if p.part == after and p.spec.task.dataset == spec.task.dataset]
    finished = [p for p in earlier if _finished(p, checked)]
    done = {p.path for p in finished}
    pending = [p for p in earlier if p.path not in done and not p.failure_path.exists()]
    if pending:
        why = f"waits for {len(pending)} run(s) of part {after} on {spec.task.dataset}"
        return PlannedRun(part, spec, runs_dir / part / run_filename(spec), why)
    if settings.get("derive"):
        module, _, function = str(settings["derive"]).partition(":")
        derive = getattr(importlib.import_module(module), function)
        spec = derive(spec, finished)
    return PlannedRun(part, spec, runs_dir / part / run_filename(spec))


def _finished(run: PlannedRun, checked: dict[Path, bool]) -> bool:
    """Whether ``run``'s results file exists and is a valid finished run of it (remembered in
    ``checked``, so that each file is read once per plan)."""
    if run.path not in checked:
        exists = run.path.exists()
        checked[run.path] = exists and inspect_results_file(run.path, run.spec) is None
    return checked[run.path]


def _parts(config: Mapping[str, Any], profile: str) -> list[tuple[str, dict[str, Any]]]:
    """``(part, settings)`` of a profile: the experiment's shared settings under each part's."""
    shared = (*_SHARED_SETTINGS, "fit_guard", "openml", "overrides", "method_overrides", "seeds")
    base = {k: v for k, v in config.items() if k in shared}
    return [(part, {**base, **c}) for part, c in config["profiles"][profile]["parts"].items()]


def _dataset_plan(settings: Mapping[str, Any], data_dir: str | None) -> DatasetPlan:
    try:
        return plan_datasets(settings["datasets"], data_dir, settings.get("openml", "cached"))
    except DatasetError as err:
        raise UsageError(str(err)) from err


def _profile(config: Mapping[str, Any], profile: str | None) -> str:
    """``profile``, or the experiment's first; an unknown one is one line naming the choices."""
    profiles = config["profiles"]
    profile = profile or next(iter(profiles))
    if profile not in profiles:
        raise UsageError(_unknown("profile", profile, profiles))
    return profile


def _notes(config: Mapping[str, Any], profile: str, data_dir: str | None) -> dict[str, str]:
    notes: dict[str, str] = {}
    for _, settings in _parts(config, profile):
        notes.update(_dataset_plan(settings, data_dir).notes)
    return notes


def dataset_notes(
    experiment: str, profile: str | None = None, data_dir: str | None = None
) -> dict[str, str]:
    """For each dataset the experiment names but does not run as named, what happened instead
    (substituted, or not run and why): the report lists them, nothing is dropped silently."""
    config = load_experiment(experiment)
    return _notes(config, _profile(config, profile), data_dir)


def record_dataset_notes(
    experiment: str,
    profile: str | None = None,
    results_root: Path = RESULTS_ROOT,
    data_dir: str | None = None,
) -> dict[str, str]:
    """:func:`dataset_notes`, kept beside the sweep's runs for the report (atomically)."""
    config = load_experiment(experiment)
    profile = _profile(config, profile)
    notes = _notes(config, profile, data_dir)
    folder = layout.sweep_dir(config.get("name", experiment), profile, results_root)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json_atomic(folder / layout.DATASET_NOTES, notes)
    return notes


def _part_specs(
    experiment: str, settings: Mapping[str, Any], datasets: list[str]
) -> Iterable[RunSpec]:
    """The runs of one part. Each (method, protocol) is composed once through Hydra; methods
    whose runs differ only in their rules share one run (its first method names it).
    ``overrides`` (key: value) apply to every method of the part, ``method_overrides`` (method:
    {key: value}) to one method after them."""
    shared = _shared_overrides(settings)
    shared += [override(key, value) for key, value in (settings.get("overrides") or {}).items()]
    if settings.get("search_path"):  # a benchmark's candidates from outside conf/
        shared.append(f"hydra.searchpath=[{','.join(settings['search_path'])}]")
    for protocol in settings["protocols"]:
        runs: dict[str, RunSpec] = {}
        for method in settings["methods"]:
            extra = (settings.get("method_overrides") or {}).get(method) or {}
            overrides = [f"optimizer={method}", f"protocol={protocol}", *shared]
            overrides.append(override("dataset", datasets[0]))  # the task check needs the part's
            overrides += [override(key, value) for key, value in extra.items()]
            spec = spec_from_config(compose_config(overrides), experiment=experiment)
            key = json.dumps({**spec.identity(), "rules": None}, sort_keys=True, default=str)
            if key in runs:
                runs[key] = runs[key].with_labels({**runs[key].method.rules, **spec.method.rules})
            else:
                check_method(spec)  # each method's optimizer built once, before any run
                runs[key] = spec
        for dataset in datasets:
            for spec in runs.values():  # every dataset's task is the space's (one line, exit 2)
                check_task(spec.task.space, dataset)
            for repetition in range(int(settings["repetitions"])):
                for seed in _seeds(settings):
                    for spec in runs.values():
                        yield dataclasses.replace(
                            spec,
                            task=dataclasses.replace(spec.task, dataset=dataset),
                            repetition=repetition,
                            seed=spec.seed if seed is None else seed,
                        )


def _seeds(settings: Mapping[str, Any]) -> list[int | None]:
    """``seeds: n``: n independent runs per (dataset, method, repetition), seeds 0..n-1 (seed
    004's runs on one split); by default one, with the part's ``seed``."""
    if settings.get("seeds") is None:
        return [None]
    return list(range(int(settings["seeds"])))


# ----------------------------------------------------------------------------- execution


@lru_cache(maxsize=4)
def _dataset(name: str, data_dir: str | None) -> Dataset:
    return load_dataset(name, data_dir)


def _write_json_atomic(path: Path, record: Mapping[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, indent=1, default=str))
    os.replace(temporary, path)


def limit_memory(max_memory_gb: float | None) -> None:
    """Cap this process's address space, so running out of memory is a MemoryError in the run
    (recorded as its failure) rather than the death of the worker."""
    if max_memory_gb:
        limit = int(max_memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _claim(run: PlannedRun) -> bool:
    """Claim ``run`` for this process: its ``.running`` marker (host, pid) is created atomically,
    with its content, and fails if another worker holds it. A dead worker's claim is taken over
    (of several takers, one wins the rename). Returns False when another live worker has it."""
    marker = run.marker_path
    record = _worker_record()
    temporary = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record))
    try:
        for _ in range(3):
            try:
                os.link(temporary, marker)  # atomic, content included; fails if it exists
                return True
            except FileExistsError:
                if worker_death(_read_record(marker)) is None:
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


def execute(
    run: PlannedRun, data_dir: str | None = None, max_memory_gb: float | None = None
) -> tuple[str, float]:
    """Run one planned run unless finished or claimed by another worker; returns (status,
    seconds). Never raises for the run's own errors: they are written to its ``*.failed.json``
    record."""
    from experiments.single import run_and_save

    if run.path.exists():
        return "skipped", 0.0
    run.path.parent.mkdir(parents=True, exist_ok=True)
    if not _claim(run):
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
        _mark_interrupted(run.marker_path, signal_name(stop))
        raise
    except Exception as err:  # noqa: BLE001 - every error of a run is recorded, not raised
        if _ends_the_job(err):
            raise
        _write_json_atomic(
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


INTERRUPTED = "interrupted"  # a .running marker's key: the sweep was stopped by a signal


def signal_name(stop: BaseException) -> str:
    """The signal that stopped the sweep: an :class:`Interrupted`'s, else SIGINT (a
    ``KeyboardInterrupt``, as in a worker, where no handler turns signals into Interrupted)."""
    return stop.signal.name if isinstance(stop, Interrupted) else "SIGINT"


def _mark_interrupted(marker: Path, name: str) -> bool:
    """Keep ``marker`` as the record of a run the signal ``name`` stopped (``status``:
    interrupted; the next sweep runs it again), not of a worker that died; whether there was a
    record to mark."""
    record = _read_record(marker)
    if record:
        _write_json_atomic(marker, {**record, INTERRUPTED: name})
    return bool(record)


def mark_interrupted(runs: Sequence[PlannedRun], name: str) -> int:
    """After this sweep was stopped by the signal ``name``: mark the runs its own workers (this
    process or its children) were running as interrupted; another sweep's runs on the same
    folder are left alone. Returns how many."""
    ours = {os.getpid()}
    marked = 0
    for run in runs:
        record = _read_record(run.marker_path)
        if record.get("host") != socket.gethostname() or run.path.exists():
            continue
        if record.get("pid") in ours or record.get("parent") in ours:
            marked += _mark_interrupted(run.marker_path, name)
    return marked


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


def _worker_record() -> dict[str, Any]:
    """Who this worker is: host, pid, start time and, under SLURM, its job."""
    record = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "parent": os.getppid(),  # the sweep whose worker this is (its Ctrl-C marks the run)
        "started": time.time(),
    }
    job = this_job()
    return {**record, "slurm_job": job} if job else record


def _read_record(path: Path) -> dict[str, Any]:
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


def _dead_markers(runs: Sequence[PlannedRun]) -> dict[Path, str]:
    """The runs (results paths) whose ``.running`` marker a dead worker left, and why it died."""
    marked = [run for run in runs if run.marker_path.exists()]
    records = [_read_record(run.marker_path) for run in marked]
    return {
        run.path: death
        for run, death in zip(marked, worker_deaths(records), strict=True)
        if death is not None
    }


def _record_dead_workers(runs: Sequence[PlannedRun]) -> int:
    """Turn the markers of runs whose worker died into failure records naming the cause (markers
    of runs that finished before their worker died are just removed); returns how many failed."""
    dead = 0
    deaths = _dead_markers(runs)
    for run in runs:
        if run.path not in deaths:
            continue
        if _read_record(run.marker_path).get(INTERRUPTED):  # stopped on purpose: run it again
            run.marker_path.unlink(missing_ok=True)
            continue
        if not run.path.exists():  # died during the run (a death after it finished: no failure)
            _write_json_atomic(run.failure_path, {"run": str(run.path), "error": deaths[run.path]})
            dead += 1
        run.marker_path.unlink(missing_ok=True)
    return dead


def run_sweep(
    runs: Sequence[PlannedRun],
    n_jobs: int = -1,
    data_dir: str | None = None,
    max_memory_gb: float | None = None,
    progress: bool = True,
) -> dict[str, int]:
    """Execute every unfinished run (finished ones are skipped, failed ones retried).
    ``progress``: a bar on a terminal, else a line every ``$HPO_PROGRESS_SECONDS`` seconds."""
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError
    from tqdm.auto import tqdm

    if n_jobs != 1:  # one process per core: the GP engine must not start threads of its own
        os.environ.setdefault("HPO_GP_THREADS", "1")
    for message in set_aside_invalid(runs):
        print(message, file=sys.stderr)
    _record_dead_workers(runs)  # markers left by a sweep that was killed
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
                results = (
                    Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                        delayed(execute)(run, data_dir, max_memory_gb) for run in pending
                    )
                    if n_jobs != 1
                    else (execute(run, data_dir, max_memory_gb) for run in pending)
                )
                for status, _ in results:
                    counts[status] += 1
                    bar.update(1)
                    bar.set_postfix(failed=counts["failed"], refresh=False)
                pending = []
            except TerminatedWorkerError:
                counts["failed"] += _record_dead_workers(pending)
                pending = [
                    r for r in pending if not r.path.exists() and not r.failure_path.exists()
                ]
    bar.close()
    return counts


def of_parts(runs: Sequence[PlannedRun], parts: Sequence[str] | None) -> list[PlannedRun]:
    """The runs of ``parts`` (all when None); an unknown part is one line naming the parts."""
    if parts is None:
        return list(runs)
    known = list(dict.fromkeys(run.part for run in runs))
    unknown = [part for part in parts if part not in known]
    if unknown:
        raise UsageError(f"unknown part {unknown[0]!r}; valid: {', '.join(known)}")
    return [run for run in runs if run.part in parts]


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
    dependent = {p for p, s in _parts(config, _profile(config, profile)) if s.get("after")}
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


# -------------------------------------------------------------------------- status, merge


def status(runs: Sequence[PlannedRun]) -> pd.DataFrame:
    """One row per run: part, dataset, method, protocol, repetition, state, error. A run whose
    worker holds its marker is ``running``; one whose worker died (killed by SLURM, say) is
    ``failed``, with the cause, before any sweep has recorded it."""
    rows = []
    dead = _dead_markers(runs)
    for run in runs:
        problem = inspect_results_file(run.path, run.spec) if run.path.exists() else None
        if problem:
            state, error = "corrupt", problem
        elif run.path.exists():
            state, error = "done", ""
        elif (stopped := _read_record(run.marker_path).get(INTERRUPTED)) and run.path in dead:
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
        config.get("name", experiment), _profile(config, profile), results_root
    )
    stage = "" if parts is None else "." + "+".join(parts)
    return folder / SHARDS / f"shard-{shard}-of-{n_shards}{stage}.json"


def record_shard(path: Path, counts: Mapping[str, int] | None = None) -> None:
    """Record that this process runs the shard of ``path`` (``counts`` None) or has ended it
    (``counts``: its runs done, failed, skipped). A requeued job records its start again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = _worker_record() if counts is None else {**_read_record(path), "ended": time.time()}
    _write_json_atomic(path, record if counts is None else {**record, "counts": dict(counts)})


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
        _read_record(path) if path.exists() else None
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


def _print_shards(frame: pd.DataFrame) -> None:
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


def consolidate(runs: Sequence[PlannedRun], out_dir: Path) -> dict[str, Path]:
    """Merge finished runs into ``outcomes.parquet`` and ``traces.parquet`` (atomic writes).
    A file that cannot be read is named on stderr and left out; the rest are merged."""
    frames, unreadable = [], []
    for run in runs:
        if run.path.exists():
            try:
                frames.append(pd.read_parquet(run.path).assign(part=run.part))
            except Exception as err:  # noqa: BLE001 - any unreadable file is named, not fatal
                unreadable.append(f"{run.path} ({type(err).__name__})")
    for name in unreadable:
        print(f"warning: left out unreadable results file {name}", file=sys.stderr)
    if unreadable:
        print(f"warning: {len(unreadable)} unreadable file(s) left out", file=sys.stderr)
    if not frames:
        raise UsageError("no finished runs to consolidate")
    table = pd.concat(frames, ignore_index=True)
    table["part"] = table["part"].astype("string")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for row_type in ("outcome", "trace"):
        subset = table[table["row_type"] == row_type].dropna(axis=1, how="all")
        path = out_dir / f"{row_type}s.parquet"
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        subset.reset_index(drop=True).to_parquet(temporary, index=False)
        os.replace(temporary, path)
        written[row_type] = path
    return written


def check_data(runs: Sequence[PlannedRun], data_dir: str | None) -> None:
    """Pre-flight: raise :class:`UsageError` naming the datasets whose files are missing."""
    names = sorted({run.spec.task.dataset for run in runs})
    missing = missing_datasets(names, data_dir)
    if missing:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise UsageError(
            f"{len(missing)} of {len(names)} datasets of this sweep are not in the collection at "
            f"{uci121_dir(data_dir)} ({shown}): {GET_DATA_HINT}"
        )


def _print_status(frame: pd.DataFrame) -> None:
    states = ["done", "failed", "corrupt", "missing", "waiting"]
    for state in ("running", "interrupted"):  # named only where there is one
        if (frame["state"] == state).any():
            states.insert(3, state)
    counts = frame["state"].value_counts().reindex(states, fill_value=0)
    print(f"{len(frame)} runs: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    failed = frame[frame["state"].isin(["failed", "corrupt"])]
    if len(failed):
        print(failed.drop(columns="state").to_string(index=False, max_colwidth=100))


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.sweep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=["run", "status", "consolidate", "plan", "cost"])
    parser.add_argument("experiment")
    parser.add_argument("--profile", default=None, help="default: the experiment's first")
    parser.add_argument("--jobs", type=int, default=-1, help="parallel workers (-1 = all cores)")
    parser.add_argument(
        "--shard", type=int, default=None, help="default 0; status: every shard, one line each"
    )
    parser.add_argument("--n-shards", type=int, default=1)
    parser.add_argument("--results-root", type=Path, default=RESULTS_ROOT)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--max-memory-gb", type=float, default=None)
    parser.add_argument("--max-array-size", type=int, default=1001, help="cost: SLURM's limit")
    parser.add_argument(
        "--candidates",
        default="",
        help="optimizer configs to add to a benchmark's parts (comma separated; remembered)",
    )
    parser.add_argument(
        "--search-path",
        default="",
        help="where own experiment, method and space files are, beside conf/: "
        "pkg://their_package/conf or file:///abs/conf (comma separated)",
    )
    parser.add_argument(
        "--parts", default="", help="only these parts of the profile (comma separated)"
    )
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p] or None
    try:
        use_search_path([p for p in args.search_path.split(",") if p])
        per_shard = args.command == "status" and args.shard is None and args.n_shards > 1
        args.shard = args.shard or 0
        if not 0 <= args.shard < args.n_shards:
            raise UsageError(f"shard must be in [0, {args.n_shards}), got {args.shard}")
        extra = None
        if args.candidates:
            names = [n for n in args.candidates.split(",") if n]
            paths = [p for p in args.search_path.split(",") if p]
            if args.command == "run":  # remembered: later commands plan the same runs
                add_candidates(args.experiment, args.profile, names, args.results_root, paths)
            else:  # a dry run (plan, cost, status) writes nothing a later run would read
                extra = checked_candidates(
                    args.experiment, args.profile, names, args.results_root, paths
                )
        runs = of_parts(
            plan(args.experiment, args.profile, args.results_root, args.data_dir, extra), parts
        )
        if args.command == "cost":  # the whole sweep, as a cluster submission of n_shards jobs
            from experiments.cluster import print_cost

            name = runs[0].path.parents[3].parent.name if runs else args.experiment
            profile = runs[0].path.parents[3].name if runs else args.profile
            return print_cost(name, profile, runs, args.n_shards, args.max_array_size)
        if per_shard:
            shards = shard_status(
                args.experiment, args.profile, runs, args.n_shards, args.results_root
            )
            frame = status(runs)
            _print_status(frame)
            _print_shards(shards)
            return 1 if (shards["state"] == "failed").any() else 0
        runs = runs[args.shard :: args.n_shards]
        if args.command == "plan":
            print(status(runs).drop(columns="error").to_string(index=False))
            return 0
        if args.command == "run":
            interval_seconds()  # a bad $HPO_PROGRESS_SECONDS: one line before anything runs
            check_data(runs, args.data_dir)
            ensure_writable(args.results_root)
            for name, note in record_dataset_notes(
                args.experiment, args.profile, args.results_root, args.data_dir
            ).items():
                print(f"{name}: {note}")
            try:
                runs, counts = run_all(
                    args.experiment,
                    args.profile,
                    args.results_root,
                    args.data_dir,
                    args.shard,
                    args.n_shards,
                    parts,
                    n_jobs=args.jobs,
                    max_memory_gb=args.max_memory_gb,
                )
            except (Interrupted, KeyboardInterrupt) as stop:
                name = signal_name(stop)
                code = stop.exit_code if isinstance(stop, Interrupted) else 130
                marked = mark_interrupted(runs, name)
                finished = sum(run.path.exists() for run in runs)
                print(
                    f"interrupted ({name}): {finished} of {len(runs)} runs finished are "
                    f"kept, {marked} stopped mid-run marked interrupted; run the same command "
                    "to go on",
                    file=sys.stderr,
                    flush=True,
                )
                return code
            print(f"finished: {counts}")
            _print_status(status(runs))
            return 1 if counts["failed"] else 0
        if args.command == "status":
            frame = status(runs)
            _print_status(frame)
            return 1 if frame["state"].isin(["failed", "corrupt"]).any() else 0
        out = runs[0].path.parents[3] / layout.CONSOLIDATED if runs else args.results_root
        record_dataset_notes(args.experiment, args.profile, args.results_root, args.data_dir)
        for row_type, path in consolidate(runs, out).items():
            print(f"{row_type}s: {path}")
        return 0
    except (UsageError, PermissionError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    # A signal is one line and exit 130 (SIGINT) or 143 (SIGTERM), as for a single run.
    raise_on_signals()
    # Workers unpickle functions by module name: use the importable module, not ``__main__``.
    from experiments import sweep

    sys.exit(sweep._main())
