"""Planning a sweep: every run of an experiment profile, in a stable order, with where its results
file goes; runs of methods that differ only in their rules merged; a part that runs after another
waiting, or derived from the earlier part's finished runs; which datasets were substituted or left
out, and why."""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.configuration.compose import compose_config, override
from experiments.configuration.config import (
    UsageError,
    check_method,
    check_task,
    spec_from_config,
)
from experiments.configuration.spec import RunSpec
from experiments.run.results import inspect_results_file, run_filename
from experiments.sweep.candidates import read_candidates, read_search_path
from experiments.sweep.experiment import (
    chosen_profile,
    load_experiment,
    parts_of,
    shared_overrides,
    unique,
)
from hpo.data.catalog import (
    GET_DATA_HINT,
    DatasetError,
    DatasetPlan,
    missing_datasets,
    plan_datasets,
    uci121_dir,
)
from runfiles import layout
from runfiles.files import write_json_atomically
from runfiles.layout import RESULTS_ROOT


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
    profile = chosen_profile(config, profile)
    name = config.get("name", experiment)
    runs_dir = layout.sweep_dir(name, profile, results_root) / layout.RUNS
    planned: list[PlannedRun] = []
    checked: dict[Path, bool] = {}  # the earlier parts' results files read, and whether valid
    sweep_folder = layout.sweep_dir(name, profile, results_root)
    added, paths = candidates or (read_candidates(sweep_folder), read_search_path(sweep_folder))
    for part, settings in parts_of(config, profile):
        if settings.get("candidates"):
            settings = {**settings, "methods": unique([*settings["methods"], *added])}
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


def _dataset_plan(settings: Mapping[str, Any], data_dir: str | None) -> DatasetPlan:
    try:
        return plan_datasets(settings["datasets"], data_dir, settings.get("openml", "cached"))
    except DatasetError as err:
        raise UsageError(str(err)) from err


def _notes(config: Mapping[str, Any], profile: str, data_dir: str | None) -> dict[str, str]:
    notes: dict[str, str] = {}
    for _, settings in parts_of(config, profile):
        notes.update(_dataset_plan(settings, data_dir).notes)
    return notes


def dataset_notes(
    experiment: str, profile: str | None = None, data_dir: str | None = None
) -> dict[str, str]:
    """For each dataset the experiment names but does not run as named, what happened instead
    (substituted, or not run and why): the report lists them, nothing is dropped silently."""
    config = load_experiment(experiment)
    return _notes(config, chosen_profile(config, profile), data_dir)


def record_dataset_notes(
    experiment: str,
    profile: str | None = None,
    results_root: Path = RESULTS_ROOT,
    data_dir: str | None = None,
) -> dict[str, str]:
    """:func:`dataset_notes`, kept beside the sweep's runs for the report (atomically)."""
    config = load_experiment(experiment)
    profile = chosen_profile(config, profile)
    notes = _notes(config, profile, data_dir)
    folder = layout.sweep_dir(config.get("name", experiment), profile, results_root)
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomically(folder / layout.DATASET_NOTES, notes)
    return notes


def _part_specs(
    experiment: str, settings: Mapping[str, Any], datasets: list[str]
) -> Iterable[RunSpec]:
    """The runs of one part. Each (method, protocol) is composed once through Hydra; methods
    whose runs differ only in their rules share one run (its first method names it).
    ``overrides`` (key: value) apply to every method of the part, ``method_overrides`` (method:
    {key: value}) to one method after them."""
    shared = shared_overrides(settings)
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


def of_parts(runs: Sequence[PlannedRun], parts: Sequence[str] | None) -> list[PlannedRun]:
    """The runs of ``parts`` (all when None); an unknown part is one line naming the parts."""
    if parts is None:
        return list(runs)
    known = list(dict.fromkeys(run.part for run in runs))
    unknown = [part for part in parts if part not in known]
    if unknown:
        raise UsageError(f"unknown part {unknown[0]!r}; valid: {', '.join(known)}")
    return [run for run in runs if run.part in parts]


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
