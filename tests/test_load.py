"""Tests of analysis.load's reading of run files: layouts and unreadable files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import load
from analysis.__main__ import main


def _outcomes(dataset: str, method: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": f"{dataset}:{method}",
            "row_type": "outcome",
            "method": method,
            "dataset": dataset,
            "protocol": "holdout",
            "repetition": 0,
            "iteration": [1, 2],
            "budget": 2,
            "test_error": [0.2, 0.1],
            "incumbent_valid_loss": [0.25, 0.15],
            "git_revision": f"rev-{dataset}",
        }
    )


def write_runs(runs_dir: Path, datasets: tuple[str, ...] = ("iris", "wine")) -> list[Path]:
    """One run file per (dataset, method) in ``runs_dir/<dataset>/`` (no part level)."""
    paths = []
    for dataset in datasets:
        for method in ("rs", "gp"):
            path = runs_dir / dataset / f"{method}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            _outcomes(dataset, method).to_parquet(path, index=False)
            paths.append(path)
    return paths


def test_run_files_without_a_part_level_are_found(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    sidecar = paths[0].with_name(paths[0].stem + ".predictions.parquet")
    pd.DataFrame({"prediction": [1, 0]}).to_parquet(sidecar)  # not a run file: ignored
    outcomes = load.load_outcomes(tmp_path)
    assert set(outcomes["dataset"]) == {"iris", "wine"}
    assert set(outcomes["part"]) == {"main"}
    assert outcomes.attrs[load.UNREADABLE] == {}


def test_truncated_file_is_named_skipped_and_counted(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    truncated = paths[0]
    truncated.write_bytes(truncated.read_bytes()[:40])
    with pytest.warns(UserWarning, match=str(truncated)):
        outcomes = load.load_outcomes(tmp_path)
    assert list(outcomes.attrs[load.UNREADABLE]) == [str(truncated)]
    assert len(outcomes["run_id"].unique()) == len(paths) - 1


def test_report_says_how_many_files_were_left_out(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    paths[-1].write_bytes(b"PAR1 not really")
    with pytest.warns(UserWarning):
        assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "1 results file could not be read and was left out" in text
    warning = text.index("mix 2 code revisions")  # one revision per dataset in write_runs
    assert warning < text.index("## 1.")  # at the top, before the first section
    assert str(paths[-1]) in text


@pytest.mark.parametrize("consolidated", [True, False])
def test_categorical_names_hold_the_same_rows_with_sorted_categories(
    tmp_path: Path, consolidated: bool
) -> None:
    """Names read as categoricals straight from the file's dictionary pages (or
    converted after reading run files) hold exactly the plain read's values, with categories
    sorted, so every groupby over them orders its groups as before."""
    write_runs(tmp_path / "runs", datasets=("wine", "iris", "abalone"))  # not in sorted order
    if consolidated:
        frames = [pd.read_parquet(path) for path in load.layout.run_files(tmp_path / "runs")]
        pd.concat(frames[::-1], ignore_index=True).to_parquet(tmp_path / "outcomes.parquet")
    plain = load.load_outcomes(tmp_path)
    named = load.load_outcomes(tmp_path, categorical_names=True)
    for column in ("run_id", "method", "dataset", "protocol", "part"):
        assert isinstance(named[column].dtype, pd.CategoricalDtype), column
        categories = list(named[column].cat.categories)
        assert categories == sorted(categories), column
    pd.testing.assert_frame_equal(load.with_string_names(named), plain, check_dtype=False)
    groups = named.groupby("dataset", observed=True).size()
    assert list(groups.index) == ["abalone", "iris", "wine"]
