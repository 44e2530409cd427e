"""Evidence for the fit guard's limits: does a lower limit change the selected configuration?

The fit guard (docs/deviations.md, "Fit guard") scores a libsvm fit that reaches its limit as
error 1.0. Fits that
reach it are rare but each costs seconds to tens of seconds on the large datasets. A limit is
``min(max_iter, max_work / n_train)`` iterations (``hpo.learners.FitGuard``); the study compares
lower limits — on iterations alone (``1e5``) or on work (``w5e8``: iterations x training rows
<= 5e8) — with the reference of 10^6 iterations. It fits a fixed sample of random
configurations of Chapter 3's space (the ``rs`` optimizer's own proposals, repetition 0, hold-out
or 5-fold) on each dataset once, up to ``--reference`` iterations, and records each fit's largest
libsvm iteration count over its one-vs-one sub-problems. Because random search is not adaptive,
the outcome under any lower cap follows exactly: a fit whose count reaches the cap would score
1.0 (in 5-fold, on that fold). For every candidate cap the table reports the fits that would
reach it, whether the run's selected configuration (lowest validation error, earliest wins ties)
changes, and the share of the fitting time the cap would save.

    python benchmarks/fit_cap.py [--datasets NAME ... | --bins B ... [--max-tvs N]] [--protocol cv5]
                                 [--budget 60] [--json FILE] [--from-json FILE ...]

The README's evidence table: ``--bins 3 --max-tvs 15000`` (hold-out), ``--protocol cv5 --bins 1 2``
and ``--protocol cv5 --datasets abalone spambase wine-quality-white page-blocks bank
statlog-landsat ringnorm``. ``--bins`` takes the thesis datasets of Fig 3.4's |D_TVS| bins (0-3).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from experiments.configuration.spaces import load_space  # noqa: E402
from hpo import seeding  # noqa: E402
from hpo.data.catalog import load_dataset  # noqa: E402
from hpo.evaluation.evaluator import Evaluator  # noqa: E402
from hpo.evaluation.protocol import ProtocolSettings  # noqa: E402
from hpo.learners import FitGuard, make_estimator, rbf_svc_predict  # noqa: E402
from hpo.optimizers import make_optimizer  # noqa: E402

DEFAULT_DATASETS = (
    "cardiotocography-10clases",
    "statlog-image",
    "chess-krvkp",
    "abalone",
    "spambase",
    "wine-quality-white",
    "page-blocks",
    "statlog-landsat",
    "ringnorm",
)
LIMITS = {  # label -> the fit guard whose iteration limit is compared with the reference
    "1e5": FitGuard(max_iter=100_000, max_work=None),
    "3e5": FitGuard(max_iter=300_000, max_work=None),
    "w2e8": FitGuard(max_work=2e8),
    "w5e8": FitGuard(max_work=5e8),
    "w1e9": FitGuard(max_work=1e9),
}


def fits(dataset: str, budget: int, reference: int, protocol: str = "holdout") -> pd.DataFrame:
    """One row per (random configuration, fold): C, gamma, iterations, validation error, seconds."""
    data = load_dataset(dataset)
    settings = ProtocolSettings(validation="cv" if protocol == "cv5" else "holdout")
    # the run's data layout and splits, seed 0, repetition 0
    evaluator = Evaluator(data, settings, lambda _: "svm_rbf", FitGuard(), seed=0, repetition=0)
    X, y, splits = evaluator.X, evaluator.y, evaluator.splits
    reference_guard = FitGuard(max_iter=reference, max_work=None)
    space = load_space("svm_rbf")
    optimizer = make_optimizer("rs", space, budget, seeding.rng(0, data.name, 0, "optimizer", "rs"))
    rows = []
    for index in range(budget):
        proposal = optimizer.ask()
        config = space.decode(proposal.u)
        errors = []
        for fold_index, fold in enumerate(splits.folds(0)):
            model = make_estimator("svm_rbf", config, reference_guard)
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X[fold.train], y[fold.train])
            seconds = time.perf_counter() - started
            errors.append(float(np.mean(rbf_svc_predict(model, X[fold.valid]) != y[fold.valid])))
            rows.append(
                {
                    "dataset": dataset,
                    "config": index,
                    "fold": fold_index,
                    "C": config["C"],
                    "gamma": config["gamma"],
                    "iterations": int(np.max(model.n_iter_)),
                    "valid_error": errors[-1],
                    "fit_s": seconds,
                    "n_train": len(fold.train),
                }
            )
        optimizer.tell(proposal, float(np.mean(errors)))
    return pd.DataFrame(rows)


def under_cap(frame: pd.DataFrame, cap: pd.Series | int) -> pd.Series:
    """Each configuration's validation error (fold mean) as the fit guard would score it with
    iteration limit ``cap`` (per fit or one for all), in configuration order."""
    scored = frame["valid_error"].where(frame["iterations"] < cap, 1.0)
    return scored.groupby(frame["config"]).mean()


def summarise(frame: pd.DataFrame, limits: dict, reference: int) -> pd.DataFrame:
    """Per dataset and limit: fits reaching it, whether the selection changes, time saved."""
    rows = []
    for dataset, group in frame.groupby("dataset", sort=False):
        base = under_cap(group, reference)
        chosen = int(np.argmin(base.to_numpy()))
        for label, limit in limits.items():
            cap = np.minimum(reference, group["n_train"].map(limit.iteration_limit))
            capped = under_cap(group, cap)
            now = int(np.argmin(capped.to_numpy()))
            # a fit reaching the cap stops after ~cap iterations: time scales with iterations
            saved = (group["fit_s"] * (1 - np.minimum(1, cap / group["iterations"]))).sum()
            rows.append(
                {
                    "dataset": dataset,
                    "n_train": int(group["n_train"].iloc[0]),
                    "limit": label,
                    "fits_at_limit": int((group["iterations"] >= cap).sum()),
                    "fits": len(group),
                    "selected_changes": now != chosen,
                    "valid_error_change": float(capped.iloc[now] - base.iloc[chosen]),
                    "fit_s_reference": float(group["fit_s"].sum()),
                    "fit_s_saved": float(saved),
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--bins", nargs="+", type=int, choices=range(4), help="instead of names")
    parser.add_argument("--max-tvs", type=int, help="with --bins: datasets with |D_TVS| <= this")
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--protocol", choices=("holdout", "cv5"), default="holdout")
    parser.add_argument("--reference", type=int, default=1_000_000)
    parser.add_argument("--json", help="write every fit's record to this file")
    parser.add_argument(
        "--from-json", nargs="+", help="summarise records written by earlier --json runs instead"
    )
    args = parser.parse_args()
    if args.bins:
        from throughput import thesis_datasets

        table = thesis_datasets()
        table = table[table["bin"].isin(args.bins) & (table["status"] != "absent")]
        if args.max_tvs is not None:
            table = table[table["tvs"] <= args.max_tvs]
        args.datasets = list(table.sort_values("tvs").index)
    frames = [pd.read_json(path) for path in args.from_json or []]
    for dataset in [] if args.from_json else args.datasets:
        frame = fits(dataset, args.budget, args.reference, args.protocol)
        hits = int((frame["iterations"] >= args.reference).sum())
        print(f"  {dataset:28s} {frame['fit_s'].sum():8.1f} s, {hits} fits at the reference cap",
              flush=True)  # fmt: skip
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    table = summarise(frame, LIMITS, args.reference)
    source = (
        f"records of {', '.join(args.from_json)}"
        if args.from_json
        else f"{args.budget} random configurations, {args.protocol}"
    )
    print(f"\nreference: {args.reference:,} iterations; {source}; where a limit changes anything:")
    changed = table[(table["fits_at_limit"] > 0) | table["selected_changes"]]
    print(changed.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print("\n| limit | selection changes | fits at the limit | fitting time saved |")
    print("|---|---|---|---|")
    for label, group in table.groupby("limit", sort=False):
        print(
            f"| {label} | {int(group['selected_changes'].sum())} of {len(group)} datasets | "
            f"{int(group['fits_at_limit'].sum())} of {int(group['fits'].sum())} | "
            f"{100 * group['fit_s_saved'].sum() / group['fit_s_reference'].sum():.1f} % |"
        )
    if args.json:
        frame.to_json(args.json, orient="records", indent=1)


if __name__ == "__main__":
    main()
