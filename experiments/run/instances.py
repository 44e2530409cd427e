"""The trials of an optimizer that races configurations over instances (Thornton 2014,
Auto-WEKA): each proposal is evaluated on the one instance it names, through the one trial loop
(:mod:`experiments.run.trial_loop`), every evaluation and every change of incumbent stamped
with the clock (seed §4.1, §4.3). :func:`run_on_instances` is the runner's run of such an
optimizer: it builds the instances, the optimizer (on the stream of the method's paper name) and
the objectives, runs :func:`run_cash`, and returns the run's tables: its trace (one row per
evaluation), its trajectory, its final choice and, for Ex-Def and grid search, Table 4.2's
oracle points.

The budget is a number of evaluations (one configuration on one instance; what makes a run
bit-identical for the same seed) and optionally seconds of CPU or wall time. After the loop,
outside the budget [decision, docs/autoweka.md]: the final incumbent's k-fold CV error on the
optimiser's 70 % (Table 4.3's "training performance"), its test error after retraining on the
whole training set (Table 4.4), and for each trajectory point its error on the 30 % the
optimiser never saw (the overfitting diagnostic, §4.2.3), with the Spearman correlation between
the two sequences (Table 4.5).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from experiments.configuration.spaces import cash_space, check_space_task
from experiments.configuration.spec import RunSpec
from experiments.run.run_tables import RunResult
from experiments.run.trial_loop import Progress, run_trials
from hpo import seeding
from hpo.cash import paper_method_name
from hpo.cash.space import CashSpace
from hpo.data.catalog import Dataset, load_dataset
from hpo.evaluation.clock import Clock
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.instances import InstanceObjective, InstanceResult, config_id, make_instances
from hpo.optimizers import Proposal, make_optimizer
from hpo.optimizers.instances import CashOptimizer

ORACLE_FAMILIES = ("cash_exdef", "cash_grid")  # Table 4.2: their points' test errors are recorded


@dataclass
class CashRun:
    """The trace (one row per evaluation), the trajectory (one row per new incumbent) and the
    final incumbent's numbers."""

    trace: list[dict[str, Any]] = field(default_factory=list)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    incumbent: Mapping[str, Any] | None = None
    cv_error: float = float("nan")
    test_error: float = float("nan")
    spearman: float = float("nan")
    optimizer_seconds: float = 0.0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    stopped_by: str = "budget"


class InstanceTrials:
    """The trials of an optimizer that races configurations over instances
    (:func:`experiments.run.trial_loop.run_trials`): each proposal is evaluated on the one
    instance it names; a trace row per evaluation, a trajectory row per new incumbent, each
    stamped with the clock (seed §4.1, §4.3)."""

    def __init__(
        self, optimizer: CashOptimizer, objective: InstanceObjective, clock: Clock, run: CashRun
    ) -> None:
        self.optimizer, self.objective, self.clock, self.run = optimizer, objective, clock, run
        self.current: str | None = None  # the incumbent's configuration, as config_id gives it

    def propose(self, iteration: int) -> Proposal:
        return self.optimizer.ask()

    def evaluate(self, proposal: Proposal) -> InstanceResult:
        assert proposal.config is not None and proposal.instance is not None
        return self.objective.evaluate(proposal.config, proposal.instance)

    def tell(self, proposal: Proposal, result: InstanceResult) -> float:
        self.optimizer.tell(proposal, result.loss)
        return result.loss

    def record(
        self, iteration: int, proposal: Proposal, result: InstanceResult, optimizer_seconds: float
    ) -> None:
        assert proposal.config is not None
        run, clock = self.run, self.clock
        run.optimizer_seconds += optimizer_seconds
        run.trace.append(
            {
                "wall": clock.wall(),
                "cpu": clock.cpu(),
                "config": config_id(proposal.config),
                "learner": str(proposal.config["learner"]),
                "instance": proposal.instance,
                "loss": result.loss,
                "fit_seconds": result.seconds,
                "breached": result.breached,
                "skipped": result.skipped,
                "failure": result.failure or "",
            }
        )
        incumbent = self.optimizer.incumbent()
        if incumbent is not None and config_id(incumbent) != self.current:
            self.current = config_id(incumbent)
            run.trajectory.append(
                {
                    "evaluation": len(run.trace),
                    "wall": clock.wall(),
                    "cpu": clock.cpu(),
                    "config": self.current,
                    "estimate": self.objective.estimate(incumbent),
                    "n_instances": self.objective.n_evaluated(incumbent),
                }
            )


def run_cash(
    optimizer: CashOptimizer,
    objective: InstanceObjective,
    evaluations: int,
    time_budget: float | None = None,
    time_kind: str = "wall",
    cv_objective: InstanceObjective | None = None,
    diagnostic: bool = True,
    progress: Progress | None = None,
) -> CashRun:
    """Run ``optimizer`` on ``objective`` through the one trial loop for at most
    ``evaluations`` evaluations and ``time_budget`` seconds of ``time_kind`` (the loop stops
    before an evaluation that would start past either; the one running then is finished).
    After the loop, outside the budget [decision, docs/autoweka.md]: the final incumbent's
    k-fold CV error on the optimiser's 70 % (Table 4.3's "training performance";
    ``cv_objective``, default ``objective`` itself, for CV instances; folds the optimiser did
    not evaluate are fitted now), its test error after retraining on the whole training set
    (Table 4.4), and with ``diagnostic`` each trajectory point's error on the 30 % the
    optimiser never saw (§4.2.3) and the Spearman correlation of the two (Table 4.5)."""
    evaluator = objective.evaluator
    evaluator.warm_up()  # the fit child's start is not charged to the budget
    clock = Clock(time_kind, lambda: evaluator.child_cpu_seconds)
    run = CashRun()
    trials = InstanceTrials(optimizer, objective, clock, run)
    run.stopped_by = run_trials(trials, evaluations, time_budget, clock, progress)
    run.wall_seconds, run.cpu_seconds = clock.wall(), clock.cpu()
    run.incumbent = optimizer.incumbent()
    if run.incumbent is not None:
        final = cv_objective or objective
        run.cv_error = final.mean_loss(run.incumbent)
        run.test_error = objective.test_loss(run.incumbent)
        if diagnostic:
            _diagnostic(run, objective)
    return run


def _diagnostic(run: CashRun, objective: InstanceObjective) -> None:
    """Each trajectory point's error on the 30 % diagnostic split and the Spearman correlation
    of the two sequences (seed §4.2.3; NaN with fewer than 3 points or a constant sequence)."""
    for point in run.trajectory:
        config = dict(json.loads(point["config"]))
        point["diagnostic"] = objective.diagnostic_loss(config)
    if len(run.trajectory) >= 3:
        estimates = [p["estimate"] for p in run.trajectory]
        diagnostics = [p["diagnostic"] for p in run.trajectory]
        if np.ptp(estimates) > 0 and np.ptp(diagnostics) > 0:
            run.spearman = float(spearmanr(estimates, diagnostics).statistic)


def run_on_instances(
    spec: RunSpec,
    data: Dataset | None = None,
    data_dir: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``spec``, whose optimizer races over instances (see the module; the runner hands
    it every such run): its trace, its outcome rows and its summary numbers as the run's
    provenance, which the runner writes as every run's. ``budget_factor`` (SMAC-Long)
    multiplies the budgets in evaluations and seconds."""
    data = data if data is not None else load_dataset(spec.task.dataset, data_dir)
    cash = cash_space(spec.task.space)
    check_space_task(cash.space, data.task, data.name)
    settings = spec.method.settings
    factor = float(settings.get("budget_factor", 1.0))
    evaluations = max(1, int(spec.budget.evaluations * factor))
    kind = str(settings.get("instances", "cv"))
    evaluator = Evaluator(
        data,
        spec.task.protocol,
        cash.space.learner_of,
        spec.task.fit_guard,
        spec.seed,
        spec.repetition,
        limits=spec.budget.limits,
    )
    try:
        evaluator.splits.check_sizes(data.name)
        objective, cv = _objectives(spec, data, evaluator, kind)
        started = time.perf_counter()
        optimizer = _started(spec, data, cash, evaluations, objective.n_instances)
        setup_seconds = time.perf_counter() - started  # before the budget's clock starts
        time_budget = None if spec.budget.seconds is None else spec.budget.seconds * factor
        clock = spec.budget.clock
        result = run_cash(optimizer, objective, evaluations, time_budget, clock, cv, True, progress)
        oracle = (
            oracle_points(objective, result) if spec.method.optimizer in ORACLE_FAMILIES else []
        )
    finally:
        evaluator.close()
    provenance = {
        "dataset_sha256": data.checksum(),
        **evaluator.splits.sizes(),
        "task": data.task,
        "space_hyperparameters": cash.n_hyperparameters,
        **_summary(result, optimizer, setup_seconds),
    }
    return RunResult(trace_frame(result), outcomes_frame(spec, result, oracle), None, provenance)


def _started(
    spec: RunSpec, data: Dataset, cash: CashSpace, evaluations: int, n_instances: int
) -> CashOptimizer:
    """The run's optimizer, built once on its own stream and started on ``cash`` with
    ``n_instances``."""
    rng = seeding.rng(
        spec.seed,
        data.stream_name,
        spec.repetition,
        "autoweka",
        paper_method_name(spec.method.name),
    )
    optimizer = make_optimizer(
        spec.method.optimizer, cash.space, evaluations, rng, **dict(spec.method.settings)
    )
    assert isinstance(optimizer, CashOptimizer)
    optimizer.start(cash, n_instances)
    return optimizer


def _objectives(
    spec: RunSpec, data: Dataset, evaluator: Evaluator, kind: str
) -> tuple[InstanceObjective, InstanceObjective]:
    """The objective over the run's ``kind`` of instances, and the one over CV folds that gives
    the final incumbent's CV error (the same one for CV instances)."""

    def over(kind_of: str) -> InstanceObjective:
        instances = make_instances(evaluator, kind_of, spec.seed, data.stream_name, spec.repetition)
        return InstanceObjective(evaluator, instances)

    objective = over(kind)
    return objective, objective if kind == "cv" else over("cv")


def _summary(result: CashRun, optimizer: CashOptimizer, setup_seconds: float) -> dict[str, Any]:
    """The run's summary numbers, kept in its provenance."""
    trace = pd.DataFrame(result.trace)
    summary: dict[str, Any] = {
        "spearman": result.spearman,
        "evaluations": len(trace),
        "configurations": int(trace["config"].nunique()) if len(trace) else 0,
        "breaches": int(trace["breached"].sum()) if len(trace) else 0,
        "wall_seconds": result.wall_seconds,
        "cpu_seconds": result.cpu_seconds,
        "optimizer_seconds_total": result.optimizer_seconds,
        "setup_seconds": setup_seconds,
        "stopped_by": result.stopped_by,
    }
    if hasattr(optimizer, "max_evaluations"):
        summary["max_evaluations"] = int(optimizer.max_evaluations)
    return summary


def trace_frame(result: CashRun) -> pd.DataFrame:
    """One row per evaluation (a configuration on one instance), typed."""
    rows = result.trace
    return pd.DataFrame(
        {
            "iteration": pd.Series(range(1, len(rows) + 1), dtype="int64"),
            "valid_loss": pd.Series([r["loss"] for r in rows], dtype="float64"),
            "instance": pd.Series([r["instance"] for r in rows], dtype="int64"),
            "learner": pd.Series([r["learner"] for r in rows], dtype="string"),
            "config": pd.Series([r["config"] for r in rows], dtype="string"),
            "fit_seconds": pd.Series([r["fit_seconds"] for r in rows], dtype="float64"),
            "breached": pd.Series([r["breached"] for r in rows], dtype="boolean"),
            "skipped": pd.Series([r["skipped"] for r in rows], dtype="boolean"),
            "failure": pd.Series([r["failure"] or None for r in rows], dtype="string"),
            "elapsed_seconds": pd.Series([r["wall"] for r in rows], dtype="float64"),
            "cpu_seconds": pd.Series([r["cpu"] for r in rows], dtype="float64"),
        }
    )


OUTCOME_COLUMNS = {
    "method": "string",
    "rule": "string",  # trajectory | final | oracle
    "iteration": "Int64",  # the evaluation after which the incumbent changed (else: the last)
    "incumbent_valid_loss": "float64",  # its mean over the instances so far (final: 10-fold CV)
    "incumbent_selection_loss": "float64",  # on the 30 % diagnostic split (§4.2.3)
    "n_instances": "Int64",
    "learner": "string",
    "base": "string",
    "fs_search": "string",
    "fs_eval": "string",
    "test_error": "float64",
    "fit_seconds": "float64",
    "elapsed_seconds": "float64",
    "cpu_seconds": "float64",
    "config": "string",
}


def outcomes_frame(
    spec: RunSpec, result: CashRun, oracle: Sequence[Mapping[str, Any]]
) -> pd.DataFrame:
    """The run's outcome rows: its trajectory (each new incumbent, with its diagnostic error),
    its final choice (CV error over every fold, test error) and the oracle points (Table 4.2)."""
    rows: list[dict[str, Any]] = []
    for point in result.trajectory:
        config = dict(json.loads(point["config"]))
        rows.append(
            {
                "rule": "trajectory",
                "iteration": point["evaluation"],
                "incumbent_valid_loss": point["estimate"],
                "incumbent_selection_loss": point.get("diagnostic", np.nan),
                "n_instances": point["n_instances"],
                "elapsed_seconds": point["wall"],
                "cpu_seconds": point["cpu"],
                "config": point["config"],
                **describe_choice(config),
            }
        )
    if result.incumbent is not None:
        rows.append(
            {
                "rule": "final",
                "iteration": len(result.trace),
                "incumbent_valid_loss": result.cv_error,
                "test_error": result.test_error,
                "elapsed_seconds": result.wall_seconds,
                "cpu_seconds": result.cpu_seconds,
                "config": json.dumps(result.incumbent, sort_keys=True, default=str),
                **describe_choice(result.incumbent),
            }
        )
    for point in oracle:  # known once the run's evaluations are done
        rows.append({"rule": "oracle", "iteration": len(result.trace), **point})
    frame = pd.DataFrame(
        {
            name: pd.Series([r.get(name) for r in rows], dtype=kind)
            for name, kind in OUTCOME_COLUMNS.items()
            if name != "method"
        }
    )
    frame.insert(0, "method", pd.Series([spec.method.name] * len(rows), dtype="string"))
    return frame


def oracle_points(objective: InstanceObjective, result: CashRun) -> list[dict[str, Any]]:
    """Table 4.2's oracle (seed §4.2.1): every configuration the run scored on all its
    instances, with its CV loss (the mean over them), the fit seconds and evaluations they cost,
    and its test loss after retraining on the whole training set (``objective.test_loss``). It
    peeks at the test set: a bound, never a method's result; the limited grid (§4.1) is drawn
    from a grid run's points (analysis/autoweka/report.py)."""
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
                    "incumbent_valid_loss": float(np.mean(list(folds.values()))),
                    "test_error": objective.test_loss(config),
                    "fit_seconds": seconds[key],
                    "n_instances": len(folds),
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
