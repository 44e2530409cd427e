"""Seed 004 (Thornton 2014, Auto-WEKA) runs: one method by name on one dataset under a time
budget, with per-evaluation limits, written as one results file.

    python -m experiments.autoweka space [--task classification]
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
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import yaml

from experiments.results import _write_parquet
from experiments.spaces import AUTOWEKA_DIR, load_cash_library
from hpo import seeding
from hpo.cash.budget import TimeBudget
from hpo.cash.methods import MethodSpec, make_method, methods_from_config
from hpo.cash.objective import InstanceObjective, make_instances
from hpo.cash.run import CashRun, run_cash
from hpo.cash_space import AUTOWEKA_COUNTS, CashSpace, build_cash_space
from hpo.datasets import Dataset, DatasetError, load_dataset, resolve_name
from hpo.evaluation import Evaluator
from hpo.isolation import EvaluationLimits
from hpo.learners import FitGuard
from hpo.protocol import ProtocolSettings
from hpo.space import SpaceError

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


def execute(run: AutowekaRun, data: Dataset | None = None, data_dir: str | None = None) -> dict:
    """Run ``run``; the summary and the run's tables (not written)."""
    data = data if data is not None else load_dataset(run.dataset, data_dir)
    spec, budget = check_run(run, data.task)
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
        optimizer = make_method(spec, cash, objective.n_instances, rng, **dict(run.settings))
        result = run_cash(optimizer, objective, budget, cv_objective=cv)
    finally:
        evaluator.close()
    return {"summary": summarize(run, data, cash, budget, result), "result": result}


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
    scale = 100.0 if data.task == "classification" else 1.0
    root = np.sqrt if data.task == "regression" else (lambda x: x)  # RMSE for regression
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
        "cv_error": float(root(result.cv_error)) * scale,
        "test_error": float(root(result.test_error)) * scale,
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
    path.with_suffix(".json").write_text(summary.decode())
    return path


def _settings(pairs: Sequence[str]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--set {pair!r}: expected name=value")
        name, value = pair.split("=", 1)
        out[name] = yaml.safe_load(value)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.autoweka", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    space = sub.add_parser("space", help="print the CASH space's size beside Auto-WEKA's")
    space.add_argument("--task", default="classification")
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
        run = AutowekaRun(
            method=args.method,
            dataset=resolve_name(args.dataset),
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
        if path.exists():
            print(f"already finished, not run again (results are never overwritten): {path}")
            return 0
        outcome = execute(run, data_dir=args.data_dir)
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
