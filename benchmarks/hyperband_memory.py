"""Peak memory of Hyperband's largest MRBI bracket (the target: "paused configurations live on disk,
not in memory: MRBI's largest bracket (81 configurations) stays under 2 GB of RAM").

One run of ``optimizer=hyperband space=ffnn_mrbi`` with the seed's MRBI plan (R = 100, η = 3),
cut after its first bracket (``--evaluations 1``: after its first evaluation, the data's and one
network's share of the peak; s = 4: 81 → 27 → 9 → 3 → 1 configurations, 121 evaluations), on
random data of MRBI's shape (12,000 training + validation rows and 50,000 test rows of 784
features, 10 classes; ``--rows`` scales the first). Each paused network is a checkpoint file;
only the one being trained is in memory. ``--unit`` (epochs per resource unit) is small so that
the bracket trains about one epoch per configuration: memory does not grow with epochs.

The run executes in a child process that reports its own peak RSS (VmHWM), beside what the 81
first-rung networks' weights alone would take if they were all kept in memory (float32, the
weights and the early-stopping copy of the best ones, as a checkpoint holds them).

    nice -n 5 python benchmarks/hyperband_memory.py [--rows 12000] [--unit 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
FIRST_BRACKET = 81 + 27 + 9 + 3 + 1  # evaluations of s = 4 for R = 100, eta = 3
FEATURES, CLASSES, TEST_ROWS = 784, 10, 50_000


def first_rung(trace: pd.DataFrame) -> pd.DataFrame:
    """The configurations of the first (largest) bracket, one row each."""
    rows = trace[trace["bracket"] == trace["bracket"].max()]
    return rows.drop_duplicates(subset=[c for c in rows if c.startswith("u_")])


def network_bytes(trace: pd.DataFrame) -> float:
    """Bytes of the first-rung networks' weights and best-weights copies (float32)."""
    total = 0
    for _, row in first_rung(trace).iterrows():
        widths = [FEATURES, int(row["param_units_1"])]
        for k in (2, 3):
            if str(row.get(f"param_layer_{k}")) == "True":
                widths.append(int(row[f"param_units_{k}"]))
            else:
                break
        widths.append(CLASSES)
        total += sum((a + 1) * b for a, b in zip(widths, widths[1:], strict=False))
    return 2 * 4 * total


def child(rows: int, unit: float, evaluations: int) -> None:
    from experiments.configuration.compose import compose_run
    from experiments.run.runner import run
    from hpo.data.types import Dataset

    rng = np.random.default_rng(0)
    data = Dataset(
        "digits-rot-bg",  # a name the composition accepts; the arrays are MRBI-shaped noise
        rng.uniform(size=(rows, FEATURES)),
        rng.integers(CLASSES, size=rows),
        rng.uniform(size=(TEST_ROWS, FEATURES)),
        rng.integers(CLASSES, size=TEST_ROWS),
    )
    spec = compose_run(
        [
            "optimizer=hyperband",
            "space=ffnn_mrbi",
            "dataset=digits-rot-bg",
            f"budget={evaluations}",
            "curves=false",
            "optimizer.settings.max_resource=100",
            "optimizer.settings.eta=3",
            f"optimizer.settings.unit={unit}",
            f"space.settings.max_epochs={max(1, round(100 * unit))}",
            "protocol.valid_frac=0.16666666666666666",
            "protocol.train_cap=null",
        ]
    )
    started = time.perf_counter()
    result = run(spec, data=data)
    seconds = time.perf_counter() - started
    status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
    trace = result.trace
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mb": int(status.split()[0]) / 1024,
                "evaluations": len(trace),
                "configurations": len(first_rung(trace)),
                "epochs": float(trace["resource_spent"].sum()),
                "in_memory_mb": network_bytes(trace) / 2**20,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=12_000)
    parser.add_argument("--unit", type=float, default=0.05)
    parser.add_argument(
        "--evaluations",
        type=int,
        default=FIRST_BRACKET,
        help="stop after this many (1: the data's and one network's share of the peak)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.rows, args.unit, args.evaluations)
        return
    finished = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "--rows",
            str(args.rows),
            "--unit",
            str(args.unit),
            "--evaluations",
            str(args.evaluations),
        ],  # fmt: skip
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
    )
    if finished.returncode != 0:
        sys.exit(f"error: the run failed:\n{finished.stderr[-2000:]}")
    numbers = json.loads(finished.stdout.strip().splitlines()[-1])
    print(
        f"Hyperband, MRBI plan (R = 100, eta = 3), first bracket, {args.rows} + {TEST_ROWS} rows "
        f"x {FEATURES}\n"
        f"{numbers['configurations']} configurations, {numbers['evaluations']} evaluations, "
        f"epochs trained {numbers['epochs']:.0f}, "
        f"{numbers['seconds']:.0f} s\n"
        f"peak RSS of the run            {numbers['peak_mb']:8.0f} MB   (target: < 2048 MB)\n"
        f"first-rung networks if kept    {numbers['in_memory_mb']:8.0f} MB   (weights + best copy)"
    )


if __name__ == "__main__":
    main()
