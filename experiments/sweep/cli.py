"""The sweep command line (``python -m experiments.sweep``): run, status, plan, cost and
consolidate an experiment profile, a shard of it, or some of its parts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments.configuration.config import UsageError
from experiments.configuration.search_path import use_search_path
from experiments.run.interrupt import Interrupted
from experiments.run.progress import interval_seconds
from experiments.sweep.candidates import add_candidates, checked_candidates
from experiments.sweep.execution import run_all
from experiments.sweep.merge import consolidate
from experiments.sweep.planning import PlannedRun, check_data, of_parts, plan, record_dataset_notes
from experiments.sweep.states import print_shards, print_status, shard_status, status
from experiments.sweep.workers import mark_interrupted, signal_name
from runfiles import layout
from runfiles.files import ensure_writable
from runfiles.layout import RESULTS_ROOT


def parser() -> argparse.ArgumentParser:
    """The command line's arguments; the package's docstring is its help."""
    import experiments.sweep as sweep_package

    parser = argparse.ArgumentParser(
        prog="python -m experiments.sweep",
        description=sweep_package.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=["run", "status", "consolidate", "plan", "cost"])
    parser.add_argument("experiment")
    parser.add_argument("--profile", default=None, help="default: the experiment's first")
    parser.add_argument("--jobs", type=int, default=-1, help="parallel workers (-1 = all cores)")
    parser.add_argument(
        "--shard", type=int, default=None, help="default 0; status: every shard, one line each"
    )
    parser.add_argument("--n-shards", type=int, default=1)
    parser.add_argument("--results-root", type=Path, default=RESULTS_ROOT)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--max-memory-gb", type=float, default=None)
    parser.add_argument("--max-array-size", type=int, default=1001, help="cost: SLURM's limit")
    parser.add_argument(
        "--candidates",
        default="",
        help="optimizer configs to add to a benchmark's parts (comma separated; remembered)",
    )
    parser.add_argument(
        "--search-path",
        default="",
        help="where own experiment, method and space files are, beside conf/: "
        "pkg://their_package/conf or file:///abs/conf (comma separated)",
    )
    parser.add_argument(
        "--parts", default="", help="only these parts of the profile (comma separated)"
    )
    return parser


def _listed(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def _planned(args: argparse.Namespace, parts: list[str] | None) -> list[PlannedRun]:
    """The profile's runs (of ``parts``), a benchmark's ``--candidates`` added: remembered by
    ``run`` (later commands plan the same runs), a dry run's for the others (nothing written)."""
    extra = None
    if args.candidates:
        names, paths = _listed(args.candidates), _listed(args.search_path)
        if args.command == "run":
            add_candidates(args.experiment, args.profile, names, args.results_root, paths)
        else:
            extra = checked_candidates(
                args.experiment, args.profile, names, args.results_root, paths
            )
    runs = plan(args.experiment, args.profile, args.results_root, args.data_dir, extra)
    return of_parts(runs, parts)


def _cost(args: argparse.Namespace, runs: list[PlannedRun]) -> int:
    """The whole sweep priced as a cluster submission of ``--n-shards`` jobs."""
    from experiments.cluster import print_cost

    name = runs[0].path.parents[3].parent.name if runs else args.experiment
    profile = runs[0].path.parents[3].name if runs else args.profile
    return print_cost(name, profile, runs, args.n_shards, args.max_array_size)


def _shards_status(args: argparse.Namespace, runs: list[PlannedRun]) -> int:
    """Every run's state, then one line per shard; 1 when a shard failed."""
    shards = shard_status(args.experiment, args.profile, runs, args.n_shards, args.results_root)
    print_status(status(runs))
    print_shards(shards)
    return 1 if (shards["state"] == "failed").any() else 0


def _run(args: argparse.Namespace, runs: list[PlannedRun], parts: list[str] | None) -> int:
    """Run the shard (data checked and the dataset notes kept first); a signal keeps what
    finished, marks what it stopped, and exits 130 or 143; 1 when a run failed."""
    interval_seconds()  # a bad $HPO_PROGRESS_SECONDS: one line before anything runs
    check_data(runs, args.data_dir)
    ensure_writable(args.results_root)
    notes = record_dataset_notes(args.experiment, args.profile, args.results_root, args.data_dir)
    for name, note in notes.items():
        print(f"{name}: {note}")
    try:
        runs, counts = run_all(
            args.experiment,
            args.profile,
            args.results_root,
            args.data_dir,
            args.shard,
            args.n_shards,
            parts,
            n_jobs=args.jobs,
            max_memory_gb=args.max_memory_gb,
        )
    except (Interrupted, KeyboardInterrupt) as stop:
        name = signal_name(stop)
        code = stop.exit_code if isinstance(stop, Interrupted) else 130
        marked = mark_interrupted(runs, name)
        finished = sum(run.path.exists() for run in runs)
        print(
            f"interrupted ({name}): {finished} of {len(runs)} runs finished are "
            f"kept, {marked} stopped mid-run marked interrupted; run the same command "
            "to go on",
            file=sys.stderr,
            flush=True,
        )
        return code
    print(f"finished: {counts}")
    print_status(status(runs))
    return 1 if counts["failed"] else 0


def _consolidate(args: argparse.Namespace, runs: list[PlannedRun]) -> int:
    out = runs[0].path.parents[3] / layout.CONSOLIDATED if runs else args.results_root
    record_dataset_notes(args.experiment, args.profile, args.results_root, args.data_dir)
    for row_type, path in consolidate(runs, out).items():
        print(f"{row_type}s: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv``; its exit code (2 and one line for bad input)."""
    args = parser().parse_args(argv)
    parts = _listed(args.parts) or None
    try:
        use_search_path(_listed(args.search_path))
        per_shard = args.command == "status" and args.shard is None and args.n_shards > 1
        args.shard = args.shard or 0
        if not 0 <= args.shard < args.n_shards:
            raise UsageError(f"shard must be in [0, {args.n_shards}), got {args.shard}")
        runs = _planned(args, parts)
        if args.command == "cost":
            return _cost(args, runs)
        if per_shard:
            return _shards_status(args, runs)
        runs = runs[args.shard :: args.n_shards]
        if args.command == "plan":
            print(status(runs).drop(columns="error").to_string(index=False))
            return 0
        if args.command == "run":
            return _run(args, runs, parts)
        if args.command == "status":
            frame = status(runs)
            print_status(frame)
            return 1 if frame["state"].isin(["failed", "corrupt"]).any() else 0
        return _consolidate(args, runs)
    except (UsageError, PermissionError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
