"""A dependent part (one that runs after another, as I/F-Race's calibrated budget runs after
random search) on an earlier part with a failed run: the failed run is settled, not pending, so
the dependent run does not wait for it and derives from the finished runs alone."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.configuration.compose import compose_run
from experiments.configuration.spec import RunSpec
from experiments.run.results import write_atomic
from experiments.sweep import PlannedRun
from experiments.sweep.planning import _dependent
from runfiles import layout

SPEC = compose_run(["optimizer=rs", "dataset=sklearn-iris", "budget=3"])
DERIVED_FROM: list[list[PlannedRun]] = []


def derive(spec: RunSpec, finished: list[PlannedRun]) -> RunSpec:
    """A ``derive`` as a part names it (``module:function``): records what it was given."""
    DERIVED_FROM.append(finished)
    return spec.with_settings(budget=7)


def test_a_failed_earlier_run_is_settled_and_the_dependent_part_derives_from_the_finished(
    tmp_path: Path,
) -> None:
    earlier = [
        PlannedRun("rs", SPEC.with_settings(seed=s), tmp_path / "rs" / f"seed{s}.parquet")
        for s in range(3)
    ]
    write_atomic(pd.DataFrame({"row_type": ["outcome"]}), earlier[0].path, earlier[0].spec)
    layout.failure_path(earlier[1].path).write_text("failed: MemoryError")
    settings = {"derive": f"{__name__}:derive"}
    waiting = _dependent("irace", SPEC, tmp_path, earlier, "rs", settings)
    assert waiting.waiting == "waits for 1 run(s) of part rs on sklearn-iris"  # seed 2 alone
    layout.failure_path(earlier[2].path).write_text("failed: killed")
    DERIVED_FROM.clear()
    ready = _dependent("irace", SPEC, tmp_path, earlier, "rs", settings)
    assert ready.waiting == "" and ready.spec.budget.evaluations == 7
    assert [[earlier[0]]] == DERIVED_FROM  # the finished run alone, not the failed ones
