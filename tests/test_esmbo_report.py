"""The ESMBO report on a tiny real result (two spaces, budget 6, predictions kept): every table,
figure and claim row is written, and the per-example losses rebuilt from the sidecars average to
the runs' test errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.esmbo import data
from analysis.esmbo.report import CLAIMS
from analysis.report import write_report
from experiments.configuration.compose import compose_run
from experiments.run.results import write_run
from experiments.run.runner import run

DATASETS = {"svm": ["sklearn-breast-cancer", "sklearn-wine"], "svr": ["sklearn-diabetes"]}
SPACES = {"svm": "esmbo_svm", "svr": "esmbo_svr"}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("esmbo") / "smoke"
    for part, datasets in DATASETS.items():
        for dataset in datasets:
            for method in ("esmbo", "ers", "smbo"):
                overrides = [f"optimizer={method}", f"dataset={dataset}", "budget=6"]
                overrides += [f"space={SPACES[part]}", "predictions=true", "curves=true"]
                spec = compose_run(overrides)
                path = root / "runs" / part / dataset / f"{method}.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_run(run(spec), path, spec, 1.0)
    return root


def test_example_losses_average_to_the_test_errors(sweep: Path) -> None:
    losses = data.example_losses_by_part(sweep)
    assert set(losses) == {"svm", "svr"}
    for path in (sweep / "runs").rglob("*.parquet"):
        if path.name.endswith(".predictions.parquet"):
            continue
        rebuilt = data.run_example_losses(path)
        table = __import__("pandas").read_parquet(path)
        outcomes = table[(table.row_type == "outcome") & table.method.isin(list(data.PAPER_NAMES))]
        means = rebuilt.groupby(["method", "iteration"]).loss.mean()
        for row in outcomes.itertuples():
            assert means[(data.PAPER_NAMES[row.method], row.iteration)] == pytest.approx(
                row.test_error, rel=1e-9, abs=1e-12
            )


def test_report_writes_every_table_figure_and_claim(sweep: Path) -> None:
    report = write_report(sweep, sweep / "report", chapter="esmbo")
    text = report.read_text()
    tables = sweep / "report" / "tables"
    for part in ("svm", "svr"):
        for suffix in ("", "_pb", "_sign", "_cells"):
            assert (tables / f"esmbo_{part}{suffix}.csv").is_file()
        cells = __import__("pandas").read_csv(tables / f"esmbo_{part}_cells.csv")
        assert len(cells) == 16 and cells.pb.notna().sum() == 12
    for number in (1, 2):
        assert (sweep / "report" / "figures" / f"esmbo_figure{number}.png").is_file()
    claims = __import__("pandas").read_csv(tables / "esmbo_claims.csv")
    assert list(claims.id) == [c.id for c in CLAIMS]
    # two spaces of seven: every claim that needs all spaces says which are missing
    assert set(claims.status) == {"not evaluated"}
    assert "Support Vector Machine" in text and "Figure 2" in text


def test_member_weights_read_both_notations() -> None:
    assert data.member_weights("3,3,7") == {3: 2.0, 7: 1.0}
    assert data.member_weights("3:0.5,7:1.5") == {3: 0.5, 7: 1.5}
    stacked = {1: np.array([0, 1, 1]), 2: np.array([1, 1, 0])}
    np.testing.assert_array_equal(
        data.choice_losses(stacked, "1,1,2", np.array([0, 0, 0])), [0.0, 1.0, 1.0]
    )
