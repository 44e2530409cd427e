"""What is specific to seed 004 (Thornton 2014, Auto-WEKA) in the one pipeline.

A seed-004 run is an ordinary run of ``run.py``: one of the methods of ``conf/optimizer/aw_*.yaml``
on a CASH space (``conf/space/autoweka_classification.yaml``, ``autoweka_regression.yaml``) with
the seed's protocol (``conf/protocol/autoweka.yaml``), under a budget in evaluations
(``budget``) and in seconds (``time_budget``, ``time_budget_kind: cpu | wall``) with per-fit
limits (``limits.*``)::

    python run.py optimizer=aw_smac dataset=car time_budget=30 time_budget_kind=wall \\
        limits.enabled=true limits.time_s=5 limits.memory_mb=3072
    python run.py -m optimizer=aw_random,aw_smac,aw_tpe dataset=car time_budget=30

Such a run's trials over instances, and its tables, are :mod:`experiments.run.instances`'s
(the runner hands it every optimizer that races configurations over instances). This module
keeps what the study adds around its runs: :func:`make_method` builds a method as a run
builds it (benchmarks, tests), :func:`irace_budget` is I/F-Race's budget calibrated from random
search's finished runs (the ``irace`` part of ``conf/experiment/autoweka.yaml``, which runs
after them). Losses are stored as every run stores them (error rates, mean squared errors); the
report converts them to the seed's units (:func:`analysis.autoweka.report.in_table_units`).

The command line of the seed's first implementation, ``python -m experiments.autoweka``, is
gone: it prints the command that replaces it and exits with code 2.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from experiments.configuration.spaces import SPACE_DIR
from hpo.cash.space import CashSpace
from hpo.optimizers import make_optimizer
from hpo.optimizers.instances import CashOptimizer

NEW_COMMAND = (
    "python -m experiments.autoweka is replaced by `python run.py optimizer=aw_smac "
    "space=autoweka_classification dataset=car time_budget=30` (one run) and "
    "`make reproduce-autoweka PROFILE=smoke` (the sweep and its report); docs/autoweka.md"
)


def make_method(
    method: str,
    cash: CashSpace,
    n_instances: int,
    rng: np.random.Generator,
    budget: int = 1000,
    **extra: Any,
) -> CashOptimizer:
    """The optimiser of ``conf/optimizer/<method>.yaml`` (``aw_smac``, or the seed's name
    ``smac``), built through the registry as a run builds it (``extra`` settings over its own)
    and started on ``cash`` with ``n_instances`` instances (benchmarks, tests)."""
    name = method if method.startswith("aw_") else f"aw_{method}"
    config = yaml.safe_load((SPACE_DIR.parent / "optimizer" / f"{name}.yaml").read_text())
    settings = {**dict(config.get("settings") or {}), **extra}
    optimizer = make_optimizer(config["family"], cash.space, budget, rng, **settings)
    assert isinstance(optimizer, CashOptimizer)
    optimizer.start(cash, n_instances)
    return optimizer


def irace_budget(time_budget: float, kind: str, random_runs: Sequence[Path]) -> tuple[int, str]:
    """I/F-Race's budget in evaluations (seed B1.6: the run's time budget over the mean
    evaluation time of random search on the same dataset) and where it came from: the mean is
    over ``random_runs`` (finished results files of runs with a time budget of ``kind``)."""
    spent = count = 0.0
    for path in random_runs:
        first = pd.read_parquet(path, columns=[f"{kind}_seconds", "evaluations"]).iloc[0]
        spent += float(first[f"{kind}_seconds"])
        count += int(first["evaluations"])
    if not count:
        raise ValueError("I/F-Race's budget needs a finished random-search run with evaluations")
    mean = spent / count
    return max(1, int(time_budget / mean)), (
        f"{time_budget:g} {kind} s over random search's mean evaluation time "
        f"({mean:.3g} s, {len(random_runs)} runs)"
    )


CALIBRATED_FROM = "aw_random"


def irace_calibrated(spec: Any, finished: Sequence[Any]) -> Any:
    """``spec`` (an I/F-Race run's :class:`~experiments.run.runner.RunSpec`) with
    ``max_evaluations`` calibrated from the finished random-search runs among ``finished`` (the
    sweep's planned runs of the part it runs after, on its dataset) whose time budget is of its
    kind (:func:`irace_budget`); as it is when it has no time budget, sets ``max_evaluations``
    itself, or no such run finished (I/F-Race then takes the run's evaluation budget). The
    ``derive`` of conf/experiment/autoweka.yaml's I/F-Race parts: the calibrated number is part
    of the run's identity."""
    settings = dict(spec.method.settings)
    if spec.budget.seconds is None or "max_evaluations" in settings:
        return spec
    random = [
        run.path
        for run in finished
        if run.spec.method.name == CALIBRATED_FROM and run.spec.budget.clock == spec.budget.clock
    ]
    if not random:
        return spec
    factor = float(settings.get("budget_factor", 1.0))
    evaluations, _ = irace_budget(spec.budget.seconds * factor, spec.budget.clock, random)
    method = dataclasses.replace(spec.method, settings={**settings, "max_evaluations": evaluations})
    return dataclasses.replace(spec, method=method)


def main(argv: Sequence[str] | None = None) -> int:
    """The old command line: one line naming the new one, exit code 2."""
    print(f"error: {NEW_COMMAND}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
