"""Every figure of a report draws a method in one style (``analysis.figures.method_styles``).

A benchmark of a user's optimizer beside built-in ones (``my_de``, ``SMAC``, ``GP-cond``, ``gp``,
``rs``): the report's convergence figure and its critical-difference diagrams, read back from the
drawn artists, give each method a (colour, line style, marker) of its own; the thesis's methods
keep the thesis's colours, and a method looks the same in the convergence figure as in the CD
diagram.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from analysis import figures
from analysis.report import write_report

METHODS = ("my_de", "SMAC", "GP-cond", "gp", "rs")
DATASETS = ("iris", "wine", "glass", "yeast")
BUDGET = 6
THESIS_COLOURS = {"gp": "tab:blue", "rs": "tab:purple", "SMAC": "tab:green"}  # Figs 3.3, 5.7

Style = tuple[str, str, str]


def outcome_rows() -> pd.DataFrame:
    """Hold-out runs of :data:`METHODS` on :data:`DATASETS`, one repetition each."""
    rows = []
    for dataset, method in itertools.product(DATASETS, METHODS):
        final = float(np.random.default_rng([sum(map(ord, dataset + method))]).uniform(0.05, 0.4))
        for t in range(1, BUDGET + 1):
            test = final + 0.02 * (BUDGET - t) / BUDGET
            rows.append(
                {
                    "run_id": f"{method}:{dataset}:holdout:0:0:cafe", "row_type": "outcome",
                    "method": method, "rule": "best_validation", "dataset": dataset,
                    "protocol": "holdout", "repetition": 0, "seed": 0, "iteration": t,
                    "incumbent_iteration": t, "incumbent_valid_loss": test - 0.01,
                    "test_error": test, "test_fit_limit_hit": False, "budget": BUDGET,
                    "part": "main",
                }
            )  # fmt: skip
    return pd.DataFrame(rows).astype({"iteration": "Int64", "incumbent_iteration": "Int64"})


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Figure]:
    """The figures a benchmark report on :func:`outcome_rows` draws, by name."""
    folder = tmp_path_factory.mktemp("benchmark") / "consolidated"
    folder.mkdir()
    outcome_rows().to_parquet(folder / "outcomes.parquet", index=False)
    saved: dict[str, Figure] = {}
    original = figures.save

    def record(figure: Figure, out_dir: str | Path, name: str) -> list[Path]:
        saved[name] = figure
        return original(figure, out_dir, name)

    with pytest.MonkeyPatch.context() as patch, figures.formats("png"):
        patch.setattr(figures, "save", record)
        write_report(folder, chapter="benchmark")
    return saved


def style(line: Line2D) -> Style:
    return to_hex(line.get_color()), line.get_linestyle(), str(line.get_marker())


def method_lines(figure: Figure, panel: int) -> dict[str, Line2D]:
    """The lines of ``figure``'s axes ``panel`` labelled with a method, by method."""
    lines = figure.axes[panel].get_lines()
    return {line.get_label(): line for line in lines if line.get_label() in METHODS}


def test_each_method_has_a_style_of_its_own_in_the_convergence_figure(
    drawn: dict[str, Figure],
) -> None:
    ranks = method_lines(drawn["convergence"], 1)  # the rank panel: lines and markers
    assert sorted(ranks) == sorted(METHODS)
    styles = [style(line) for line in ranks.values()]
    assert len(set(styles)) == len(METHODS), styles
    errors = method_lines(drawn["convergence"], 0)  # the error panel: lines only
    assert len({style(line)[:2] for line in errors.values()}) == len(METHODS)


def test_the_thesis_s_methods_keep_their_colours(drawn: dict[str, Figure]) -> None:
    ranks = method_lines(drawn["convergence"], 1)
    for method, colour in THESIS_COLOURS.items():
        assert style(ranks[method])[:2] == (to_hex(colour), "-"), method
    others = {style(ranks[m])[0] for m in ("my_de", "GP-cond")}
    assert not others & {to_hex(c) for c in figures.COLOURS.values()}


@pytest.mark.parametrize("variant", ["nemenyi", "wilcoxon_holm"])
def test_a_method_looks_the_same_in_the_cd_diagram(drawn: dict[str, Figure], variant: str) -> None:
    convergence = method_lines(drawn["convergence"], 1)
    diagram = method_lines(drawn[f"holdout_main_cd_{variant}"], 0)
    assert sorted(diagram) == sorted(METHODS)
    assert {m: style(line) for m, line in diagram.items()} == {
        m: style(line) for m, line in convergence.items()
    }


def test_styles_are_distinct_beyond_the_palette() -> None:
    many = [f"method{i:02d}" for i in range(60)]
    styles = figures.method_styles([*many, "grid", "SMAC", "gp-r"])
    triples = {(s.color, s.linestyle, s.marker) for s in styles.values()}
    assert len(triples) == len(styles)
    assert styles["grid"] == figures.THESIS_STYLES["grid"]
    assert styles["SMAC"] != figures.THESIS_STYLES["SMAC"]  # grid has its green first
    assert styles["gp-r"].linestyle == "--"


def test_a_style_does_not_depend_on_the_panel_within_a_report() -> None:
    with figures.report_methods(["zeta", "alpha", "gp"]):
        alone = figures.method_styles(["zeta"])["zeta"]
        assert alone == figures.method_styles(["alpha", "zeta"])["zeta"] == figures.palette_style(1)
    assert figures.method_styles(["zeta"])["zeta"] == figures.palette_style(0)  # no report
