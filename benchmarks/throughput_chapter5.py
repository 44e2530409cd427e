"""Projected cost of Chapter 5's ``paper`` profile and the optimizers' share of it.

Two measurements, single-threaded, then a projection (thesis §5.5: 24 datasets × 10 repetitions
× 11 methods × 200 evaluations of 5-fold CV on the nine-classifier space of Table 5.1):

1. **Evaluation cost per dataset**: a random-search run of ``--eval-budget`` evaluations on each
   dataset the paper profile runs here (19 offline: the 18 UCI sets and the substitute of OpenML
   46), Chapter 5's protocol. Its mean seconds per evaluation (5 fits) and its retraining seconds
   stand for every method on that dataset. [approximation] Model-based methods concentrate on
   some classifiers (GP-cond-ls mostly random forests and RBF-SVMs, thesis Fig 5.8), whose fits
   may cost more or less than random search's uniform mix.
2. **Optimizer cost per method**: each of the eleven methods on pima at ``--opt-budget`` (200)
   evaluations; its optimizer seconds over 200 evaluations are the measured steps plus the later
   ones extrapolated from the trend of its step times (``throughput.optimizer_seconds_at``).

    python benchmarks/throughput_chapter5.py [--eval-budget 10] [--opt-budget 200] [--quick]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per run: core-seconds = wall seconds

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import optimizer_seconds_at  # noqa: E402

from experiments.configuration.compose import compose_run  # noqa: E402
from experiments.run.runner import execute_run  # noqa: E402
from experiments.sweep import load_experiment, plan  # noqa: E402
from hpo.data.catalog import load_dataset  # noqa: E402

PAPER_BUDGET = 200


def _run(method: str, dataset: str, budget: int, data) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    overrides = [f"optimizer={method}", f"dataset={dataset}", f"budget={budget}"]
    overrides += ["space=sklearn_cash", "protocol=chapter5", "seed=0", "repetition=0"]
    if method == "cma":
        overrides.append("optimizer.settings.popsize=auto")
    started = time.perf_counter()
    trace, outcomes = execute_run(compose_run(overrides), data=data)
    return trace, outcomes, time.perf_counter() - started


def evaluation_costs(datasets: list[str], budget: int) -> pd.DataFrame:
    """Seconds per evaluation (all folds) and retraining seconds of a random search, per dataset."""
    rows = []
    for dataset in datasets:
        data = load_dataset(dataset)
        trace, outcomes, seconds = _run("rs", dataset, budget, data)
        retrain = float(outcomes.drop_duplicates("incumbent_iteration")["test_fit_seconds"].sum())
        per_evaluation = (seconds - retrain - trace["optimizer_seconds"].sum()) / len(trace)
        n_test = 0 if data.y_test is None else len(data.y_test)
        rows.append(
            {"dataset": dataset, "rows": len(data.y) + n_test, "features": data.X.shape[1],
             "s_per_evaluation": per_evaluation, "retrain_s": retrain}
        )  # fmt: skip
        print(f"  {dataset:24s} {per_evaluation:8.3f} s per evaluation", flush=True)
    return pd.DataFrame(rows).set_index("dataset")


def optimizer_costs(methods: list[str], budget: int) -> pd.Series:
    """Each method's optimizer seconds over the paper's 200 evaluations (pima)."""
    data = load_dataset("pima")
    costs = {}
    for method in methods:
        trace, _, _ = _run(method, "pima", budget, data)
        costs[method] = optimizer_seconds_at(trace, PAPER_BUDGET)
        print(f"  {method:16s} {costs[method]:8.1f} optimizer s over {PAPER_BUDGET}", flush=True)
    return pd.Series(costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-budget", type=int, default=10)
    parser.add_argument("--opt-budget", type=int, default=PAPER_BUDGET)
    parser.add_argument("--quick", action="store_true", help="3 datasets, budgets 4 and 20")
    args = parser.parse_args()
    experiment = load_experiment("chapter5")
    paper = plan("chapter5", "paper")
    datasets = sorted({run.spec.task.dataset for run in paper})
    repetitions = len({run.spec.repetition for run in paper})
    eval_budget, opt_budget = (4, 20) if args.quick else (args.eval_budget, args.opt_budget)
    if args.quick:
        datasets = ["pima", "car", "titanic"]
    print(f"evaluation cost ({eval_budget} random-search evaluations per dataset):")
    evaluations = evaluation_costs(datasets, eval_budget)
    print(f"optimizer cost (pima, {opt_budget} evaluations, extrapolated to {PAPER_BUDGET}):")
    optimizers = optimizer_costs(list(experiment["methods"]), opt_budget)
    per_run_fits = evaluations["s_per_evaluation"] * PAPER_BUDGET + evaluations["retrain_s"]
    fit_hours = per_run_fits.sum() * len(optimizers) * repetitions / 3600
    optimizer_hours = optimizers.sum() * len(datasets) * repetitions / 3600
    total = fit_hours + optimizer_hours
    print("\nper-method optimizer seconds per run (200 evaluations):")
    print(optimizers.round(1).to_string())
    print("\n| measure | value |\n|---|---|")
    design = f"{len(datasets)} x {repetitions} x {len(optimizers)}"
    print(f"| datasets x repetitions x methods | {design} |")
    print(f"| projected core-hours, Chapter 5 paper profile | {total:,.0f} |")
    print(f"| of which learner fits | {fit_hours:,.0f} |")
    share = 100 * optimizer_hours / total
    print(f"| of which optimizers | {optimizer_hours:,.1f} ({share:.1f} %) |")
    costly = per_run_fits.sort_values(ascending=False).head(3) / 3600
    print(f"| costliest datasets (core-hours per run) | {costly.round(2).to_dict()} |")


if __name__ == "__main__":
    main()
