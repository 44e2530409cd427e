"""Throughput of Chapter-3 runs and the projected cost of the full ``paper`` profile.

Runs a fixed sample of Chapter-3 runs — two datasets per |D_TVS| quartile bin of the thesis's
benchmark (Fig 3.4's bins), the four optimizer families (grid, rs, gp, cma) and both protocols,
one repetition each — single-threaded, and prints per-run costs, SVM fits per core-second, the
optimizer's share of the time, and the projected core-hours of the ``paper`` profile of Chapter 3
(118 datasets; per dataset and protocol 20 repetitions × 10 distinct runs + 10 repetitions × 4
runs of the posterior-mean experiment), next to the thesis's ≈ 15 000 core-hours (9.8 days on 64
cores, thesis §3.3).

Projection: each run's cost is measured at ``--budget`` evaluations and extended to 100: fits
scale linearly with the number of evaluations; the optimizer's later steps are extrapolated from
the trend of its measured step times (a GP step grows with the number of observations); the final
retrainings are few and counted as measured. Each of the 118 datasets takes the mean per-run cost
of its bin's sample. The per-run records of ``--json`` are the cost table that
``python -m experiments.sweep cost`` sizes cluster jobs with (``benchmarks/throughput_costs.json``).

    python benchmarks/throughput.py [--budget 30] [--json FILE] [--quick] [--fit-guard K=V ...]

``--fit-guard`` overrides the default fit guard (``conf/config.yaml``) for an ablation, e.g.
``--fit-guard max_work=null distance_cache_mb=0`` measures the settings of 2026-11-23 morning.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per run: core-seconds = wall seconds

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from experiments.cluster import size_bin, tvs_size  # noqa: E402
from experiments.configuration.compose import compose_config, compose_run, override  # noqa: E402
from experiments.run.runner import execute_run  # noqa: E402
from hpo.data.catalog import catalog, load_dataset  # noqa: E402

THESIS_CORE_HOURS = 9.8 * 24 * 64  # thesis §3.3: 9.8 days on 64 cores
# Distinct runs per (dataset, protocol) in the paper profile, by family:
# main part, 20 repetitions: grid, rs, 4 GP runs (gp, gp-sel, gp-r, gp-sel-r), 4 CMA-ES runs;
# posterior-mean part, 10 repetitions: grid, rs, gp, gp-r.
PAPER_RUNS = {"grid": 20 + 10, "rs": 20 + 10, "gp": 4 * 20 + 2 * 10, "cma": 4 * 20}
METHODS = {"grid": "grid", "rs": "rs", "gp": "gp", "cma": "cma"}
BURN_IN = 5  # steps left out of the step-time trend (Sobol start, slice-sampler burn-in)


def thesis_datasets() -> pd.DataFrame:
    table = catalog()
    table = table[table["in_thesis_118"] == "yes"].copy()
    table["tvs"] = table.apply(tvs_size, axis=1)
    table["bin"] = size_bin(table["tvs"])
    return table


def sample(table: pd.DataFrame, per_bin: int) -> list[str]:
    """``per_bin`` datasets per bin at evenly spaced size quantiles inside the bin."""
    chosen = []
    available = table[table["status"] != "absent"]
    for _, group in available.sort_values("tvs").groupby("bin"):
        positions = np.linspace(0, len(group) - 1, per_bin + 2)[1:-1].round().astype(int)
        chosen += list(group.iloc[positions]["name"])
    return chosen


def measure(
    dataset: str, family: str, protocol: str, budget: int, data, fit_guard: dict | None = None
) -> dict:
    overrides = [f"optimizer={METHODS[family]}", f"protocol={protocol}", f"dataset={dataset}"]
    overrides += [f"budget={budget}", "seed=0", "repetition=0", "space=svm_rbf", "curves=true"]
    overrides += [override(f"fit_guard.{k}", v) for k, v in (fit_guard or {}).items()]
    spec = compose_run(overrides)
    started = time.perf_counter()
    trace, outcomes = execute_run(spec, data=data)
    seconds = time.perf_counter() - started
    retrain = outcomes.drop_duplicates(["param_C", "param_gamma"])["test_fit_seconds"].sum()
    optimizer_s = float(trace["optimizer_seconds"].sum())
    per_evaluation = (seconds - retrain - optimizer_s) / len(trace)
    return {
        "dataset": dataset,
        "family": family,
        "protocol": protocol,
        "evaluations": len(trace),
        "fits": int(trace["n_fits"].sum()),
        "run_s": seconds,
        "fit_s": float(trace["fit_seconds"].sum()),
        "optimizer_s": optimizer_s,
        "retrain_s": float(retrain),
        "limit_hits": int(trace["fit_limit_hits"].sum()),
        "run_s_at_100": per_evaluation * 100 + optimizer_seconds_at(trace, 100) + retrain,
    }


def optimizer_seconds_at(trace: pd.DataFrame, budget: int) -> float:
    """The optimizer's seconds over ``budget`` evaluations: the measured steps, plus the later
    ones extrapolated from a line fitted to the step times after the first ``BURN_IN`` steps
    (a GP step grows with the number of observations, so a constant step cost would understate
    the GP's share; the first steps hold one-off costs such as the slice sampler's burn-in)."""
    steps = trace["optimizer_seconds"].to_numpy()
    measured = float(steps.sum())
    if len(steps) >= budget:
        return measured
    later = np.arange(len(steps) + 1, budget + 1)
    if len(steps) - BURN_IN < 2:
        return measured + len(later) * float(np.median(steps))
    slope, intercept = np.polyfit(np.arange(BURN_IN + 1, len(steps) + 1), steps[BURN_IN:], 1)
    return measured + float(np.maximum(intercept + slope * later, 0.0).sum())


def project(records: pd.DataFrame, table: pd.DataFrame) -> float:
    """Core-hours of the paper profile from the per-bin mean run costs."""
    cost = records.merge(table[["bin"]], left_on="dataset", right_index=True)
    per_bin = cost.groupby(["bin", "family", "protocol"])["run_s_at_100"].mean()
    total = 0.0
    for _, entry in table.iterrows():
        for family, runs in PAPER_RUNS.items():
            for protocol in ("holdout", "cv5"):
                total += runs * per_bin.get((entry["bin"], family, protocol), np.nan)
    return total / 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--per-bin", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="1 dataset per bin, budget 12")
    parser.add_argument("--json", default=None)
    parser.add_argument("--fit-guard", nargs="+", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    fit_guard = dict(compose_config([])["fit_guard"])
    for item in args.fit_guard:
        key, _, value = item.partition("=")
        if key not in fit_guard:
            parser.error(f"unknown fit guard setting {key!r}; valid: {sorted(fit_guard)}")
        fit_guard[key] = yaml.safe_load(value)
    print(f"fit guard: {fit_guard}")
    budget, per_bin = (12, 1) if args.quick else (args.budget, args.per_bin)
    table = thesis_datasets()
    datasets = sample(table, per_bin)
    print(f"sample: {datasets} (|D_TVS| = {[int(table.loc[d, 'tvs']) for d in datasets]})")
    records = []
    for dataset in datasets:
        data = load_dataset(dataset)
        for family in METHODS:
            for protocol in ("holdout", "cv5"):
                record = measure(dataset, family, protocol, budget, data, fit_guard)
                print(
                    f"  {dataset:28s} {family:4s} {protocol:7s} {record['run_s']:8.2f} s "
                    f"({record['fits']} fits, {record['limit_hits']} limit hits)",
                    flush=True,
                )
                records.append(record)
    frame = pd.DataFrame(records)
    fits_per_core_s = frame["fits"].sum() / frame["fit_s"].sum()
    overhead_share = frame["optimizer_s"].sum() / frame["run_s"].sum()
    core_hours = project(frame, table)
    summary = frame.groupby(["family", "protocol"])[["run_s", "fit_s", "optimizer_s"]].median()
    print(f"\nmedian seconds per run at {budget} evaluations (one core):")
    print(summary.round(3).to_string())
    print("\n| measure | value |\n|---|---|")
    print(f"| SVM fits per core-second | {fits_per_core_s:.1f} |")
    print(f"| optimizer share of run time | {100 * overhead_share:.1f} % |")
    print(f"| projected core-hours, Chapter 3 paper profile | {core_hours:,.0f} |")
    print(f"| thesis core-hours (9.8 days x 64 cores) | {THESIS_CORE_HOURS:,.0f} |")
    print(f"| ratio thesis / ours | {THESIS_CORE_HOURS / core_hours:.1f} (target >= 30) |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {
                    "command": " ".join(["python", *sys.argv]),
                    "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "fits_per_core_s": fits_per_core_s,
                    "projected_core_hours": core_hours,
                    "optimizer_share": overhead_share,
                    "thesis_core_hours": THESIS_CORE_HOURS,
                    "fit_guard": fit_guard,
                    "runs": records,
                },
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()
