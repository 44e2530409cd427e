"""Every report counts, per method, the runs stuck on a plateau and the retrainings that hit the
iteration limit (a plateau is never silent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis import runs
from analysis.render import TableWriter
from experiments.configuration.spec import RunSpec
from experiments.run.results import assemble
from experiments.run.runner import run
from hpo.data.catalog import Dataset
from hpo.evaluation.protocol import ProtocolSettings


def _outcome_rows(method: str, data: Dataset, seed: int) -> pd.DataFrame:
    spec = RunSpec.of(
        dataset=data.name,
        optimizer="rs",
        rules={method: "best_validation"},
        protocol=ProtocolSettings(),
        budget=6,
        seed=seed,
    )
    result = run(spec, data=data)
    table = assemble(spec, result.trace, result.outcomes, run_seconds=0.0)
    return table[table["row_type"] == "outcome"]


def test_a_run_stuck_on_a_plateau_is_counted_for_its_method(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=80)
    # Constant features: every SVM predicts one class whatever C and γ, so every loss is equal.
    flat = Dataset("flat", np.zeros((80, 3)), labels)
    informative = Dataset(
        "informative", np.c_[labels + rng.normal(0, 0.3, 80), rng.normal(size=80)], labels
    )
    outcomes = pd.concat(
        [
            _outcome_rows("stuck-method", flat, seed=1),
            _outcome_rows("stuck-method", informative, seed=1),
            _outcome_rows("moving-method", informative, seed=2),
        ],
        ignore_index=True,
    )
    assert set(outcomes.loc[outcomes["dataset"] == "flat", "distinct_valid_losses"]) == {1}
    assert (outcomes.loc[outcomes["dataset"] == "informative", "distinct_valid_losses"] > 1).all()

    health = runs.run_health(outcomes)
    assert health.loc["stuck-method", "runs"] == 2
    assert health.loc["stuck-method", "stuck runs"] == 1
    assert health.loc["moving-method", "stuck runs"] == 0
    assert (health["retraining hit the limit"] == 0).all()
    text = runs.section(outcomes, TableWriter(tmp_path))
    assert "Runs stuck on a plateau:** stuck-method (1)" in text

    older = outcomes.drop(columns=["distinct_valid_losses"])  # results from before the count
    assert runs.run_health(older)["stuck runs"].isna().all()
    assert "Runs stuck on a plateau" not in runs.section(older, TableWriter(tmp_path))
