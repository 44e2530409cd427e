"""Seed 002's reproduction with ``batch_networks`` on against off: the same profile's network parts
run both ways (``surrogates`` profiles ``smoke`` and ``smoke_batched``), compared run by run and
as the report's error table (Tables 2.2/2.4: ``analysis.surrogates.data.error_summary``).

    python -m experiments.reproduce surrogates --profile smoke
    python -m experiments.reproduce surrogates --profile smoke_batched
    python -m benchmarks.batched_reproduction [--off smoke] [--on smoke_batched]
    python -m benchmarks.batched_reproduction --dtype-check   # float64 against float32

What is expected (docs/surrogates-hyperband.md, "Many networks as one batched model"): batching
changes only how networks are trained, never which configurations a method asks for before a
loss is told, so

* the sequential methods (GP, RF and TPE: ``skopt-gp``, ``skopt-rf``, ``tpe``), which batching
  leaves alone, are identical run for run, every loss and test error bit for bit;
* random search and Hyperband train their batches in another summation order (float32): a
  loss may differ where the network is chaotic (learning rates above about 1), which can change
  a promotion or the incumbent; every other loss is the same.

``--dtype-check`` tells the two causes of a differing loss apart: one random-search batch of 16
MRBI networks, off and on, with the learner in float64 and in float32; in float64 only the
chaotic configurations may differ.

Per run: evaluations, those that train the same configuration both ways (a promotion that
differs makes Hyperband train others), how many of them have the same loss and the learning
rates of those that do not, whether the incumbent and its test error are the same. Then the
report's table both ways and the difference of each mean. Exit code 1 when a sequential
method's runs differ or a run is missing on one side (the check above), else 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.surrogates import data

SEQUENTIAL = data.MODEL_BASED  # GP, TPE, RF: batching leaves them alone, bit-identical
KEY = ["part", "method", "repetition"]


def load(root: Path, profile: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The consolidated outcomes and traces of ``surrogates/<profile>`` (network parts only)."""
    folder = root / "surrogates" / profile / "consolidated"
    if not folder.is_dir():
        raise SystemExit(
            f"no consolidated results in {folder}; run: python -m experiments.reproduce "
            f"surrogates --profile {profile}"
        )
    outcomes, traces = (
        pd.read_parquet(folder / f"{name}.parquet") for name in ("outcomes", "traces")
    )
    keep = lambda frame: frame[frame["part"].isin(data.PARTS)]  # noqa: E731
    return keep(outcomes), keep(traces)


def _losses(traces: pd.DataFrame) -> dict[tuple, pd.DataFrame]:
    rows = data.seed_names(traces).sort_values(["run_id", "iteration"], kind="stable")
    return {key: run for key, run in rows.groupby(KEY, sort=True)}


def _rates(rates: np.ndarray) -> str:
    """How many learning rates lie below 1 (with the lowest) and how many from 1 (chaotic)."""
    if not len(rates):
        return ""
    low = rates[rates < 1]
    lowest = f" (lowest {low.min():.2f})" if len(low) else ""
    return f"{len(low)} below 1{lowest}, {len(rates) - len(low)} from 1"


def compare_runs(
    off: tuple[pd.DataFrame, pd.DataFrame], on: tuple[pd.DataFrame, pd.DataFrame]
) -> pd.DataFrame:
    """One row per run (part, method, repetition): evaluations off/on, the evaluations that train
    the same configuration both ways, how many of those have the same loss and the learning rates
    of those that do not, the incumbent's validation error equal, the test errors (%), identical
    (every configuration, loss and the test error equal)."""
    errors = {
        side: data.final_errors(frames[0]).set_index(KEY)
        for side, frames in (("off", off), ("on", on))
    }
    traces = {"off": _losses(off[1]), "on": _losses(on[1])}
    rows = []
    for key in sorted(set(traces["off"]) | set(traces["on"])):
        a, b = traces["off"].get(key), traces["on"].get(key)
        row = dict(zip(KEY, key, strict=True))
        row["evaluations off"] = 0 if a is None else len(a)
        row["evaluations on"] = 0 if b is None else len(b)
        if a is None or b is None or any(key not in errors[side].index for side in errors):
            rows.append({**row, "identical": False, "missing": True})  # a trace or outcome row
            continue
        n = min(len(a), len(b))
        params = [c for c in a.columns if c.startswith("param_") and c in b.columns]
        pa, pb = (
            a[params].iloc[:n].reset_index(drop=True),
            b[params].iloc[:n].reset_index(drop=True),
        )
        same = ((pa == pb) | (pa.isna() & pb.isna())).all(axis=1).to_numpy()
        la, lb = a["valid_loss"].to_numpy()[:n], b["valid_loss"].to_numpy()[:n]
        differ = same & ~((la == lb) | (np.isnan(la) & np.isnan(lb)))
        rates = a["param_learning_rate"].to_numpy(dtype=float)[:n][differ]
        test_off, test_on = errors["off"].loc[key, "test"], errors["on"].loc[key, "test"]
        row.update(
            {
                "same configuration": f"{int(same.sum())}/{n}",
                "its loss equal": f"{int(same.sum() - differ.sum())}/{int(same.sum())}",
                "learning rates where it differs": _rates(rates),
                "same incumbent error": bool(
                    errors["off"].loc[key, "valid"] == errors["on"].loc[key, "valid"]
                ),
                "test off": test_off,
                "test on": test_on,
                "identical": bool(
                    len(a) == len(b) and same.all() and not differ.any() and test_off == test_on
                ),
                "missing": False,
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def compare_tables(off: pd.DataFrame, on: pd.DataFrame) -> pd.DataFrame:
    """The report's error table (per part and method: mean validation and test error, %) off, on,
    and on − off."""
    tables = []
    for part in [p for p in data.PARTS if p in set(off["part"])]:
        a = data.error_summary(data.final_errors(off[off["part"] == part]))
        b = data.error_summary(data.final_errors(on[on["part"] == part]))
        table = pd.DataFrame(
            {
                "valid off": a["valid mean"],
                "valid on": b["valid mean"],
                "test off": a["test mean"],
                "test on": b["test mean"],
            }
        )
        table["test on − off"] = table["test on"] - table["test off"]
        table.insert(0, "part", part)
        tables.append(table)
    return pd.concat(tables).rename_axis("method").reset_index()


def dtype_check(dtype: str, budget: int = 16) -> tuple[int, list[float]]:
    """Whether a loss that differs is the float32 summation order or the batched trainer:
    random search on digits-rot-bg in the MRBI space at the smoke settings (epoch cap 54,
    patience 5), one batch of ``budget`` networks, off and on, with the learner in ``dtype``;
    returns how many losses are equal and the learning rates where they differ."""
    import copy
    from unittest import mock

    from experiments.configuration.spaces import space_config
    from experiments.configuration.spec import RunSpec
    from experiments.run.runner import run
    from hpo.data.catalog import load_dataset
    from hpo.learners.torch_network import FeedForwardNetwork

    space = copy.deepcopy(space_config("ffnn_mrbi"))
    space["settings"] = {"patience": 5, "max_epochs": 54}
    defaults = tuple(
        dtype if d == "float32" else d for d in FeedForwardNetwork.__init__.__defaults__
    )
    data, losses = load_dataset("digits-rot-bg"), {}
    with mock.patch.object(FeedForwardNetwork.__init__, "__defaults__", defaults):
        for setting in ("off", "on"):
            spec = RunSpec.of("digits-rot-bg", "rs", {"rs": "best_validation"}, space=space,
                           budget=budget, batch_networks=setting)  # fmt: skip
            losses[setting] = run(spec, data).trace
    a, b = (losses[s]["valid_loss"].to_numpy() for s in ("off", "on"))
    rates = losses["off"]["param_learning_rate"].to_numpy(dtype=float)[a != b]
    return int((a == b).sum()), sorted(rates.tolist())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results-root", type=Path, default=Path("results"))
    parser.add_argument("--off", default="smoke", help="the profile run with batching off")
    parser.add_argument("--on", default="smoke_batched", help="the same with batching on")
    parser.add_argument("--dtype-check", action="store_true",
                        help="instead: one random-search batch of MRBI networks off and on, in "
                        "float64 and in float32 (a few minutes)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.dtype_check:
        for dtype in ("float64", "float32"):
            equal, rates = dtype_check(dtype)
            print(f"{dtype}: {equal}/16 losses equal batched and alone; they differ at learning "
                  f"rates {', '.join(f'{r:.2f}' for r in rates) or '-'}")  # fmt: skip
        return 0
    off, on = load(args.results_root, args.off), load(args.results_root, args.on)
    runs = compare_runs(off, on)
    with pd.option_context(
        "display.width", 200, "display.max_columns", 20, "display.max_colwidth", 60
    ):
        print(f"surrogates/{args.off} (batch_networks off) against {args.on} (on), run by run:")
        print(runs.drop(columns="missing").to_string(index=False, float_format="{:.2f}".format))
        print("\nthe report's error table (Tables 2.2/2.4, mean %), both ways:")
        print(compare_tables(off[0], on[0]).to_string(index=False, float_format="{:.2f}".format))
    sequential = runs[runs["method"].isin(SEQUENTIAL)]
    broken = sequential[~sequential["identical"]]
    for _, row in pd.concat([broken, runs[runs["missing"]]]).drop_duplicates(KEY).iterrows():
        what = (
            "missing on one side" if row["missing"] else "differs (batching should leave it alone)"
        )
        print(
            f"check failed: {row['part']} {row['method']} repetition {row['repetition']} {what}",
            file=sys.stderr,
        )
    identical = runs.groupby("method", sort=False)["identical"].agg(["sum", "size"])
    print("\nidentical runs: " + ", ".join(f"{m} {s}/{n}" for m, (s, n) in identical.iterrows()))
    return 1 if len(broken) or runs["missing"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
