"""``make reproduce-chapter3|reproduce-chapter5|reproduce-esmbo|reproduce-hierarchical ...``
(``reproduce-autoweka`` too; ``PROFILE=smoke|medium|paper``): sweep (parts that run after others
once those finish), consolidate, report.

The sweep resumes (finished runs are skipped), so the same command picks up where an interrupted
reproduction stopped; the report is regenerated from everything finished. The report goes to
``results/<experiment>/<profile>/report/``. An own experiment file (``experiment/<name>.yaml`` of
a package's or folder's conf, ``--search-path pkg://my_pkg/conf``) runs the same way: ``make
reproduce-benchmark BENCHMARK=<name> SEARCH_PATH=pkg://my_pkg/conf``.
"""

from __future__ import annotations

import argparse
import sys
import time

from experiments.configuration.config import UsageError
from experiments.configuration.search_path import use_search_path
from experiments.run.progress import interval_seconds
from experiments.sweep import (
    RESULTS_ROOT,
    add_candidates,
    check_data,
    consolidate,
    plan,
    record_dataset_notes,
    run_all,
)
from runfiles import layout
from runfiles.files import ensure_writable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.reproduce", description=__doc__)
    parser.add_argument(
        "experiment",
        help="a study (chapter3, chapter4, chapter5, esmbo, ensembles, surrogates, hierarchical, "
        "autoweka), benchmark, or an own experiment file's name found with --search-path",
    )
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--jobs", type=int, default=-1, help="parallel workers (-1 = all cores)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--candidates",
        default="",
        help="benchmark: optimizer configs to rank beside the baselines (comma separated)",
    )
    parser.add_argument(
        "--search-path",
        default="",
        help="where own experiment, method and space files are, e.g. pkg://my_optimizer/conf",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        use_search_path([p for p in args.search_path.split(",") if p])
        if args.candidates:
            names = [n for n in args.candidates.split(",") if n]
            paths = [p for p in args.search_path.split(",") if p]
            add_candidates(args.experiment, args.profile, names, RESULTS_ROOT, paths)
        runs = plan(args.experiment, args.profile, RESULTS_ROOT, args.data_dir)
        check_data(runs, args.data_dir)
        ensure_writable(RESULTS_ROOT)
        interval_seconds()  # a bad $HPO_PROGRESS_SECONDS: one line before anything runs
        notes = record_dataset_notes(args.experiment, args.profile, RESULTS_ROOT, args.data_dir)
    except (UsageError, PermissionError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{args.experiment}/{args.profile}: {len(runs)} runs")
    for name, note in notes.items():
        print(f"  {name}: {note}")
    sweep_dir = layout.sweep_dir(args.experiment, args.profile)
    runs, counts = run_all(args.experiment, args.profile, data_dir=args.data_dir, n_jobs=args.jobs)
    consolidate(runs, sweep_dir / layout.CONSOLIDATED)
    from analysis.plugins import REGISTRY
    from analysis.report import write_report

    plugin = args.experiment if args.experiment in REGISTRY else None  # an own one: chosen
    report = write_report(str(sweep_dir), None, None, chapter=plugin)
    minutes = (time.perf_counter() - started) / 60
    print(f"runs: {counts}; report: {report}; {minutes:.1f} min")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
