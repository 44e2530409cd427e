"""Consolidation: a sweep's finished runs merged into one outcomes table and one traces table."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from experiments.configuration.config import (
    UsageError,
)
from experiments.sweep.planning import PlannedRun


def consolidate(runs: Sequence[PlannedRun], out_dir: Path) -> dict[str, Path]:
    """Merge finished runs into ``outcomes.parquet`` and ``traces.parquet`` (atomic writes).
    A file that cannot be read is named on stderr and left out; the rest are merged."""
    frames, unreadable = [], []
    for run in runs:
        if run.path.exists():
            try:
                frames.append(pd.read_parquet(run.path).assign(part=run.part))
            except Exception as err:  # noqa: BLE001 - any unreadable file is named, not fatal
                unreadable.append(f"{run.path} ({type(err).__name__})")
    for name in unreadable:
        print(f"warning: left out unreadable results file {name}", file=sys.stderr)
    if unreadable:
        print(f"warning: {len(unreadable)} unreadable file(s) left out", file=sys.stderr)
    if not frames:
        raise UsageError("no finished runs to consolidate")
    table = pd.concat(frames, ignore_index=True)
    table["part"] = table["part"].astype("string")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for row_type in ("outcome", "trace"):
        subset = table[table["row_type"] == row_type].dropna(axis=1, how="all")
        path = out_dir / f"{row_type}s.parquet"
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        subset.reset_index(drop=True).to_parquet(temporary, index=False)
        os.replace(temporary, path)
        written[row_type] = path
    return written
