"""Results must not drift: run a fixed set of short runs (one or more per study) and compare two
such result folders table by table.

A change meant to keep results (a refactor, a move of modules) is checked by running the set at
the commit before it and at the commit after it, then comparing::

    git worktree add /tmp/before <commit before>
    (cd /tmp/before && python tools/drift_check.py run /tmp/drift-before)   # this file's copy
    python tools/drift_check.py run /tmp/drift-after
    python tools/drift_check.py compare /tmp/drift-before /tmp/drift-after

``compare`` reads every results file of the first folder, finds the file of the same name in the
second (file names are hashes of the runs' identities, so a changed identity is a missing file)
and compares every table cell by cell, leaving out only what describes the machine or the
moment: provenance (code revision, package versions, dates) and the columns of measured seconds.
A column the second folder adds is named, not counted as a difference (it records more, and
changes nothing recorded); a column it lacks is a difference.
It prints one line per file and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

# One or more short runs per study: overrides of `python run.py`.
RUNS: dict[str, list[str]] = {
    "chapter3-gp-r": ["optimizer=gp_r", "dataset=sklearn-breast-cancer", "budget=8"],
    "chapter3-cma-pv": ["optimizer=cma_pv", "dataset=sklearn-wine", "budget=12"],
    "chapter3-grid-cv5": ["optimizer=grid", "dataset=sklearn-iris", "budget=9", "protocol=cv5"],
    "chapter3-rs-sel": ["optimizer=gp_sel", "dataset=sklearn-iris", "budget=6"],
    "chapter4-eo": ["optimizer=eo", "dataset=sklearn-iris", "budget=8"],
    "chapter4-bo-post": ["optimizer=bo_post", "dataset=sklearn-wine", "budget=8"],
    "chapter5-gp-cond": ["optimizer=gp_cond", "dataset=sklearn-iris", "budget=8"],
    "chapter5-smac": ["optimizer=smac", "dataset=sklearn-wine", "budget=10"],
    "esmbo": ["optimizer=esmbo", "dataset=sklearn-iris", "budget=8"],
    "surrogates-tpe": ["optimizer=tpe", "dataset=sklearn-iris", "budget=10"],
    "surrogates-hyperband": [
        "optimizer=hyperband",
        "dataset=sklearn-digits",
        "space=ffnn_mnist",
        "budget=12",
        "space.settings.max_epochs=8",
        "optimizer.settings.max_resource=8",
    ],
    "autoweka-random": [
        "optimizer=aw_random",
        "dataset=sklearn-iris",
        "space=autoweka_classification",
        "space.learners=[knn,j48,bagging]",
        "space.max_ensemble=1",
        "budget=20",
        "time_budget=null",
    ],
    "autoweka-smac": [
        "optimizer=aw_smac",
        "dataset=sklearn-iris",
        "space=autoweka_classification",
        "space.learners=[knn,j48,bagging]",
        "space.max_ensemble=1",
        "budget=12",
        "time_budget=null",
    ],
    "hierarchical-hrs": [
        "optimizer=hrs",
        "dataset=sklearn-iris",
        "budget=8",
        "protocol.n_folds=3",
        "optimizer.model_selection.repeats=1",
        "optimizer.model_selection.folds=3",
    ],
    "hierarchical-hypercube": [
        "optimizer=hypercube",
        "dataset=sklearn-wine",
        "budget=8",
        "protocol.n_folds=3",
        "optimizer.model_selection.repeats=1",
        "optimizer.model_selection.folds=3",
    ],
}
# What describes the machine or the moment, not the results.
PROVENANCE_COLUMNS = {"git_revision", "git_dirty", "versions", "finished_at", "run_seconds"}


def _measured(column: str) -> bool:
    return column in PROVENANCE_COLUMNS or "seconds" in column  # optimizer_seconds_total too


def run(out: Path) -> int:
    """Run every entry of :data:`RUNS` into ``out`` (a run already there is not run again)."""
    failed = []
    for name, overrides in RUNS.items():
        command = [sys.executable, "run.py", *overrides, f"results_dir={out}"]
        done = subprocess.run(command, capture_output=True, text=True)
        status = "ok" if done.returncode == 0 else f"failed ({done.returncode})"
        print(f"{name}: {status}", flush=True)
        if done.returncode:
            print(done.stderr[-2000:], file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


def _results(path: Path) -> pd.DataFrame:
    """A results file's rows without the columns that describe the machine or the moment."""
    frame = pq.read_table(path).to_pandas()
    return frame[[c for c in frame.columns if not _measured(c)]].reset_index(drop=True)


def compare(before: Path, after: Path) -> int:
    """Compare every results file of ``before`` with its namesake in ``after``."""
    files = sorted(before.rglob("*.parquet"))
    if not files:
        print(f"no results files in {before}", file=sys.stderr)
        return 2
    differences = 0
    for path in files:
        relative = path.relative_to(before)
        other = after / relative
        if not other.exists():
            print(f"{relative}: missing in {after} (another identity)")
            differences += 1
            continue
        left, right = _results(path), _results(other)
        added = [c for c in right.columns if c not in left.columns]  # a new column keeps results
        try:
            pd.testing.assert_frame_equal(left, right.drop(columns=added), check_exact=True)
        except AssertionError as error:
            print(f"{relative}: rows differ: {str(error).splitlines()[0]}")
            differences += 1
        else:
            note = f"; columns added: {', '.join(added)}" if added else ""
            print(f"{relative}: identical ({len(left)} rows{note})")
    print(f"{len(files)} files compared, {differences} differ")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/drift_check.py", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.out)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
