"""The report's ``tables/*.csv`` hold data, the Markdown the marks (``analysis.render``).

A small demo report (synthetic results: two repetitions on one dataset, one on the others): every
CSV reads back without Markdown (no ``**bold**``, no "mean (std)" strings), the test-error table
with numeric columns — per method its mean and a ``std`` column — and a std over one repetition,
undefined, is empty in the CSV and ``n/a`` in the Markdown.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import figures, render
from analysis.report import write_report

METHODS = ("my_de", "gp", "rs")
DATASETS = ("iris", "wine", "glass", "yeast")
BUDGET = 4
REPETITIONS = {"iris": 2}  # the others: 1
MEAN_STD = re.compile(r"\d \((\d|n/a)")  # a "mean (std)" cell


def outcome_rows() -> pd.DataFrame:
    """Hold-out runs of :data:`METHODS` on :data:`DATASETS` (:data:`REPETITIONS` each)."""
    rows = []
    for dataset, method in itertools.product(DATASETS, METHODS):
        for rep in range(REPETITIONS.get(dataset, 1)):
            rng = np.random.default_rng([sum(map(ord, dataset + method)), rep])
            final = float(rng.uniform(0.05, 0.4))
            for t in range(1, BUDGET + 1):
                rows.append(
                    {
                        "run_id": f"{method}:{dataset}:holdout:0:{rep}:cafe",
                        "row_type": "outcome", "method": method, "rule": "best_validation",
                        "dataset": dataset, "protocol": "holdout", "repetition": rep, "seed": 0,
                        "iteration": t, "incumbent_iteration": t,
                        "incumbent_valid_loss": final - 0.01, "test_error": final,
                        "test_fit_limit_hit": False, "budget": BUDGET, "part": "main",
                    }
                )  # fmt: skip
    return pd.DataFrame(rows).astype({"iteration": "Int64", "incumbent_iteration": "Int64"})


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo") / "consolidated"
    folder.mkdir()
    outcome_rows().to_parquet(folder / "outcomes.parquet", index=False)
    with figures.formats():  # tables only
        return write_report(folder, chapter="demo")


def test_no_csv_holds_markdown(report: Path) -> None:
    paths = sorted((report.parent / "tables").glob("*.csv"))
    assert paths
    for path in paths:
        text = pd.read_csv(path, dtype=str).fillna("")
        cells = text.to_numpy().ravel()
        assert not [c for c in cells if "**" in c or MEAN_STD.search(c)], path.name


def test_the_test_error_table_holds_means_and_stds_as_numbers(report: Path) -> None:
    table = pd.read_csv(report.parent / "tables" / "test_error_holdout_main.csv", index_col=0)
    assert set(table.columns) == {*METHODS, *(f"{m} std" for m in METHODS)}
    assert all(pd.api.types.is_float_dtype(dtype) for dtype in table.dtypes), table.dtypes
    assert list(table.index) == [*sorted(DATASETS), "average rank"]
    stds = table[[f"{m} std" for m in METHODS]]
    assert stds.loc["iris"].notna().all()  # two repetitions
    assert stds.drop(index=["iris"]).isna().all().all()  # one repetition (and the ranks)
    rng = np.random.default_rng([sum(map(ord, "wine" + "gp")), 0])
    assert table.loc["wine", "gp"] == pytest.approx(100 * rng.uniform(0.05, 0.4))
    assert table.loc["average rank", list(METHODS)].sum() == pytest.approx(6.0)  # 1 + 2 + 3


def test_the_markdown_says_n_a_for_a_std_over_one_repetition(report: Path) -> None:
    text = report.read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("|")}
    assert rows["wine"].count("(n/a)") == len(METHODS)
    assert "n/a" not in rows["iris"] and rows["iris"].count("(") == len(METHODS)
    assert "**" in rows["wine"]  # the lowest mean is bold in the Markdown only


def test_mean_std_cells_mark_only_the_markdown() -> None:
    means = pd.DataFrame({"a": [1.0, np.nan], "b": [2.0, 0.5]}, index=["x", "y"])
    stds = pd.DataFrame({"a": [0.1, np.nan], "b": [0.0, 0.2]}, index=["x", "y"])
    counts = pd.DataFrame({"a": [3, 0], "b": [1, 2]}, index=["x", "y"])
    cells, numbers = render.mean_std_cells(means, stds, counts)
    assert cells.loc["x"].tolist() == ["**1.00 (0.10)**", "2.00 (n/a)"]
    assert cells.loc["y"].tolist() == [render.MISSING, "**0.50 (0.20)**"]
    assert list(numbers.columns) == ["a", "a std", "b", "b std"]
    assert numbers.loc["x"].tolist() == pytest.approx([1.0, 0.1, 2.0, np.nan], nan_ok=True)


def test_a_table_without_data_loses_its_bold_in_the_csv(tmp_path: Path) -> None:
    frame = pd.DataFrame({"value": ["**1.5**", "2.0"], "n": [1, 2]}, index=["a", "b"])
    markdown = render.TableWriter(tmp_path)(frame, "t", "caption")
    assert "**1.5**" in markdown
    assert pd.read_csv(tmp_path / "tables" / "t.csv", index_col=0)["value"].tolist() == [1.5, 2.0]
