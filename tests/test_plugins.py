"""Tests of analysis.plugins: which chapter plug-in a report picks, and why."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import plugins


def outcomes(methods: list[str], experiment: object = None) -> pd.DataFrame:
    frame = pd.DataFrame({"run_id": methods, "method": methods})
    if experiment is not None:
        frame["experiment"] = experiment
    return frame


def test_experiment_column_names_the_plugin() -> None:
    plugin, why = plugins.choose_plugin(outcomes(["my-method"], "chapter3"))
    assert plugin.name == "chapter3" and "experiment column" in why


def test_unknown_or_absent_experiment_falls_back_to_a_study_that_knows_every_method() -> None:
    for experiment in (None, "my-study"):
        plugin, why = plugins.choose_plugin(outcomes(["gp", "rs"], experiment))
        assert plugin.name == "chapter3"
        assert "knows all 2 methods" in why


def test_a_method_no_study_knows_gets_the_benchmark_report_not_missing_cells() -> None:
    """An own optimizer beside two of Chapter 3's: Chapter 3's report would leave its cells
    missing and drop it from the ranks; the benchmark report ranks every method."""
    for experiment in (None, "my-study"):
        plugin, why = plugins.choose_plugin(outcomes(["gp", "rs", "my_de"], experiment))
        assert plugin.name == "benchmark"
        assert "no study's report knows all 3 methods" in why


def test_the_demo_has_its_own_plugin() -> None:
    plugin, why = plugins.choose_plugin(outcomes(["gp", "rs"], "demo"))
    assert plugin.name == "demo" and "experiment column" in why


def test_requested_chapter_wins_and_unknown_names_are_refused() -> None:
    plugin, why = plugins.choose_plugin(outcomes(["x"], "my-study"), "chapter3")
    assert plugin.name == "chapter3" and "--chapter" in why
    with pytest.raises(ValueError, match="unknown chapter .chapter9. .did you mean .chapter5..?"):
        plugins.get_plugin("chapter9")


def test_analysis_imports_nothing_from_experiments() -> None:
    from pathlib import Path

    root = Path(plugins.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "from experiments" not in text and "import experiments" not in text, path
