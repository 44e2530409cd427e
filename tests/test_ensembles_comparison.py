"""The EO vs ESMBO vs Caruana comparison (``conf/experiment/ensembles.yaml``): one GP-EI run
serves BO-best and BO-post, one EO run EO and EO-post, one ESMBO run its ensemble and argmin;
every method sees the same partition; the per-example test losses the PB test reads, rebuilt from
the sidecars (ensembles voted member by member), average to each output's test error."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from analysis.esmbo import data
from analysis.report import write_report
from experiments.run.results import write_run
from experiments.run.runner import run
from experiments.sweep import plan


def test_the_plan_runs_three_pools_per_dataset_on_one_partition(tmp_path: Path) -> None:
    runs = plan("ensembles", "medium", results_root=tmp_path)
    pools = Counter(tuple(sorted(r.spec.method.rules)) for r in runs)
    assert pools == {
        ("BO-best", "BO-post"): 36,
        ("EO", "EO-post"): 36,
        ("esmbo", "esmbo-argmin"): 36,
    }
    assert len({r.spec.task.dataset for r in runs}) == 12
    for r in runs:
        assert (r.spec.task.space_name, r.spec.task.protocol_name, r.spec.budget.evaluations) == (
            "esmbo_svm",
            "esmbo",
            50,
        )
        assert r.spec.outputs.predictions


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ensembles") / "smoke"
    for planned in plan("ensembles", "smoke", results_root=root.parent):
        if planned.spec.task.dataset != "pima":
            continue
        spec = planned.spec.with_settings(budget=16)  # a short run of each pool
        path = root / "runs" / "svm" / spec.task.dataset / f"{spec.method.name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_run(run(spec), path, spec, 1.0)
    return root


@pytest.mark.needs_data("uci121")  # the sweep runs on UCI-121's pima
def test_ensemble_losses_rebuilt_from_the_sidecars_match_the_test_errors(sweep: Path) -> None:
    for path in (sweep / "runs").rglob("*.parquet"):
        if path.name.endswith(".predictions.parquet"):
            continue
        rebuilt = data.run_example_losses(path)
        table = pd.read_parquet(path)
        outcomes = table[(table.row_type == "outcome") & table.method.isin(list(data.METHOD_NAMES))]
        means = rebuilt.groupby(["method", "iteration"]).loss.mean()
        for row in outcomes.itertuples():
            name = data.METHOD_NAMES[row.method]
            assert means[(name, row.iteration)] == pytest.approx(row.test_error, abs=1e-12)


@pytest.mark.needs_data("uci121")  # the sweep runs on UCI-121's pima
def test_the_report_compares_the_five_outputs(sweep: Path) -> None:
    report = write_report(sweep, sweep / "report", chapter="ensembles")
    table = pd.read_csv(sweep / "report" / "tables" / "esmbo_svm.csv")
    shown = set(table.iloc[:, 0])
    assert shown == {"BO-best", "BO-post (Caruana)", "EO", "EO-post", "ESMBO"}
    assert "Support Vector Machine" in report.read_text()
