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

Prints rows, seconds and peak MB beside the targets (5 s, 1 GB), with the figures written as PNG
and PDF (the default), as PNG only (``--no-pdf``) and not drawn (``--no-figures``: tables, claims
and the plotted data, the lean report), and a projection to the paper
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


# Runs ``python -m analysis`` and prints its own peak RSS in kB last on stderr: VmHWM, the
# high-water mark of this program's memory (Linux; ``ru_maxrss`` elsewhere). ``ru_maxrss`` on
# Linux survives exec, so it would report this benchmark's own footprint at the fork.
_MEASURED = (
    "import resource, runpy, sys\n"
    "sys.argv = ['analysis', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('analysis', run_name='__main__')\n"
    "finally:\n"
    "    try:\n"
    "        status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
    "        peak = int(status.split()[0])\n"
    "    except OSError:\n"
    "        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    print(peak, file=sys.stderr)\n"
)


def time_report(folder: Path, *options: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of ``python -m analysis folder`` in a fresh one-core
    process. CPU seconds (user + system) are what a loaded machine inflates least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    finished = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(folder), "--out", str(folder / "report"), *options],
        cwd=REPO,
        env={**os.environ, **ONE_CORE, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if finished.returncode != 0:
        sys.exit(f"error: python -m analysis failed:\n{finished.stderr}")
    return seconds, cpu, int(finished.stderr.strip().splitlines()[-1]) / 1024.0


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
        timings = {
            "png and pdf (default)": time_report(folder),
            "png only (--no-pdf)": time_report(folder, "--no-pdf"),
            "none (--no-figures)": time_report(folder, "--no-figures"),
        }
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
                "figures": list(timings),
                "outcome rows": f"{len(table):,}",
                "seconds": [f"{seconds:.1f}" for seconds, _, _ in timings.values()],
                "cpu s": [f"{cpu:.1f}" for _, cpu, _ in timings.values()],
                "target s": TARGET_SECONDS,
                "peak MB": [f"{peak:.0f}" for _, _, peak in timings.values()],
                "target MB": TARGET_MB,
            }
        ).to_string(index=False)
    )
    seconds, _, peak_mb = timings["png and pdf (default)"]
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
