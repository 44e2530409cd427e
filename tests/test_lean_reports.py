"""``--no-figures`` builds no figure in the Chapter-4 and Chapter-5 reports: every figure of
their plug-ins is handed to ``render.FigureSet`` as a callable that is never called
when figures are off, so the lean report costs no drawing (the Chapter-3 plug-in's own check
is ``tests/test_report.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_analysis_chapter4
import test_analysis_chapter5

from analysis import figures as analysis_figures
from analysis.chapter4 import figures as chapter4_figures
from analysis.chapter5 import figures as chapter5_figures
from analysis.report import write_report

DRAWING_FUNCTIONS = {
    chapter4_figures: ["figure_4_5", "figure_4_6", "figure_4_7"],
    chapter5_figures: [
        "figure_5_2", "figure_5_3", "figure_5_5", "figure_5_7", "figure_5_8", "figure_5_9",
        "kernel_matrices",
    ],
}  # fmt: skip


def _forbid_drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a figure was built under --no-figures")

    for module, names in DRAWING_FUNCTIONS.items():
        for name in names:
            monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize(
    "rows", [test_analysis_chapter4.outcome_rows, test_analysis_chapter5.outcome_rows]
)
def test_no_figures_builds_no_figure(rows, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    rows().to_parquet(tmp_path / "outcomes.parquet", index=False)
    _forbid_drawing(monkeypatch)
    with analysis_figures.formats():
        report = write_report(tmp_path, tmp_path / "lean")
    assert analysis_figures.NOT_DRAWN in report.read_text()
    assert not (tmp_path / "lean" / "figures").exists()
    with pytest.raises(AssertionError, match="no-figures"):  # the guard itself bites
        write_report(tmp_path, tmp_path / "full")
