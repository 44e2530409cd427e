"""The seed-004 part of a run (Thornton 2014): an optimiser asks (configuration, instance) pairs
until its budget is spent, every evaluation and every change of incumbent stamped with the clock
(seed §4.1, §4.3); ``experiments.autoweka.run_on_instances`` builds it from a run's
:class:`~experiments.runner.RunSpec`.

The budget is a number of evaluations (one configuration on one instance; what makes a run
bit-identical for the same seed) and optionally seconds of CPU or wall time. The loop stops
before an evaluation that would start past either (an evaluation running when the time budget
ends is finished; its time is bounded by the per-evaluation limits). After the
loop, outside the budget [decision, docs/autoweka.md]: the final incumbent's k-fold CV error on
the optimiser's 70 % (Table 4.3's "training performance"; folds the optimiser did not evaluate
are fitted now), its test error after retraining on the whole training set (Table 4.4), and for
each trajectory point its error on the 30 % the optimiser never saw (the overfitting diagnostic,
§4.2.3), with the Spearman correlation between the two sequences (Table 4.5).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from hpo.evaluation.clock import Clock
from hpo.evaluation.instances import InstanceObjective, config_id
from hpo.optimizers.instances import CashOptimizer


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


def run_cash(
    optimizer: CashOptimizer,
    objective: InstanceObjective,
    evaluations: int,
    time_budget: float | None = None,
    time_kind: str = "wall",
    cv_objective: InstanceObjective | None = None,
    diagnostic: bool = True,
    progress: Callable[[int, float], None] | None = None,
) -> CashRun:
    """Run ``optimizer`` on ``objective`` for at most ``evaluations`` evaluations and
    ``time_budget`` seconds of ``time_kind`` (see the module). ``cv_objective`` gives the final CV
    error (default: ``objective`` itself, for CV instances); ``progress`` hears of every
    evaluation (its number and loss)."""
    evaluator = objective.evaluator
    evaluator.warm_up()  # the fit child's start is not charged to the budget
    clock = Clock(time_kind, lambda: evaluator.child_cpu_seconds)
    run = CashRun()
    current: str | None = None
    while len(run.trace) < evaluations:
        if time_budget is not None and clock.spent() >= time_budget:
            break
        started = time.perf_counter()
        try:
            proposal = optimizer.ask()
        except StopIteration:
            run.stopped_by = "finished"
            break
        asked = time.perf_counter() - started
        assert proposal.config is not None and proposal.instance is not None
        result = objective.evaluate(proposal.config, proposal.instance)
        started = time.perf_counter()
        optimizer.tell(proposal, result.loss)
        run.optimizer_seconds += asked + time.perf_counter() - started
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
        if progress is not None:
            progress(len(run.trace), result.loss)
        incumbent = optimizer.incumbent()
        if incumbent is not None and config_id(incumbent) != current:
            current = config_id(incumbent)
            run.trajectory.append(
                {
                    "evaluation": len(run.trace),
                    "wall": clock.wall(),
                    "cpu": clock.cpu(),
                    "config": current,
                    "estimate": objective.estimate(incumbent),
                    "n_instances": objective.n_evaluated(incumbent),
                }
            )
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
