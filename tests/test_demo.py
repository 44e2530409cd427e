"""``make demo`` ends with its report (the path printed last), and the report holds what ran:
no "missing" cell, no empty panel, nothing of methods or validation types that did not run."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import load
from analysis.demo import report
from experiments import demo

TINY = """
name: demo
space: svm_rbf
profiles:
  default:
    parts:
      main: {datasets: [sklearn-iris, sklearn-wine, sklearn-breast-cancer],
             methods: [grid, rs, cma], protocols: [holdout], repetitions: 1, budget: 8, seed: 0}
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    root = tmp_path_factory.mktemp("demo")
    config = root / "demo.yaml"
    config.write_text(TINY)
    with pytest.MonkeyPatch.context() as patch:
        lines: list[str] = []
        patch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
        assert demo.main(root / "results", n_jobs=1, experiment=str(config)) == 0
    return "\n".join(lines).splitlines(), root / "results" / "demo" / "default"


def test_the_last_line_is_the_report_path(finished: tuple[list[str], Path]) -> None:
    lines, folder = finished
    assert lines[-1] == f"report: {folder / 'report' / 'report.md'}"
    assert Path(lines[-1].removeprefix("report: ")).is_file()


def test_the_report_holds_only_what_ran(finished: tuple[list[str], Path]) -> None:
    _, folder = finished
    text = (folder / "report" / "report.md").read_text()
    assert text.startswith("# Demo report")
    for absent in ("missing", "5-fold", "-pm", "('", "thesis (Table"):
        assert absent not in text, absent
    assert "grid (4)" in text  # grid's 2 x 2 grid within budget 8 is said
    figures = {path.name for path in (folder / "report" / "figures").glob("*.png")}
    assert figures == {
        "convergence.png",
        "holdout_main_cd_nemenyi.png",
        "holdout_main_cd_wilcoxon_holm.png",
    }


def test_every_panel_of_the_convergence_figure_has_data(finished: tuple[list[str], Path]) -> None:
    _, folder = finished
    outcomes = load.load_outcomes(folder)
    tables = load.score_tables(load.per_dataset_errors(outcomes))
    errors, ranks = report.curve_tables(outcomes, tables)
    assert list(errors) == [("holdout", "main")]
    figure = report.convergence_figure(errors, ranks, {("holdout", "main"): "hold-out"})
    assert len(figure.axes) == 2
    for ax in figure.axes:
        assert len(ax.lines) == 3, ax.get_title()  # grid, rs, cma
        assert not ax.texts  # no "no data" panel


def test_smallest_attainable_p_follows_the_number_of_datasets() -> None:
    assert report.smallest_p(4) > 0.05  # four datasets can never be significant
    assert report.smallest_p(20) < 0.001
