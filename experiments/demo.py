"""``make demo``: a short experiment end to end on scikit-learn's bundled datasets.

Six Chapter-3 methods (grid, rs, gp, gp-r, cma, cma-r) on iris, wine, breast cancer and digits,
hold-out validation, 2 repetitions of 60 evaluations (10 CMA-ES generations); then consolidation,
a summary table of mean test error per dataset and method with average ranks (lower is better),
and the report (``analysis.demo``: tables, curves and critical-difference diagrams of what ran),
whose path is the last line printed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from analysis.report import write_report
from analysis.stats import average_ranks
from experiments.sweep import RESULTS_ROOT, consolidate, plan, run_sweep
from runfiles import layout


def main(results_root: Path = RESULTS_ROOT, n_jobs: int = -1, experiment: str = "demo") -> int:
    """Run the demo's sweep, print its summary, write its report; the report's path last.
    ``experiment``: ``conf/experiment/demo.yaml``, or a YAML file of the same form (tests)."""
    started = time.perf_counter()
    runs = plan(experiment, "default", results_root)
    specs = [run.spec for run in runs]
    print(
        f"demo: {len(runs)} runs ({len({s.method.name for s in specs})} methods x "
        f"{len({s.task.dataset for s in specs})} datasets x {len({s.repetition for s in specs})} "
        f"repetitions, {max(s.budget.evaluations for s in specs)} evaluations each)"
    )
    counts = run_sweep(runs, n_jobs=n_jobs)
    folder = next(p.parent for p in runs[0].path.parents if p.name == layout.RUNS)
    paths = consolidate(runs, folder / layout.CONSOLIDATED)
    outcomes = pd.read_parquet(paths["outcome"])
    final = outcomes[
        outcomes["iteration"] == outcomes.groupby("run_id")["iteration"].transform("max")
    ]
    scores = 100 * final.pivot_table(
        index="dataset", columns="method", values="test_error", aggfunc="mean"
    )
    scores = scores[[m for m in ("grid", "rs", "gp", "gp-r", "cma", "cma-r") if m in scores]]
    table = scores.round(2)
    table.loc["average rank"] = average_ranks(scores).round(2)
    print("\nMean test error (%) over repetitions, final incumbent; last row: average rank")
    print(table.to_string())
    _explain_plateaus(pd.read_parquet(paths["trace"]))
    print(f"\nruns: {counts}; {time.perf_counter() - started:.0f} s")
    print(
        f"results: {folder} (per-run files in runs/, merged in "
        f"consolidated/outcomes.parquet and consolidated/traces.parquet)"
    )
    drawn = time.perf_counter()
    report = write_report(folder)  # the demo plug-in: the results' experiment column
    print(f"report drawn in {time.perf_counter() - drawn:.0f} s; open it:")
    print(f"report: {report}")
    return 1 if counts["failed"] else 0


def _explain_plateaus(traces: pd.DataFrame) -> None:
    """Name the runs that never left a plateau (one validation loss throughout) and say why."""
    losses = traces.groupby(["run_method", "dataset", "repetition"])["valid_loss"].nunique()
    stuck = losses[losses == 1]
    if stuck.empty:
        return
    names = ", ".join(f"{m} on {d} (repetition {r})" for m, d, r in stuck.index)
    print(
        f"\nNote: {names} saw one validation loss at every evaluation: every configuration "
        "tried predicts a single class (C small or gamma large), so the losses give the "
        "optimizer no direction and the final model is a constant classifier. CMA-ES moves in "
        'small steps from the centre of the space (docs/deviations.md, "CMA-ES\'s start"); a '
        "run that sees only this plateau can stay on it for its whole budget."
    )


if __name__ == "__main__":
    sys.exit(main())
