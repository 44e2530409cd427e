"""Time and memory of the Chapter-3 report on a paper-sized result set (issue 26).

Builds the result set synthetically from a real smoke sweep: the outcome rows of
``results/chapter3/smoke`` (5 datasets x 2 repetitions, ``make reproduce-chapter3 PROFILE=smoke``)
are copied to ``--datasets`` thesis datasets x ``--repetitions`` repetitions (each copy renamed to
another thesis dataset and repetition, with its own run ids), written as one consolidated
``outcomes.parquet``, and ``python -m analysis`` is timed on it in a fresh process on one core
(BLAS and OpenMP threads set to 1), with that process's peak resident memory. The defaults give
117 datasets x 20 repetitions = 1.42 M outcome rows, about a quarter of the paper profile's.

    python benchmarks/analysis_chapter3.py [--source results/chapter3/smoke]
        [--datasets 117] [--repetitions 20] [--keep DIR]

Prints rows, seconds and peak MB beside the targets (5 s, 1 GB) and a projection to the paper
profile (118 datasets x 20 repetitions x budget 100, Table 3.1's 14 methods + the pm part).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from hpo.datasets import dataset_names

TARGET_SECONDS, TARGET_MB = 5.0, 1024.0
REPO = Path(__file__).resolve().parents[1]
ONE_CORE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def replicate(source: Path, n_datasets: int, n_repetitions: int) -> pd.DataFrame:
    """The smoke sweep's outcome rows copied to ``n_datasets`` x ``n_repetitions``."""
    rows = pd.read_parquet(source / "consolidated" / "outcomes.parquet")
    datasets = sorted(rows["dataset"].unique())
    repetitions = sorted(rows["repetition"].unique())
    names = dataset_names("uci121", thesis_118=True)[:n_datasets]
    copies = []
    for index, name in enumerate(names):
        source_dataset = datasets[index % len(datasets)]
        of_dataset = rows[rows["dataset"] == source_dataset]
        for repetition in range(n_repetitions):
            copy = of_dataset[
                of_dataset["repetition"] == repetitions[repetition % len(repetitions)]
            ]
            copies.append(
                copy.assign(
                    dataset=name,
                    repetition=repetition,
                    run_id=copy["run_id"] + f":{name}:{repetition}",
                )
            )
    return pd.concat(copies, ignore_index=True)


def time_report(folder: Path) -> tuple[float, float]:
    """(seconds, peak MB) of ``python -m analysis folder`` in a fresh one-core process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "analysis", str(folder), "--out", str(folder / "report")],
        cwd=REPO,
        env={**os.environ, **ONE_CORE, "MPLBACKEND": "Agg"},
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024.0  # kB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=REPO / "results" / "chapter3" / "smoke")
    parser.add_argument("--datasets", type=int, default=117)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="write the result set here (kept)")
    args = parser.parse_args()
    if not (args.source / "consolidated" / "outcomes.parquet").is_file():
        sys.exit(
            f"error: no consolidated smoke sweep at {args.source}; run "
            "`make reproduce-chapter3 PROFILE=smoke` first (or give --source)"
        )
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        table = replicate(args.source, args.datasets, args.repetitions)
        table.to_parquet(folder / "outcomes.parquet", index=False)
        seconds, peak_mb = time_report(folder)
    per_run_rows = len(table) / table["run_id"].nunique()
    budget = int(table["budget"].max())
    # The paper profile: 118 datasets x 20 repetitions of the main part and 10 of the pm part; a
    # run's outcome rows scale with its budget (one row per method read from it per iteration).
    copies = args.datasets * args.repetitions
    per_copy = table.groupby("part").size() / copies
    paper_rows = (
        118
        * (100 / budget)
        * sum(per_copy.get(part, 0.0) * reps for part, reps in (("main", 20), ("pm", 10)))
    )
    print(
        pd.DataFrame(
            {
                "outcome rows": [f"{len(table):,}"],
                "seconds": [f"{seconds:.1f}"],
                "target s": [TARGET_SECONDS],
                "peak MB": [f"{peak_mb:.0f}"],
                "target MB": [TARGET_MB],
            }
        ).to_string(index=False)
    )
    scale = paper_rows / len(table)
    print(
        f"\nper run: {per_run_rows:.0f} outcome rows at budget {budget}. The paper profile "
        f"(118 datasets x 20 repetitions, budget 100; the pm part 10 repetitions) has about "
        f"{paper_rows / 1e6:.1f} M outcome rows, {scale:.1f}x these; if time and memory grow "
        f"linearly with rows: {seconds * scale:.0f} s and {peak_mb * scale:.0f} MB. The report "
        "reads no trace rows."
    )


if __name__ == "__main__":
    main()
