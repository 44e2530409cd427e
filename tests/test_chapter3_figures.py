"""The Chapter-3 figures say what they draw: Fig 3.1's axes hold every value they plot, Fig 3.3's
rank axis says among how many methods the ranks are and how many are drawn, and a method that
ran fewer evaluations than its budget (grid search: the largest full grid within it) is named in
a note that the report and Fig 3.3 print."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.chapter3 import data, figures
from analysis.chapter3.claims import MAIN_METHODS


def _curve(first: float, rest: float, n: int = 40) -> pd.DataFrame:
    """gp's incumbent errors: ``first`` for the first 3 evaluations, then about ``rest``."""
    valid = np.r_[[first] * 3, rest - np.linspace(0, 2, n - 3)]
    return pd.DataFrame(
        {"iteration": np.arange(1, n + 1), "valid_error": valid, "test_error": valid + 1.5}
    )


@pytest.mark.parametrize(("first", "panels"), [(65.0, 2), (23.0, 1)])
def test_fig_3_1_axes_hold_every_value_they_plot(first: float, panels: int) -> None:
    """First incumbents at 65 % against about 20 % later: nothing is clipped above the axis;
    a second panel zooms on the rest. Without such a head, one panel."""
    figure = figures.figure_3_1(_curve(first, 20.0), "glass", 3)
    assert len(figure.axes) == panels
    for ax in figure.axes:
        low, high = ax.get_ylim()
        values = np.concatenate([line.get_ydata() for line in ax.get_lines()])
        assert values.size and low <= values.min() and values.max() <= high, (low, high)
    assert figure.axes[0].get_lines()[0].get_ydata().max() == first


def test_fig_3_3_rank_axis_says_among_how_many_methods_and_how_many_are_drawn() -> None:
    ranks = pd.DataFrame(
        np.tile(np.arange(1.0, 15.0), (3, 1)), index=[6, 12, 24], columns=list(MAIN_METHODS)
    )
    errors = pd.DataFrame({m: [20.0, 19.0] for m in MAIN_METHODS}, index=[1, 24])
    figure = figures.figure_3_3({"holdout": errors}, {"holdout": ranks}, 5)
    assert figure.axes[2].get_ylabel() == "average rank among 14 methods (6 drawn)"
    subset = ranks[["grid", "rs", "gp", "gp-sel"]]
    assert figures.rank_label([subset]) == "average rank among 4 methods (3 drawn)"


def _outcomes(evaluations: dict[str, int], budget: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"method": method, "budget": budget, "iteration": t, "run_id": f"{method}:{rep}"}
            for method, n in evaluations.items()
            for rep in range(2)
            for t in range(1, n + 1)
        ]
    )


def test_grid_search_short_of_its_budget_is_noted_in_the_report_and_fig_3_3() -> None:
    """Budget 24: grid runs floor(sqrt(24))^2 = 16 evaluations, the others 24; the note names
    grid's 16 and the budget, and Fig 3.3 prints it. Budget 25 (a full 5 x 5 grid): no note."""
    outcomes = _outcomes({"grid": 16, "rs": 24, "gp": 24}, 24)
    short = data.short_of_budget(outcomes)
    assert short.to_dict("records") == [{"method": "grid", "budget": 24, "evaluations": 16}]
    note = data.budget_note(outcomes)
    assert note.startswith("Note: grid ran 16 evaluations, fewer than its budget of 24 (the")
    assert "rs ran" not in note and "gp ran" not in note
    errors = pd.DataFrame({"grid": [30.0, 25.0], "rs": [30.0, 24.0]}, index=[1, 16])
    figure = figures.figure_3_3({"holdout": errors}, {}, 5, note)
    assert figure.get_suptitle() == note
    assert data.budget_note(_outcomes({"grid": 25, "rs": 25}, 25)) == ""
