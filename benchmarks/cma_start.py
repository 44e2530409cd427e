"""CMA-ES's start, paired: the centre of the cube against a centroid drawn from U[0, 1]^d.

Runs each CMA-ES method of Chapter 3 twice per (dataset, protocol, repetition) with the same seeds,
``optimizer.settings.start=centre`` (the default, docs/deviations.md "CMA-ES's start") and
``start=random`` (the earlier default; it draws the same random numbers, so the two runs share
pycma's stream). Prints, per dataset and start, the runs stuck on the one-class plateau (one
distinct validation loss over the whole run) and the mean final test error in %, then the totals
and the paired mean difference (random − centre). This is the ablation behind the default; on
the thesis's datasets a study of the start found 54 stuck runs of 435 from random starts.

    python benchmarks/cma_start.py [--datasets glass iris ...] [--methods cma cma_r]
        [--protocols holdout] [--repetitions 2] [--budget 24] [--jobs 1]

UCI-121 names need the collection (HPO_UCI121_DIR or `make data`); scikit-learn's bundled sets
(sklearn-iris, sklearn-wine, sklearn-breast-cancer) need nothing.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402

import pandas as pd  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

from experiments.configuration.compose import compose_run  # noqa: E402
from experiments.run.runner import execute_run  # noqa: E402

STARTS = ("random", "centre")


def one_run(method: str, dataset: str, protocol: str, repetition: int, budget: int, start: str):
    """(stuck, final test error in %) of one CMA-ES run."""
    spec = compose_run(
        [
            f"optimizer={method}",
            f"dataset={dataset}",
            f"protocol={protocol}",
            f"budget={budget}",
            f"repetition={repetition}",
            f"optimizer.settings.start={start}",
        ]
    )
    trace, outcomes = execute_run(spec)
    first_method = spec.method.name
    final = outcomes[outcomes["method"] == first_method].iloc[-1]
    return {
        "method": method,
        "dataset": dataset,
        "protocol": protocol,
        "repetition": repetition,
        "start": start,
        "stuck": int(trace["valid_loss"].nunique() == 1),
        "test_error": 100 * float(final["test_error"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["glass", "iris", "wine", "ionosphere", "breast-cancer-wisc"],
    )
    parser.add_argument("--methods", nargs="+", default=["cma", "cma_r"])
    parser.add_argument("--protocols", nargs="+", default=["holdout", "cv5"])
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--budget", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    grid = itertools.product(
        args.methods, args.datasets, args.protocols, range(args.repetitions), STARTS
    )
    rows = Parallel(n_jobs=args.jobs)(
        delayed(one_run)(m, d, p, r, args.budget, s) for m, d, p, r, s in grid
    )
    table = pd.DataFrame(rows)
    per_dataset = table.pivot_table(
        index="dataset", columns="start", values=["stuck", "test_error"], aggfunc=["sum", "mean"]
    )
    summary = pd.DataFrame(
        {
            "stuck runs (random)": per_dataset[("sum", "stuck", "random")],
            "stuck runs (centre)": per_dataset[("sum", "stuck", "centre")],
            "test error % (random)": per_dataset[("mean", "test_error", "random")].round(2),
            "test error % (centre)": per_dataset[("mean", "test_error", "centre")].round(2),
        }
    )
    print(
        f"{len(table) // 2} paired runs: methods {args.methods}, protocols {args.protocols}, "
        f"{args.repetitions} repetitions, budget {args.budget}"
    )
    print(summary.to_string())
    paired = table.pivot_table(
        index=["method", "dataset", "protocol", "repetition"], columns="start", values="test_error"
    )
    difference = paired["random"] - paired["centre"]
    totals = table.groupby("start")["stuck"].sum()
    print(
        f"\nstuck runs: random {totals['random']}, centre {totals['centre']} "
        f"of {len(paired)} each; mean test error random − centre: {difference.mean():+.2f} pp "
        f"(± {difference.std(ddof=1) / len(difference) ** 0.5:.2f} s.e.)"
    )


if __name__ == "__main__":
    main()
