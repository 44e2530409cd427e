"""Tests of analysis.overtuning against the definitions of Schneider, Bischl & Feurer (2025)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import overtuning


def run(errors: list[float], method: str = "gp", run_id: str = "r0") -> pd.DataFrame:
    return pd.DataFrame(
        {"run_id": run_id, "method": method, "iteration": range(1, len(errors) + 1),
         "test_error": errors}
    )  # fmt: skip


def test_monotone_improving_curve_has_no_overtuning() -> None:
    curves = overtuning.overtuning_curves(run([0.5, 0.4, 0.4, 0.3, 0.1]))
    assert (curves["overtuning"] == 0).all()
    assert (curves["relative_overtuning"] == 0).all()


def test_late_jump_gives_its_size() -> None:
    curves = overtuning.overtuning_curves(run([0.5, 0.3, 0.2, 0.35]))
    assert curves["overtuning"].tolist() == pytest.approx([0, 0, 0, 0.15])
    # relative: 0.15 given back of the 0.5 − 0.2 = 0.3 gained over the first incumbent
    assert curves["relative_overtuning"].iloc[-1] == pytest.approx(0.5)


def test_relative_overtuning_zero_division() -> None:
    # never improved on the first incumbent: 0/0 -> 0, then worse than it: positive/0 -> inf
    curves = overtuning.overtuning_curves(run([0.2, 0.2, 0.3]))
    assert curves["relative_overtuning"].tolist() == [0.0, 0.0, np.inf]
    assert overtuning.relative_overtuning(np.array([0.0]), np.array([0.0])).tolist() == [0.0]


def test_default_configuration_as_reference() -> None:
    curves = overtuning.overtuning_curves(run([0.3, 0.2, 0.25]), pd.Series({"r0": 0.4}))
    assert curves["relative_overtuning"].iloc[-1] == pytest.approx(0.05 / 0.2)


def test_summary_per_method_at_the_final_iteration() -> None:
    outcomes = pd.concat(
        [run([0.5, 0.2, 0.3], run_id="a"), run([0.5, 0.4, 0.3], run_id="b"),
         run([0.2, 0.1, 0.6], run_id="c")]
    )  # fmt: skip
    table = overtuning.summary(overtuning.overtuning_curves(outcomes), ["method"])
    row = table.loc["gp"]
    assert row["runs"] == 3
    assert row["share_positive"] == pytest.approx(2 / 3)
    assert row["mean"] == pytest.approx(100 * (0.1 + 0 + 0.5) / 3)
    assert row["share_worse_than_reference"] == pytest.approx(1 / 3)  # run c ends above 0.2
