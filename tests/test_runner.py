"""One run end to end: trace, incumbents, retrained test errors, results file, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.spec import RunSpec
from experiments.run.results import assemble, write_atomic
from experiments.run.runner import execute_run
from hpo.data.catalog import Dataset, load_dataset
from hpo.evaluation.protocol import ProtocolSettings
from hpo.optimizers import CLASSES, RandomSearch
from runfiles.files import read_run, without_timing


def _spec(**overrides) -> RunSpec:
    values = dict(dataset="sklearn-iris", optimizer="rs", rules={"rs": "best_validation"}, budget=8)
    values.update(overrides)
    return RunSpec.of(**values)


def test_trace_and_outcomes_are_consistent() -> None:
    trace, outcomes = execute_run(_spec())
    assert list(trace["iteration"]) == list(range(1, 9))
    assert trace["valid_loss"].between(0, 1).all()
    assert trace["selection_loss"].isna().all()
    assert list(outcomes["iteration"]) == list(range(1, 9))
    # the incumbent is the earliest argmin of the validation losses seen so far
    for row in outcomes.itertuples():
        seen = trace["valid_loss"].to_numpy()[: row.iteration]
        assert row.incumbent_iteration == int(np.argmin(seen)) + 1
        assert row.incumbent_valid_loss == seen.min()
        incumbent = trace.iloc[row.incumbent_iteration - 1]
        assert row.param_C == incumbent["param_C"]


def test_cv_with_a_selection_split_fits_five_folds_and_scores_every_model_on_d_s() -> None:
    # (that the loss is the mean over all folds is recomputed in tests/test_dataflow.py)
    spec = _spec(
        protocol=ProtocolSettings(validation="cv", selection_split=True),
        rules={"x": "best_selection"},
    )
    trace, outcomes = execute_run(spec)
    assert trace["n_fits"].isin([0, 5]).all() and trace["n_fits"].iloc[0] == 5
    assert trace["selection_loss"].notna().all()
    final = outcomes.iloc[-1]
    assert final["incumbent_selection_loss"] == trace["selection_loss"].min()


def test_a_configuration_chosen_at_several_iterations_gets_one_test_error() -> None:
    # (that it is retrained once, on exactly D_TVS, is checked fit by fit in test_dataflow.py)
    spec = _spec(budget=6)
    trace, outcomes = execute_run(spec)
    by_config = outcomes.groupby(["param_C", "param_gamma"])["test_error"]
    assert (by_config.size() > 1).any()  # some incumbent was kept over several iterations
    assert (by_config.nunique() == 1).all()


def test_tiny_classes_constant_columns_and_50_rows_run() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    X[:, 2] = 1.0  # constant column
    y = np.array([0] * 44 + [1] * 4 + [2] * 2)
    data = Dataset("toy", X, y)
    for validation in ("holdout", "cv"):
        spec = _spec(
            dataset="toy", protocol=ProtocolSettings(validation=validation, selection_split=True)
        )
        trace, outcomes = execute_run(spec, data=data)
        assert len(trace) == 8 and outcomes["test_error"].notna().all()


def test_fit_limit_is_recorded_and_scores_one() -> None:
    from hpo.learners import FitGuard

    data = load_dataset("sklearn-breast-cancer")
    spec = _spec(dataset="bc", fit_guard=FitGuard(max_iter=5), budget=3)
    trace, _ = execute_run(spec, data=data)
    hit = trace["fit_limit_hits"] > 0
    assert hit.any()
    assert (trace.loc[hit, "valid_loss"] == 1.0).all()


def test_work_limit_applies_to_the_search_not_to_the_final_retraining() -> None:
    from hpo.learners import FitGuard

    data = load_dataset("sklearn-breast-cancer")
    guard = FitGuard(max_iter=10**6, max_work=5 * 300)  # ~5 iterations on the ~300 training rows
    trace, outcomes = execute_run(_spec(dataset="bc", fit_guard=guard, budget=4), data=data)
    assert (trace["fit_limit_hits"] > 0).all()
    assert not outcomes["test_fit_limit_hit"].any()
    assert (outcomes["test_error"] < 0.5).all()
    strict = _spec(dataset="bc", fit_guard=FitGuard(max_iter=5, max_work=None), budget=4)
    _, strict_outcomes = execute_run(strict, data=data)
    assert strict_outcomes["test_fit_limit_hit"].all()  # recorded, and the truncated model kept
    assert (strict_outcomes["test_error"] < 1.0).all()
    old_rule = FitGuard(max_iter=5, max_work=None, retrain_on_limit="error_one")
    _, scored_one = execute_run(_spec(dataset="bc", fit_guard=old_rule, budget=4), data=data)
    assert scored_one["test_fit_limit_hit"].all() and (scored_one["test_error"] == 1.0).all()


@pytest.mark.parametrize("optimizer", ["grid", "rs"])
def test_same_spec_same_results(optimizer: str, tmp_path: Path) -> None:
    spec = _spec(optimizer=optimizer, rules={optimizer: "best_validation"}, budget=9)
    tables = []
    for attempt in range(2):
        trace, outcomes = execute_run(spec)
        path = write_atomic(assemble(spec, trace, outcomes, 0.0), tmp_path / f"{attempt}.pq", spec)
        tables.append(without_timing(read_run(path)))
    pd.testing.assert_frame_equal(tables[0], tables[1])


def test_results_are_never_overwritten(tmp_path: Path) -> None:
    spec = _spec(budget=2)
    table = assemble(spec, *execute_run(spec), 0.0)
    path = write_atomic(table, tmp_path / "run.parquet", spec)
    with pytest.raises(FileExistsError):
        write_atomic(table, path, spec)
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_results_columns_are_typed() -> None:
    spec = _spec(budget=3)
    table = assemble(spec, *execute_run(spec), 0.0)
    untyped = [c for c, dtype in table.dtypes.items() if pd.api.types.is_object_dtype(dtype)]
    assert not untyped, untyped
    assert set(table["row_type"]) == {"trace", "outcome"}


def test_repeated_configurations_are_scored_once_per_split() -> None:
    trace, _ = execute_run(_spec(optimizer="gp", rules={"gp": "best_validation"}, budget=12))
    repeated = trace.duplicated(subset=["param_C", "param_gamma"])
    assert (trace.loc[repeated, "n_fits"] == 0).all()
    assert (trace.loc[~repeated, "n_fits"] == 1).all()
    first = trace.drop_duplicates(subset=["param_C", "param_gamma"]).set_index(
        ["param_C", "param_gamma"]
    )
    again = trace[repeated].set_index(["param_C", "param_gamma"])
    pd.testing.assert_series_equal(again["valid_loss"], first.loc[again.index, "valid_loss"])


@pytest.mark.parametrize("validation", ["holdout", "cv"])
def test_optimizer_is_told_validation_losses_never_selection_losses(
    validation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[RandomSearch] = []  # the run's optimizer; Optimizer.tell records losses in .y

    class Spy(RandomSearch):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setitem(CLASSES, "spy", Spy)
    spec = _spec(
        optimizer="spy",
        budget=12,
        protocol=ProtocolSettings(validation=validation, selection_split=True, reshuffle=True),
        rules={"x": "best_selection"},
    )
    trace, _ = execute_run(spec, data=load_dataset("sklearn-breast-cancer"))
    # the selection split was scored, and differently from validation, so a leak would show
    assert trace["selection_loss"].notna().all()
    assert (trace["selection_loss"] != trace["valid_loss"]).any()
    np.testing.assert_array_equal(np.array(built[0].y), trace["valid_loss"].to_numpy())


def test_svm_validation_objective_is_the_svm_error_on_the_runs_hold_out_split() -> None:
    from sklearn.svm import SVC

    from experiments.objectives import svm_validation_objective
    from hpo.evaluation.protocol import RepetitionSplits

    data = load_dataset("sklearn-breast-cancer")
    trace, _ = execute_run(_spec(dataset="sklearn-breast-cancer", seed=3, budget=5), data=data)
    objective = svm_validation_objective("sklearn-breast-cancer", seed=3)
    splits = RepetitionSplits(data.y, len(data.y), False, ProtocolSettings(), 3, data.name, 0)
    (fold,) = splits.folds(1)
    for row in trace.itertuples():
        assert objective(np.array([row.u_C, row.u_gamma])) == row.valid_loss
        # independently: scikit-learn's own SVC (no precomputed kernel) on the same split; the
        # kernels' last bits may differ, so a point on the boundary may flip
        svc = SVC(kernel="rbf", C=row.param_C, gamma=row.param_gamma)
        svc.fit(data.X[fold.train], data.y[fold.train])
        error = np.mean(svc.predict(data.X[fold.valid]) != data.y[fold.valid])
        assert abs(row.valid_loss - error) <= 1 / len(fold.valid) + 1e-12


def test_results_appear_at_their_path_only_once_completely_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    spec = _spec(budget=2)
    table = assemble(spec, *execute_run(spec), 0.0)
    original = pq.write_table

    def write_then_die(arrow, where, *args, **kwargs):  # a worker killed mid-write
        original(arrow, where, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", write_then_die)
    path = tmp_path / "run.parquet"
    with pytest.raises(KeyboardInterrupt):
        write_atomic(table, path, spec)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []
