"""``tools/drift_check.py compare``: a changed cell or a lost column is a difference, a column the
newer folder adds is named and is not, and a changed identity is a missing file."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from drift_check import compare  # noqa: E402


def _write(root: Path, frame: pd.DataFrame, name: str = "iris/rs__holdout__h.parquet") -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path)


def test_compare_counts_changed_cells_and_lost_columns_not_added_ones(tmp_path: Path, capsys):  # noqa: ANN001
    base = pd.DataFrame({"valid_loss": [0.25, 0.125], "run_seconds": [1.0, 2.0]})
    _write(tmp_path / "before", base)
    _write(tmp_path / "same", base.assign(run_seconds=[9.0, 9.0]))  # measured seconds left out
    _write(tmp_path / "added", base.assign(method_hash="abc"))
    _write(tmp_path / "changed", base.assign(valid_loss=[0.25, 0.125 + 1e-12]))
    _write(tmp_path / "lost", base.drop(columns="valid_loss"))
    _write(tmp_path / "renamed", base, "iris/rs__holdout__other.parquet")
    before = tmp_path / "before"
    assert compare(before, tmp_path / "same") == 0
    assert compare(before, tmp_path / "added") == 0
    assert "identical (2 rows; columns added: method_hash)" in capsys.readouterr().out
    assert compare(before, tmp_path / "changed") == 1
    assert compare(before, tmp_path / "lost") == 1
    assert compare(before, tmp_path / "renamed") == 1
    assert "missing in" in capsys.readouterr().out
