"""Seed 004 (Thornton 2014, Auto-WEKA) runs: one method by name on one dataset under a time
budget, with per-evaluation limits, written as one results file.

    python -m experiments.autoweka space [--task classification]
    python -m experiments.autoweka reproduce --profile smoke      # make reproduce-autoweka
    python -m experiments.autoweka cost --profile paper           # core-hours of a profile
    python -m experiments.autoweka slurm --profile medium --n-shards 16   # a cluster submission
    python -m experiments.autoweka reproduce --profile medium --stage 1 --shard 3 --n-shards 16
    python -m experiments.autoweka report --profile medium        # the report of finished runs
    python -m experiments.autoweka run --method smac --dataset sklearn-wine --budget 120 \
        [--budget-kind cpu|wall] [--seed 0] [--repetition 0] [--time-limit 60] \
        [--memory-limit 3072] [--space classification|regression] [--learners knn,svm] \
        [--max-ensemble 5] [--set name=value ...] [--results-dir results/autoweka]

The protocol is the seed's (§4.1): the dataset's predefined test split, else a seeded 30 %; in the
training set a seeded 30 % the optimiser never sees (the overfitting diagnostic, §4.2.3) and the
70 % it optimises on by 10-fold CV; the chosen configuration retrained on the whole training set
and tested once (:mod:`hpo.cash.run`). Methods are named in ``conf/autoweka/methods.yaml``. Bad
input is one line on stderr, exit code 2, nothing written. The results file
(``<results-dir>/<dataset>/<method>__seed<s>__rep<r>.parquet``) has one row per evaluation
(``row_type = trace``) and one per incumbent change (``trajectory``); its summary (the chosen
learner, meta-method base, ensemble members, feature selection, errors) is in the schema metadata
and in a JSON file beside it.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from experiments.autoweka_cluster import select, slurm_script, stage_of
from experiments.results import _write_parquet, write_file_atomically
from experiments.spaces import AUTOWEKA_DIR, load_cash_library
from hpo import seeding
from hpo.cash.budget import TimeBudget
from hpo.cash.methods import MethodSpec, make_method, methods_from_config
from hpo.cash.objective import InstanceObjective, make_instances
from hpo.cash.run import CashRun, run_cash
from hpo.cash.space import AUTOWEKA_COUNTS, CashSpace, build_cash_space
from hpo.data.catalog import (
    OPENML_MODES,
    Dataset,
    DatasetError,
    load_dataset,
    openml_cached,
    openml_dir,
    resolve_name,
    unknown_choice_message,
)
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.isolation import EvaluationLimits
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard
from hpo.space.search_space import SpaceError

# seed §4.1: 30 % test (when no predefined split), 30 % of the training set for the diagnostic,
# 10-fold CV on the rest; no training-size cap (the seed has none)
PROTOCOL = ProtocolSettings(
    validation="cv",
    n_folds=10,
    test_frac=0.3,
    selection_split=True,
    selection_frac=0.3,
    train_cap=None,
)
RESULTS_DIR = Path("results/autoweka")
TASKS = ("classification", "regression")
ORACLE_FAMILIES = ("exdef", "grid")  # Table 4.2: their points' test errors are recorded


@functools.cache
def seed_datasets() -> dict[str, Any]:
    """``conf/autoweka/datasets.yaml``: the seed's datasets mapped to ours, by task (read once;
    every seed name a profile lists is looked up in it)."""
    return yaml.safe_load((AUTOWEKA_DIR / "datasets.yaml").read_text())


def resolve_dataset(name: str, openml: str = "cached", task: str | None = None) -> str:
    """The catalog name of ``name``: a seed dataset name (Tables 4.1, 4.6) mapped through
    ``conf/autoweka/datasets.yaml``, else any catalog name.

    A seed set with an OpenML id runs as ``openml:<id>`` when it is in the OpenML folder or
    ``openml`` is ``fetch`` (it is then downloaded on loading); otherwise as its offline copy
    (``ours``) if it has one. A set with neither raises ``ValueError`` naming the reason and, if
    it has an id, the command that fetches it. ``task`` picks the table of a name in both
    (Abalone); by default classification's.
    """
    if openml not in OPENML_MODES:
        raise ValueError(unknown_choice_message("openml mode", openml, OPENML_MODES))
    mapping = seed_datasets()
    for table in TASKS if task is None else (task,):
        entry = mapping.get(table, {}).get(name)
        if entry is None:
            continue
        online = f"openml:{entry['openml']}" if entry.get("openml") else None
        if online and (openml == "fetch" or openml_cached(online)):
            return online
        if entry.get("ours"):
            return str(entry["ours"])
        if online:
            raise ValueError(
                f"dataset {name!r} (seed 004, {table}) needs a download ({entry['reason']}): "
                f"online, fetch it with `python -m hpo.data fetch-openml {online[7:]}` "
                f"(into {openml_dir()}) or pass --openml fetch"
            )
        reason = entry["reason"]
        raise ValueError(f"dataset {name!r} (seed 004, {table}) is not available: {reason}")
    return resolve_name(name)


def load_methods() -> dict[str, MethodSpec]:
    """The methods of ``conf/autoweka/methods.yaml``."""
    return methods_from_config(yaml.safe_load((AUTOWEKA_DIR / "methods.yaml").read_text()))


@dataclass(frozen=True)
class AutowekaRun:
    """One run's settings (everything that determines its results but the code)."""

    method: str
    dataset: str
    budget: float
    budget_kind: str = "cpu"
    seed: int = 0
    repetition: int = 0
    time_limit: float | None = None
    memory_limit: float | None = None
    space_task: str | None = None  # None: the dataset's task
    learners: tuple[str, ...] | None = None
    max_ensemble: int = 5
    settings: Mapping[str, Any] = field(default_factory=dict)

    def filename(self) -> str:
        return f"{self.method}__seed{self.seed}__rep{self.repetition}.parquet"


def check_run(run: AutowekaRun, data_task: str | None = None) -> tuple[MethodSpec, TimeBudget]:
    """Validate ``run`` before anything is computed; ``ValueError`` with one line otherwise."""
    methods = load_methods()
    if run.method not in methods:
        raise ValueError(f"unknown method {run.method!r}; valid choices: {', '.join(methods)}")
    spec = methods[run.method]
    MethodSpec(spec.name, spec.family, spec.instances, {**spec.settings, **run.settings})
    budget = TimeBudget(run.budget * spec.budget_factor, run.budget_kind)
    EvaluationLimits(time_s=run.time_limit, memory_mb=run.memory_limit)
    if run.space_task is not None and run.space_task not in AUTOWEKA_COUNTS:
        raise ValueError(
            f"unknown space {run.space_task!r}; valid choices: {', '.join(AUTOWEKA_COUNTS)}"
        )
    if data_task is not None and run.space_task not in (None, data_task):
        raise ValueError(
            f"a {run.space_task} space cannot run on dataset {run.dataset!r}, a {data_task} "
            f"dataset; valid choice: --space {data_task}"
        )
    if not 1 <= run.max_ensemble <= 5:
        raise ValueError(
            f"--max-ensemble {run.max_ensemble}: ensembles take 1 to 5 base learners (seed §3)"
        )
    return spec, budget


def cash_space_for(run: AutowekaRun, task: str) -> CashSpace:
    """The CASH space of ``run`` for a dataset of ``task`` (inputs are min-max scaled, so
    non-negative: hpo/learners/autoweka.py)."""
    return build_cash_space(
        load_cash_library(),
        task,
        nonnegative_inputs=True,
        include=run.learners,
        max_ensemble=run.max_ensemble,
    )


def irace_budget(run: AutowekaRun, results_dir: Path | None) -> tuple[dict[str, int], str]:
    """I/F-Race's budget in evaluations (seed B1.6: the run's time budget over the mean
    evaluation time of random search on the same dataset) and where it came from.

    The mean is over the random-search runs already finished in ``results_dir`` on the run's
    dataset with its budget kind (``make reproduce-autoweka`` runs them first). No setting when
    the method is not I/F-Race or sets ``max_evaluations`` itself; with no such run, I/F-Race's
    default (``hpo.cash.irace``) applies and the source says so.
    """
    spec = load_methods()[run.method]
    if spec.family != "irace":
        return {}, ""
    if "max_evaluations" in {**spec.settings, **run.settings}:
        return {}, "max_evaluations set"
    seconds = run.budget * spec.budget_factor
    if run.budget_kind == "evaluations":
        return {"max_evaluations": max(1, int(seconds))}, "the budget in evaluations"
    finished = sorted((results_dir / run.dataset).glob("random__*.json")) if results_dir else []
    summaries = [json.loads(p.read_text()) for p in finished]
    same = [s for s in summaries if s["budget_kind"] == run.budget_kind and s["evaluations"]]
    if not same:
        return {}, "I/F-Race's default (no finished random-search run on this dataset)"
    spent = sum(s["cpu_seconds" if run.budget_kind == "cpu" else "wall_seconds"] for s in same)
    mean = spent / sum(s["evaluations"] for s in same)
    evaluations = max(1, int(seconds / mean))
    return {"max_evaluations": evaluations}, (
        f"{seconds:g} {run.budget_kind} s over random search's mean evaluation time "
        f"({mean:.3g} s, {len(same)} runs)"
    )


def execute(
    run: AutowekaRun,
    data: Dataset | None = None,
    data_dir: str | None = None,
    results_dir: Path | None = None,
) -> dict:
    """Run ``run``; the summary and the run's tables (not written). ``results_dir`` holds the
    finished runs I/F-Race's budget is calibrated from (:func:`irace_budget`)."""
    data = data if data is not None else load_dataset(run.dataset, data_dir)
    spec, budget = check_run(run, data.task)
    calibrated, budget_source = irace_budget(run, results_dir)
    cash = cash_space_for(run, data.task)
    limits = None
    if run.time_limit is not None or run.memory_limit is not None:
        limits = EvaluationLimits(time_s=run.time_limit, memory_mb=run.memory_limit)
    learner = f"autoweka_{data.task}"
    evaluator = Evaluator(
        data, PROTOCOL, lambda _: learner, FitGuard(), run.seed, run.repetition, limits=limits
    )
    try:
        evaluator.splits.check_sizes(data.name)
        instances = make_instances(evaluator, spec.instances, run.seed, data.name, run.repetition)
        objective = InstanceObjective(evaluator, instances)
        cv = objective
        if spec.instances != "cv":
            cv = InstanceObjective(
                evaluator, make_instances(evaluator, "cv", run.seed, data.name, run.repetition)
            )
        rng = seeding.rng(run.seed, data.name, run.repetition, "autoweka", run.method)
        settings = {**calibrated, **run.settings}
        started = time.perf_counter()
        optimizer = make_method(spec, cash, objective.n_instances, rng, **settings)
        setup_seconds = time.perf_counter() - started  # before the budget's clock starts
        result = run_cash(optimizer, objective, budget, cv_objective=cv)
        oracle = []
        if spec.family in ORACLE_FAMILIES:
            oracle = oracle_points(objective, result, data.task)
    finally:
        evaluator.close()
    summary = summarize(run, data, cash, budget, result)
    summary["setup_seconds"] = setup_seconds
    summary["oracle_points"] = oracle
    if budget_source:
        summary["max_evaluations"] = getattr(optimizer, "max_evaluations", None)
        summary["max_evaluations_source"] = budget_source
    return {"summary": summary, "result": result}


def in_table_units(loss: float, task: str) -> float:
    """A loss in the seed's tables' units: error % for classification, RMSE for regression (the
    losses are error rates and mean squared errors)."""
    return float(loss) * 100.0 if task == "classification" else float(np.sqrt(loss))


def oracle_points(objective: InstanceObjective, result: CashRun, task: str) -> list[dict[str, Any]]:
    """Table 4.2's oracle (seed §4.2.1): every configuration the run scored on all its
    instances, with its CV error (the mean over them), the fit seconds and evaluations they cost,
    and its test error after retraining on the whole training set (``objective.test_loss``), in
    the tables' units (error %, RMSE). It peeks at the test set: a bound, never a method's
    result; the limited grid (§4.1) is drawn from a grid run's points
    (analysis/autoweka/report.py)."""
    losses: dict[str, dict[int, float]] = {}
    seconds: dict[str, float] = {}
    for row in result.trace:
        losses.setdefault(row["config"], {})[row["instance"]] = row["loss"]
        seconds[row["config"]] = seconds.get(row["config"], 0.0) + row["fit_seconds"]
    n = max((len(folds) for folds in losses.values()), default=0)
    points = []
    for key, folds in losses.items():
        if len(folds) == n:
            config = dict(json.loads(key))
            points.append(
                {
                    "config": key,
                    "learner": str(config["learner"]),
                    "cv_error": in_table_units(float(np.mean(list(folds.values()))), task),
                    "test_error": in_table_units(objective.test_loss(config), task),
                    "seconds": seconds[key],
                    "evaluations": len(folds),
                }
            )
    return points


def describe_choice(config: Mapping[str, Any] | None) -> dict[str, str]:
    """The chosen learner, its meta-method base or ensemble members, and feature selection."""
    if config is None:
        return {"learner": "", "base": "", "fs_search": "", "fs_eval": ""}
    learner = str(config["learner"])
    if "meta_base" in config:
        base = str(config["meta_base"])
    elif "ens_size" in config:
        base = "+".join(str(config[f"ens_base_{i}"]) for i in range(1, int(config["ens_size"]) + 1))
    else:
        base = ""
    search = str(config.get("fs_search", "none"))
    evaluator = str(config.get("fs_eval_single", config.get("fs_eval_subset", "")))
    return {"learner": learner, "base": base, "fs_search": search, "fs_eval": evaluator}


def summarize(
    run: AutowekaRun, data: Dataset, cash: CashSpace, budget: TimeBudget, result: CashRun
) -> dict[str, Any]:
    trace = result.trace
    return {
        "method": run.method,
        "dataset": data.name,
        "task": data.task,
        "seed": run.seed,
        "repetition": run.repetition,
        "budget_seconds": budget.seconds,
        "budget_kind": budget.kind,
        **describe_choice(result.incumbent),
        "incumbent": json.dumps(result.incumbent, sort_keys=True, default=str),
        "cv_error": in_table_units(result.cv_error, data.task),
        "test_error": in_table_units(result.test_error, data.task),
        "spearman": result.spearman,
        "evaluations": len(trace),
        "configurations": len({row["config"] for row in trace}),
        "breaches": int(sum(row["breached"] for row in trace)),
        "wall_seconds": result.wall_seconds,
        "cpu_seconds": result.cpu_seconds,
        "optimizer_seconds": result.optimizer_seconds,
        "stopped_by": result.stopped_by,
        "space_hyperparameters": cash.n_hyperparameters,
        "error_unit": "error_%" if data.task == "classification" else "rmse",
    }


def results_table(result: CashRun) -> pd.DataFrame:
    """The trace and trajectory rows of a run."""
    trace = pd.DataFrame(result.trace).assign(row_type="trace")
    trajectory = pd.DataFrame(result.trajectory).assign(row_type="trajectory")
    return pd.concat([trace, trajectory], ignore_index=True)


def write(run: AutowekaRun, outcome: dict, results_dir: Path) -> Path:
    """Write the run's results file (atomically; never over a finished one) and its JSON."""
    path = results_dir / outcome["summary"]["dataset"] / run.filename()
    path.parent.mkdir(parents=True, exist_ok=True)
    arrow = pa.Table.from_pandas(results_table(outcome["result"]), preserve_index=False)
    summary = json.dumps(outcome["summary"], sort_keys=True, default=str).encode()
    metadata = {**(arrow.schema.metadata or {}), b"hpo.autoweka_summary": summary}
    _write_parquet(arrow.replace_schema_metadata(metadata), path, overwrite=False)
    _write_summary(path, summary)
    return path


def _write_summary(path: Path, summary: bytes) -> None:
    """The run's JSON summary beside its results file, written atomically (the report reads
    every JSON: a half-written one would break it)."""
    json_path = path.with_suffix(".json")
    write_file_atomically(json_path, lambda file: Path(file).write_bytes(summary), overwrite=True)


def finished(path: Path) -> bool:
    """Whether the run whose results file is ``path`` has finished (the file is written
    atomically, last but for its JSON summary). A summary lost to a kill between the two writes
    is written again from the results file's metadata, so the report does not miss the run."""
    if not path.exists():
        return False
    if not path.with_suffix(".json").exists():
        _write_summary(path, pq.read_schema(path).metadata[b"hpo.autoweka_summary"])
    return True


def load_profile(name: str) -> dict[str, Any]:
    """A profile of ``conf/autoweka/experiment.yaml`` (``ValueError`` naming the choices)."""
    profiles = yaml.safe_load((AUTOWEKA_DIR / "experiment.yaml").read_text())["profiles"]
    if name not in profiles:
        raise ValueError(f"unknown profile {name!r}; valid choices: {', '.join(profiles)}")
    return {"name": name, **profiles[name]}


def profile_datasets(
    profile: Mapping[str, Any], openml: str = "cached"
) -> tuple[list[str], dict[str, str]]:
    """The datasets of a profile that can run (catalog names, in order) and those that cannot
    (seed name -> why, with the command that fetches it when one exists)."""
    if openml not in OPENML_MODES:
        raise ValueError(unknown_choice_message("openml mode", openml, OPENML_MODES))
    names: list[str] = []
    not_run: dict[str, str] = {}
    listed = [(task, str(name)) for task in TASKS for name in profile.get(task, [])]
    for task, name in listed:
        try:
            dataset = resolve_dataset(name, openml, task)
        except ValueError as error:
            not_run[f"{name} ({task})"] = str(error)
            continue
        if dataset not in names:
            names.append(dataset)
    return names, not_run


def plan(
    profile: Mapping[str, Any], budget: float | None = None, openml: str = "cached"
) -> list[AutowekaRun]:
    """The runs of a profile (every dataset that can run x method x seed), each checked before
    any runs."""
    limits = profile.get("limits") or {}
    runs = []
    for dataset in profile_datasets(profile, openml)[0]:
        for method in profile["methods"]:
            for seed in range(int(profile["runs"])):
                run = AutowekaRun(
                    method=str(method),
                    dataset=dataset,
                    budget=float(budget or profile["budget"]),
                    budget_kind=str(profile["budget_kind"]),
                    seed=seed,
                    time_limit=limits.get("time_s"),
                    memory_limit=limits.get("memory_mb"),
                )
                check_run(run)
                runs.append(run)
    return runs


def cost(profile: Mapping[str, Any]) -> str:
    """The core-hours a profile asks for (budgets only; retraining and the diagnostic add a
    little), beside the seed's; OpenML sets counted as if fetched, and those that cannot run at
    all named."""
    methods = load_methods()
    runs = plan(profile, openml="fetch")
    seconds = sum(r.budget * methods[r.method].budget_factor for r in runs)
    datasets = len({r.dataset for r in runs})
    not_run = profile_datasets(profile, "fetch")[1]
    return (
        f"profile {profile['name']}: {len(runs)} runs on {datasets} datasets, "
        f"{seconds / 3600:.1f} core-hours of {profile['budget_kind']} budget (the seed's design: "
        "25 runs x 30 CPU h per method and dataset, about 450,000 CPU h in all, spec C3)"
        + (f"; not runnable: {', '.join(not_run)}" if not_run else "")
    )


def reproduce(
    profile_name: str,
    results_root: Path,
    data_dir: str | None,
    budget: float | None = None,
    openml: str = "cached",
    stage: str = "all",
    shard: int = 0,
    n_shards: int = 1,
    report: bool = True,
) -> Path | None:
    """Run every missing run of a profile (of one stage and shard: experiments/autoweka_cluster),
    then write its report (which lists the datasets that did not run, and why)."""
    profile = load_profile(profile_name)
    runs = plan(profile, budget, openml)
    methods = load_methods()
    runs = select(runs, [methods[r.method].family for r in runs], stage, shard, n_shards)
    not_run = profile_datasets(profile, openml)[1]
    for name, why in not_run.items():
        print(f"not run: {name}: {why}", flush=True)
    results_dir = results_root / profile_name / "runs"
    for i, run in enumerate(runs, 1):
        path = results_dir / run.dataset / run.filename()
        if finished(path):
            continue
        outcome = execute(run, data_dir=data_dir, results_dir=results_dir)
        write(run, outcome, results_dir)
        s = outcome["summary"]
        print(
            f"[{i}/{len(runs)}] {run.method} {run.dataset} seed {run.seed}: {s['learner']} "
            f"cv {s['cv_error']:.4g} test {s['test_error']:.4g} ({s['wall_seconds']:.0f} s)",
            flush=True,
        )
    return report_of(profile, results_root, not_run) if report else None


def report_of(profile: Mapping[str, Any], results_root: Path, not_run: Mapping[str, str]) -> Path:
    """Write the report of a profile's finished runs (``results_root/<profile>/report``)."""
    from analysis.autoweka.report import write_report

    name = str(profile["name"])
    return write_report(
        results_root / name / "runs",
        results_root / name / "report",
        seed_datasets(),
        profile,
        int(profile.get("best_of", 4)),
        int(profile.get("bootstrap", 1000)),
        not_run=not_run,
    )


def slurm(profile: Mapping[str, Any], n_shards: int, extra_args: Sequence[str] = ()) -> str:
    """The SLURM submission of a profile (experiments/autoweka_cluster.slurm_script); OpenML
    sets are planned as fetched (each task downloads what is not in the OpenML folder)."""
    methods = load_methods()
    runs = plan(profile, openml="fetch")
    seconds: dict[str, list[float]] = {"1": [], "2": []}
    for run in runs:
        spec = methods[run.method]
        seconds[stage_of(spec.family)].append(run.budget * spec.budget_factor)
    return slurm_script(profile, seconds, n_shards, ["--openml", "fetch", *extra_args])


def _settings(pairs: Sequence[str]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--set {pair!r}: expected name=value")
        name, value = pair.split("=", 1)
        out[name] = yaml.safe_load(value)
    return out


OPENML_HELP = (
    "cached (default): seed sets on OpenML run only from the OpenML folder; fetch: download them"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.autoweka", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    space = sub.add_parser("space", help="print the CASH space's size beside Auto-WEKA's")
    space.add_argument("--task", default="classification")
    for command, purpose in (
        ("reproduce", "run a profile's missing runs, then write its report"),
        ("cost", "print a profile's core-hours"),
        ("report", "write a profile's report from its finished runs"),
        ("slurm", "print a profile's SLURM submission (stages, shards, time limits)"),
    ):
        other = sub.add_parser(command, help=f"{purpose} (conf/autoweka/experiment.yaml)")
        other.add_argument("--profile", default="smoke")
        other.add_argument("--results-dir", default=str(RESULTS_DIR))
        if command == "reproduce":
            other.add_argument("--data-dir", default=None)
            other.add_argument("--budget", type=float, default=None, help="override (seconds)")
            other.add_argument("--stage", default="all", help="all | 1 (all but I/F-Race) | 2")
            other.add_argument("--shard", type=int, default=0)
            other.add_argument("--no-report", action="store_true")
        if command in ("reproduce", "report"):
            other.add_argument("--openml", default="cached", help=OPENML_HELP)
        if command in ("reproduce", "slurm"):
            other.add_argument("--n-shards", type=int, default=1)
    go = sub.add_parser("run", help="one method on one dataset")
    go.add_argument("--method", required=True)
    go.add_argument("--dataset", required=True)
    go.add_argument("--budget", type=float, required=True, help="seconds")
    go.add_argument("--budget-kind", default="cpu")
    go.add_argument("--seed", type=int, default=0)
    go.add_argument("--repetition", type=int, default=0)
    go.add_argument("--time-limit", type=float, default=None, help="seconds per fit")
    go.add_argument("--memory-limit", type=float, default=None, help="MB per fit")
    go.add_argument(
        "--space", default=None, help="classification | regression (default: the dataset's)"
    )
    go.add_argument("--learners", default=None, help="comma-separated learners to keep")
    go.add_argument("--max-ensemble", type=int, default=5)
    go.add_argument("--set", nargs="*", default=[], help="method settings, name=value")
    go.add_argument("--results-dir", default=str(RESULTS_DIR))
    go.add_argument("--data-dir", default=None)
    go.add_argument("--openml", default="cached", help=OPENML_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        if args.command == "space":
            cash = build_cash_space(load_cash_library(), args.task, nonnegative_inputs=True)
            print(cash.summary())
            if cash.filtered:
                print("filtered: " + ", ".join(cash.filtered))
            return 0
        if args.command == "cost":
            print(cost(load_profile(args.profile)))
            return 0
        if args.command == "slurm":
            extra = ["--results-dir", args.results_dir]
            print(slurm(load_profile(args.profile), args.n_shards, extra), end="")
            return 0
        if args.command == "report":
            profile = load_profile(args.profile)
            not_run = profile_datasets(profile, args.openml)[1]
            print(f"report: {report_of(profile, Path(args.results_dir), not_run)}")
            return 0
        if args.command == "reproduce":
            if args.budget is not None and not args.budget > 0:
                raise ValueError(f"budget must be > 0 seconds, got {args.budget}")
            started = time.perf_counter()
            report = reproduce(
                args.profile,
                Path(args.results_dir),
                args.data_dir,
                args.budget,
                args.openml,
                args.stage,
                args.shard,
                args.n_shards,
                not args.no_report,
            )
            minutes = (time.perf_counter() - started) / 60
            print(f"report: {report or 'not written (--no-report)'} ({minutes:.1f} min)")
            return 0
        run = AutowekaRun(
            method=args.method,
            dataset=resolve_dataset(args.dataset, args.openml, args.space),
            budget=args.budget,
            budget_kind=args.budget_kind,
            seed=args.seed,
            repetition=args.repetition,
            time_limit=args.time_limit,
            memory_limit=args.memory_limit,
            space_task=args.space,
            learners=tuple(args.learners.split(",")) if args.learners else None,
            max_ensemble=args.max_ensemble,
            settings=_settings(args.set),
        )
        check_run(run)
        if run.learners is not None:
            cash_space_for(run, run.space_task or "classification")
        path = Path(args.results_dir) / run.dataset / run.filename()
        if finished(path):
            print(f"already finished, not run again (results are never overwritten): {path}")
            return 0
        outcome = execute(run, data_dir=args.data_dir, results_dir=Path(args.results_dir))
    except (ValueError, SpaceError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    path = write(run, outcome, Path(args.results_dir))
    summary = outcome["summary"]
    columns = [
        "method",
        "dataset",
        "learner",
        "base",
        "fs_search",
        "fs_eval",
        "cv_error",
        "test_error",
        "evaluations",
        "wall_seconds",
    ]
    print(
        pd.DataFrame([summary])[columns].to_string(index=False, float_format=lambda v: f"{v:.4g}")
    )
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
