"""Time and memory of the Chapter-3 report on a paper-sized result set (``docs/performance.md``).

Builds the result set synthetically from a real smoke sweep: the outcome rows of
``results/chapter3/smoke`` (5 datasets x 2 repetitions, ``make reproduce-chapter3 PROFILE=smoke``)
are copied to ``--datasets`` thesis datasets x ``--repetitions`` repetitions (each copy renamed to
another thesis dataset and repetition, with its own run ids), written as one consolidated
``outcomes.parquet``, and ``python -m analysis`` is timed on it in a fresh process on one core
(BLAS and OpenMP threads set to 1), with that process's peak resident memory. The defaults give
117 datasets x 20 repetitions = 1.42 M outcome rows, about a quarter of the paper profile's.

    python benchmarks/analysis_chapter3.py [--source results/chapter3/smoke]
        [--datasets 117] [--repetitions 20] [--repeats 3] [--keep DIR]

Prints rows, seconds and peak MB beside the targets (5 s, 1 GB), with the figures written as PNG
and PDF (the default), as PNG only (``--no-pdf``) and not drawn (``--no-figures``: tables, claims
and the plotted data, the lean report), each the median of ``--repeats`` reports, and a projection
to the paper profile (118 datasets x 20 repetitions x budget 100, Table 3.1's 14 methods + the pm
part) along the line through a half-size set and the full one.
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

import numpy as np
import pandas as pd

from hpo.data.catalog import dataset_names

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


MODES = {
    "png and pdf (default)": (),
    "png only (--no-pdf)": ("--no-pdf",),
    "none (--no-figures)": ("--no-figures",),
}


def measure(table: pd.DataFrame, folder: Path, repeats: int) -> dict[str, tuple[float, ...]]:
    """Per figure mode, the median (wall s, CPU s, peak MB) of ``repeats`` reports on ``table``."""
    folder.mkdir(parents=True, exist_ok=True)
    table.to_parquet(folder / "outcomes.parquet", index=False)
    return {
        mode: tuple(
            float(np.median(values))
            for values in zip(*(time_report(folder, *options) for _ in range(repeats)), strict=True)
        )
        for mode, options in MODES.items()
    }


def paper_outcome_rows(table: pd.DataFrame, copies: int) -> float:
    """The paper profile's outcome rows: 118 datasets x 20 repetitions of the main part and 10
    of the pm part; a run's outcome rows scale with its budget (one row per method read from it
    per iteration), 100 in the paper profile."""
    budget = int(table["budget"].max())
    per_copy = table.groupby("part").size() / copies
    return (
        118
        * (100 / budget)
        * sum(per_copy.get(part, 0.0) * reps for part, reps in (("main", 20), ("pm", 10)))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=REPO / "results" / "chapter3" / "smoke")
    parser.add_argument("--datasets", type=int, default=117)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="reports timed per mode (median)")
    parser.add_argument("--keep", type=Path, help="write the result set here (kept)")
    args = parser.parse_args()
    if not (args.source / "consolidated" / "outcomes.parquet").is_file():
        sys.exit(
            f"error: no consolidated smoke sweep at {args.source}; run "
            "`make reproduce-chapter3 PROFILE=smoke` first (or give --source)"
        )
    if args.repeats < 1 or args.datasets < 2 or args.repetitions < 1:
        sys.exit("error: --repeats and --repetitions must be >= 1 and --datasets >= 2")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        table = replicate(args.source, args.datasets, args.repetitions)
        # the first half of the datasets: the same rows replicate() gives for datasets // 2
        half_names = table["dataset"].unique()[: args.datasets // 2]
        half = table[table["dataset"].isin(half_names)]
        full_timings = measure(table, folder, args.repeats)
        half_timings = measure(half, Path(scratch) / "half", args.repeats)
    paper_rows = paper_outcome_rows(table, args.datasets * args.repetitions)

    def projected(mode: str, column: int) -> float:
        # Two-point line through the half and the full set: the fixed cost (imports, drawing)
        # is the intercept, the per-row cost the slope.
        slope = (full_timings[mode][column] - half_timings[mode][column]) / (len(table) - len(half))
        return full_timings[mode][column] + slope * (paper_rows - len(table))

    print(
        pd.DataFrame(
            {
                "figures": list(MODES),
                "outcome rows": f"{len(table):,}",
                "seconds": [f"{full_timings[m][0]:.1f}" for m in MODES],
                "cpu s": [f"{full_timings[m][1]:.1f}" for m in MODES],
                "target s": TARGET_SECONDS,
                "peak MB": [f"{full_timings[m][2]:.0f}" for m in MODES],
                "target MB": TARGET_MB,
                f"half set ({len(half):,}) s / MB": [
                    f"{half_timings[m][0]:.1f} / {half_timings[m][2]:.0f}" for m in MODES
                ],
                "paper projection s / MB": [
                    f"{projected(m, 0):.0f} / {projected(m, 2):.0f}" for m in MODES
                ],
            }
        ).to_string(index=False)
    )
    print(
        f"\nMedians of {args.repeats} reports per mode, each in a fresh one-core process. "
        f"Per run: {len(table) / table['run_id'].nunique():.0f} outcome rows at budget "
        f"{int(table['budget'].max())}. The paper profile (118 datasets x 20 repetitions, budget "
        f"100; the pm part 10 repetitions) has about {paper_rows / 1e6:.1f} M outcome rows, "
        f"{paper_rows / len(table):.1f}x these; its projection is the line through the half and "
        "the full set (fixed cost + cost per row). The report reads no trace rows."
    )


if __name__ == "__main__":
    main()
