"""Seed 004 through the one pipeline (experiments/run/instances.py, experiments/autoweka.py,
conf/optimizer/aw_*.yaml): a method runs by name through ``run.py`` and its results file carries
the provenance and config hash of every run, so another budget, budget kind, setting, limit or
learner list is a new run; bad input is one line, exit code 2, nothing written; the old command
names the new one. And the report's bootstrap, Welch tests and seed tables (analysis/autoweka)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.autoweka.report import (
    best_of_k,
    optimiser_time,
    read_seed_table,
    significantly_better,
    win_matrix,
    with_virtual,
)
from experiments.configuration.compose import compose_run
from experiments.run.results import config_hash, run_filename

ROOT = Path(__file__).resolve().parents[1]
TINY = ["dataset=sklearn-iris", "space.learners=[knn,j48,bagging]", "space.max_ensemble=1"]


def run_py(*overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "run.py", *overrides], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.slow
def test_a_method_runs_by_name_through_run_py_and_another_budget_is_a_new_run(tmp_path):
    """The defect of the seed's first command line: ``--budget 30`` then ``--budget 15`` reused
    the first file. Here each is its own run, with the provenance of every results file."""
    common = ["optimizer=aw_random", *TINY, "time_budget_kind=wall", f"results_dir={tmp_path}"]
    first = run_py(*common, "time_budget=8")
    assert first.returncode == 0, first.stderr
    assert "already finished" not in first.stdout and "results: " in first.stdout
    second = run_py(*common, "time_budget=6")
    assert second.returncode == 0, second.stderr
    assert "already finished" not in second.stdout
    files = sorted(tmp_path.glob("sklearn-iris/aw_random__autoweka__*.parquet"))
    assert len(files) == 2
    for path in files:
        table = pd.read_parquet(path)
        assert {"config_hash", "git_revision", "versions", "dataset_sha256"} <= set(table.columns)
        final = table[table.rule == "final"]  # none if no configuration completed 10 folds
        assert final.learner.isin(["knn", "j48", "bagging"]).all()
        assert final.test_error.between(0, 1).all()
        assert table.config_hash.iloc[0] in path.name and table.evaluations.iloc[0] > 0
        trajectory = table[table.rule == "trajectory"]
        assert trajectory.elapsed_seconds.is_monotonic_increasing
    again = run_py(*common, "time_budget=6")
    assert again.returncode == 0 and "already finished" in again.stdout  # the same run


def test_a_hydra_multirun_sweeps_the_methods_by_name(tmp_path):
    done = run_py(
        "-m", "optimizer=aw_exdef,aw_random", "space=autoweka_classification", *TINY,
        "budget=20", "time_budget=null", f"results_dir={tmp_path}",
        f"hydra.sweep.dir={tmp_path}/hydra",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = sorted(p.name.split("__")[0] for p in tmp_path.glob("sklearn-iris/*.parquet"))
    assert names == ["aw_exdef", "aw_random"]


@pytest.mark.parametrize(
    "change",
    [
        "time_budget=15",  # the budget in seconds
        "time_budget_kind=wall",  # its kind
        "budget=500",  # the budget in evaluations
        "limits.enabled=false",  # per-fit limits (on in the base run)
        "limits.time_s=5",
        "limits.memory_mb=1024",
        "space.learners=[knn,j48]",  # the learner list
        "space.max_ensemble=2",
        "optimizer.settings.random_probability=0.2",  # a method's setting
        "seed=1",
    ],
)
def test_each_budget_setting_limit_and_learner_list_is_a_new_run(change):
    base = ["optimizer=aw_smac", *TINY, "time_budget=30", "limits.enabled=true"]
    before, after = compose_run(base), compose_run([*base, change])
    assert config_hash(after) != config_hash(before)
    assert run_filename(after) != run_filename(before)


def test_every_other_study_keeps_its_run_identity():
    """The new top-level key (time_budget_kind) is left out of a run's identity at its neutral
    value (wall), so no earlier run's config hash or file name changes."""
    spec = compose_run(["optimizer=rs", "dataset=sklearn-iris"])
    assert "time_budget_kind" not in spec.identity() and spec.budget.seconds is None
    timed = compose_run(["optimizer=hrs", "dataset=sklearn-iris", "time_budget=60"])
    assert "time_budget_kind" not in timed.identity() and timed.budget.seconds == 60
    cpu = compose_run(["optimizer=hrs", "dataset=sklearn-iris", "time_budget=60",
                       "time_budget_kind=cpu"])  # fmt: skip
    assert cpu.identity()["time_budget_kind"] == "cpu" and config_hash(cpu) != config_hash(timed)


def test_a_cpu_time_budget_counts_cpu_seconds_not_waiting():
    """``time_budget_kind=cpu`` (any study's runs): the clock counts this process's CPU seconds
    (and its fit children's), not the time it waits; ``wall`` counts both."""
    import time

    from hpo.evaluation.clock import Clock

    cpu, wall = Clock("cpu"), Clock("wall")
    time.sleep(0.3)
    assert wall.spent() >= 0.3 and cpu.spent() < 0.1
    children = [0.0]
    charged = Clock("cpu", lambda: children[0])
    children[0] = 5.0  # a fit child spent 5 CPU seconds
    assert charged.spent() >= 5.0
    with pytest.raises(ValueError, match="unknown time budget kind 'gpu'"):
        Clock("gpu")


class _CountingOptimizer:
    """Proposes configurations 1, 2, 3, ... on instance 0; the last one told is the incumbent
    (``None`` before any, and always ``None`` with ``keeps_none``)."""

    def __init__(self, keeps_none: bool = False) -> None:
        self.asked, self.told, self.keeps_none = 0, None, keeps_none

    def ask(self):
        from hpo.optimizers.base import Proposal

        self.asked += 1
        return Proposal(u=None, batch=1, config={"learner": "knn", "K": self.asked}, instance=0)

    def tell(self, proposal, loss: float) -> None:
        self.told = dict(proposal.config)

    def incumbent(self):
        return None if self.keeps_none else self.told


def _stub_objective(clock: list[float] | None = None, seconds: float = 0.0):
    """An instance objective whose every evaluation scores 0.5 and moves the fake ``clock``
    (one value, the seconds so far) on by ``seconds``."""
    from types import SimpleNamespace

    def evaluate(config: dict, instance: int) -> SimpleNamespace:
        if clock is not None:
            clock[0] += seconds
        return SimpleNamespace(loss=0.5, seconds=seconds, breached=False, skipped=False, failure="")

    return SimpleNamespace(
        evaluator=SimpleNamespace(warm_up=lambda: None, child_cpu_seconds=0.0),
        evaluate=evaluate,
        estimate=lambda config: 0.5,
        n_evaluated=lambda config: 1,
        mean_loss=lambda config: 0.5,
        test_loss=lambda config: 0.4,
    )


def _fake_clock(read):  # noqa: ANN001, ANN202
    """A stand-in for the instance loop's ``Clock`` whose every reading (wall, CPU, spent) is
    ``read()``: the tests move time themselves, so none waits."""

    class FakeClock:
        def __init__(self, kind: str, child_cpu=None) -> None:
            pass

        def wall(self) -> float:
            return read()

        cpu = spent = wall

    return FakeClock


def test_a_run_over_instances_starts_no_evaluation_once_its_time_budget_is_spent(monkeypatch):
    """Auto-WEKA's budget is time (Thornton 2014, §4): the loop ends within one evaluation of
    ``time_budget`` seconds, not at the (here unreachable) number of evaluations. The loop's
    clock is a fake one that only the evaluations move (1/8 s each), so no test waits."""
    from experiments.run import instances

    now = [0.0]
    monkeypatch.setattr(instances, "Clock", _fake_clock(lambda: now[0]))
    optimizer = _CountingOptimizer(keeps_none=True)
    run = instances.run_cash(
        optimizer, _stub_objective(now, 0.125), 10**6, time_budget=1.0, time_kind="wall"
    )
    assert len(run.trace) == 8 and run.wall_seconds == 1.0


def test_the_trajectory_stamps_each_incumbent_with_the_evaluation_that_made_it():
    """A trajectory point's ``evaluation`` counts the evaluations done when the incumbent changed
    (1-based): here every evaluation's configuration becomes the incumbent at once."""
    from experiments.run.instances import run_cash

    run = run_cash(_CountingOptimizer(), _stub_objective(), 5, diagnostic=False)
    assert [point["evaluation"] for point in run.trajectory] == [1, 2, 3, 4, 5]
    assert [point["config"] for point in run.trajectory] == [row["config"] for row in run.trace]
    assert run.test_error == 0.4 and run.cv_error == 0.5


def test_the_diagnostic_correlation_needs_three_trajectory_points():
    """Thornton 2014 §4.2.3's Spearman correlation of the trajectory's estimates and diagnostic
    errors: NaN with fewer than 3 points (two points always correlate perfectly)."""
    from experiments.run.instances import run_cash

    objective = _stub_objective()
    objective.estimate = lambda config: 1.0 / config["K"]
    objective.diagnostic_loss = lambda config: float(config["K"])
    two = run_cash(_CountingOptimizer(), objective, 2)
    three = run_cash(_CountingOptimizer(), objective, 3)
    assert np.isnan(two.spearman) and three.spearman == pytest.approx(-1.0)


@pytest.mark.parametrize(
    "override, message",
    [
        ("optimizer=aw_nope", "unknown optimizer 'aw_nope'"),  # an unknown method
        ("time_budget_kind=gpu", "unknown time_budget_kind 'gpu' (did you mean 'cpu'?); valid"),
        ("time_budget=-5", "time_budget must be a number of seconds > 0 or null, got -5"),
        ("space.learners=[knn,m5p]", "unknown learner 'm5p'"),  # not in the space
        ("space.max_ensemble=6", "max_ensemble must be in 1..5"),
        ("dataset=sklearn-diabetes", "a regression dataset"),  # a classification space
        ("optimizer.settings.alpha=2", "unknown setting(s) alpha for optimizer 'cash_smac'"),
        ("optimizer.settings.instances=folds", "unknown instances 'folds'"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, override, message):
    done = run_py("optimizer=aw_smac", *TINY, override, f"results_dir={tmp_path}/runs")
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (tmp_path / "runs").exists()


def test_the_old_command_names_the_new_one_and_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "experiments.autoweka", "run", "--method", "smac"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    err = done.stderr.strip()
    assert "\n" not in err and "python run.py optimizer=aw_smac" in err


# --- the report -------------------------------------------------------------------------------


def test_best_of_k_picks_the_run_with_the_lowest_cv_error():
    runs = pd.DataFrame({"cv_error": [3.0, 1.0, 2.0], "test_error": [30.0, 10.0, 20.0]})
    draws = best_of_k(runs, 3, 50, np.random.default_rng(0))
    assert (draws["cv"] == 1.0).all() and (draws["test"] == 10.0).all()
    single = best_of_k(runs, 1, 3000, np.random.default_rng(0))
    assert single["cv"].mean() == pytest.approx(2.0, abs=0.1)


def test_welch_and_zero_variance_samples():
    rng = np.random.default_rng(0)
    assert significantly_better(np.full(10, 1.0), np.full(10, 2.0))
    assert not significantly_better(np.full(10, 2.0), np.full(10, 2.0))
    a, b = rng.normal(0, 1, 30), rng.normal(0.05, 1, 30)
    assert not significantly_better(a, b) and not significantly_better(b, a)
    assert significantly_better(rng.normal(0, 0.1, 30), rng.normal(1, 0.1, 30))
    # Welch's, not Student's: 40 tight values against 5 spread ones (Student's pooled variance
    # gives p = 0.0002, Welch's p = 0.24)
    tight, spread = np.linspace(0.0, 0.2, 40), np.array([0.0, 0.9, -0.3, 1.2, 0.6])
    assert not significantly_better(tight, spread)


def test_win_matrix_counts_datasets_and_adds_the_virtual_methods():
    draws = {
        ("d1", "smac"): {"cv": np.full(5, 1.0)},
        ("d1", "random"): {"cv": np.full(5, 2.0)},
        ("d2", "smac"): {"cv": np.full(5, 3.0)},
        ("d2", "random"): {"cv": np.full(5, 2.0)},
        ("d2", "tpe"): {"cv": np.full(5, 0.5)},
    }
    matrix = win_matrix(with_virtual(draws, "cv"))
    assert matrix.loc["smac", "random"] == 1 and matrix.loc["random", "smac"] == 1
    assert matrix.loc["best_autoweka", "best_baseline"] == 2  # smac on d1, tpe on d2


def test_the_seed_tables_are_the_spec_s_numbers():
    assert read_seed_table(3).loc["Car", "SMAC"] == 0.57
    assert read_seed_table(4).loc["KR-vs-KP", "Ex-Def"] == 0.31
    assert read_seed_table(8).loc["Slice", "SMAC"] == 0.2974
    assert read_seed_table(2).loc["Dexter", "Grid Time CPU-h"] == 2710
    assert np.isnan(read_seed_table(12).loc["Car", "Train SMAC-Multi-Level"])  # lost (a copy)


def test_ex_def_records_the_oracle_test_error_of_every_learner(tmp_path):
    from analysis.autoweka.report import load_summaries, oracle_table
    from experiments.run.results import write_run
    from experiments.run.runner import run

    spec = compose_run(
        ["optimizer=aw_exdef", "dataset=sklearn-iris", "budget=1000", "time_budget=null",
         "space.learners=[knn,j48,zero_r]"]
    )  # fmt: skip
    write_run(run(spec), tmp_path / run_filename(spec), spec, 1.0)
    summaries, _ = load_summaries(tmp_path)
    points = summaries.oracle_points.iloc[0]
    oracle = {p["learner"]: p["test_error"] for p in points}
    assert set(oracle) == {"knn", "j48", "zero_r"} and len(points) == 3
    assert oracle["zero_r"] > max(oracle["knn"], oracle["j48"])  # the majority class is worst
    table = oracle_table(summaries, {}, ["sklearn-iris"])
    assert table.loc[0, "ExDef Worst ours"] == oracle["zero_r"]
    assert table.loc[0, "ExDef Gap ours"] == oracle["zero_r"] - min(oracle.values())


@pytest.mark.slow
def test_the_ci_profile_runs_through_the_sweep_resumes_and_the_report_engine_writes_it(
    tmp_path, capsys
):
    """conf/experiment/autoweka.yaml's ci profile: random search and SMAC on iris, then I/F-Race
    with its budget calibrated from random search's finished run (a part that runs after
    another); run again, nothing runs; a run lost to a killed worker (its marker left by a
    dead process, no results file) runs again, alone; ``python -m analysis`` writes the report."""
    import json as json_

    from analysis.report import write_report
    from experiments.sweep import plan
    from experiments.sweep.cli import main as _main

    root = ["--results-root", str(tmp_path), "--jobs", "1"]
    waiting = plan("autoweka", "ci", tmp_path)
    assert [r.part for r in waiting if r.waiting] == ["irace_classification"]
    assert _main(["cost", "autoweka", "--profile", "ci", "--results-root", str(tmp_path)]) == 0
    assert "1 runs of parts that run after others (irace_classification)" in capsys.readouterr().out
    assert _main(["run", "autoweka", "--profile", "ci", *root]) == 0
    runs = plan("autoweka", "ci", tmp_path)
    assert len(runs) == 3 and all(r.path.exists() and not r.waiting for r in runs)
    irace = next(r for r in runs if r.part == "irace_classification")
    random = pd.read_parquet(next(r.path for r in runs if r.spec.method.name == "aw_random"))
    per_evaluation = random.wall_seconds.iloc[0] / random.evaluations.iloc[0]
    assert irace.spec.method.settings["max_evaluations"] == int(3 / per_evaluation)
    assert pd.read_parquet(irace.path).max_evaluations.iloc[0] == int(3 / per_evaluation)
    capsys.readouterr()
    assert _main(["run", "autoweka", "--profile", "ci", *root]) == 0
    assert "'done': 0" in capsys.readouterr().out  # resumed: nothing to do
    lost = next(r for r in runs if r.spec.method.name == "aw_smac")
    lost.path.unlink()
    lost.marker_path.write_text(json_.dumps({"host": __import__("socket").gethostname(),
                                             "pid": 2**22 + 12345}))  # fmt: skip
    assert _main(["run", "autoweka", "--profile", "ci", *root]) == 0
    out = capsys.readouterr().out
    assert "'done': 1" in out and lost.path.exists() and not lost.marker_path.exists()
    report = write_report(tmp_path / "autoweka" / "ci").read_text()
    assert "plug-in `autoweka`" in report
    assert "## Table 4.3: training (10-fold CV) performance, classification" in report
    assert "## Table 4.5: overfitting diagnostic" in report and "irace" in report


def test_i_f_race_budget_is_the_time_budget_over_random_search_s_mean_evaluation_time(tmp_path):
    from types import SimpleNamespace

    from experiments.autoweka import irace_budget, irace_calibrated

    paths = []
    for seed, (cpu, wall, n) in enumerate([(50.0, 70.0, 100), (70.0, 90.0, 140)]):
        path = tmp_path / f"random{seed}.parquet"
        frame = {"cpu_seconds": [cpu], "wall_seconds": [wall], "evaluations": [n]}
        pd.DataFrame(frame).to_parquet(path)
        paths.append(path)
    evaluations, source = irace_budget(60, "cpu", paths)
    assert evaluations == 120  # 60 s / (120 CPU s / 240 evaluations)
    assert "random search's mean evaluation time (0.5 s, 2 runs)" in source
    assert irace_budget(60, "wall", paths)[0] == 90  # 60 s / (160 s / 240)
    spec = compose_run(["optimizer=aw_irace", *TINY, "time_budget=60"])
    random = compose_run(["optimizer=aw_random", *TINY, "time_budget=60"])
    finished = [SimpleNamespace(spec=random, path=p) for p in paths]
    assert irace_calibrated(spec, finished).method.settings["max_evaluations"] == 120
    wall = compose_run(["optimizer=aw_irace", *TINY, "time_budget=60", "time_budget_kind=wall"])
    assert irace_calibrated(wall, finished) == wall  # random's runs had a CPU budget
    fixed = compose_run(["optimizer=aw_irace", *TINY, "optimizer.settings.max_evaluations=7"])
    assert irace_calibrated(fixed, finished) == fixed


def test_a_regression_fit_predicting_nan_is_a_failed_fold_and_smac_goes_on(monkeypatch):
    """A learner whose predictions hold NaN (the smoke profile met one: a Gaussian process with a
    fractional polynomial exponent) scores the seed's failure loss (RMSE 1e10, §4.1), counts as
    a failing fold, and SMAC, told that loss, keeps running (it was told NaN and crashed)."""
    import dataclasses

    from experiments.configuration.spaces import load_cash_library
    from experiments.run.instances import run_cash
    from hpo.cash.space import build_cash_space
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.instances import NOT_FINITE, InstanceObjective, make_instances
    from hpo.evaluation.isolation import EvaluationLimits
    from hpo.learners import FitGuard
    from hpo.optimizers import make_optimizer

    protocol = compose_run(["optimizer=aw_smac", "dataset=sklearn-iris"]).task.protocol
    data = load_dataset("sklearn-diabetes")
    limits = EvaluationLimits(time_s=60)  # max_failed_folds 3; no fit reaches the child here
    evaluator = Evaluator(
        data, protocol, lambda _: "autoweka_regression", FitGuard(), 0, 0, limits=limits
    )
    fit_rows = evaluator.fit_rows

    def nan_for_knn(config, train, evals):
        outcome = fit_rows(config, train, evals)
        if config["learner"] == "knn":
            return dataclasses.replace(outcome, errors=(float("nan"), float("nan")))
        return outcome

    monkeypatch.setattr(evaluator, "fit_rows", nan_for_knn)
    try:
        objective = InstanceObjective(evaluator, make_instances(evaluator, "cv", 0, data.name, 0))
        knn = {"learner": "knn", "fs_search": "none", "base.knn.K": 3}
        results = [objective.evaluate(knn, i) for i in range(10)]
        assert [r.loss for r in results[:3]] == [1e20] * 3  # RMSE 1e10
        assert all(r.failure == NOT_FINITE for r in results[:3])
        assert all(r.skipped for r in results[3:])  # three failing folds: the rest skipped
        assert objective.diagnostic_loss(knn) == 1e20  # the overfitting diagnostic's too
        cash = build_cash_space(
            load_cash_library(), "regression", include=["knn", "linear_regression"]
        )
        smac = make_optimizer("cash_smac_batch", cash.space, 200, np.random.default_rng(0))
        smac.start(cash, 10)
        run = run_cash(smac, objective, 200, diagnostic=False)
        assert len(run.trace) == 200 and {r["learner"] for r in run.trace} == {
            "knn", "linear_regression",
        }  # fmt: skip
        assert run.incumbent["learner"] == "linear_regression" and np.isfinite(run.test_error)
    finally:
        evaluator.close()


def test_optimiser_time_sums_setup_only_where_every_run_measured_it():
    """Runs recorded before ``setup_seconds`` existed (a resumed profile mixes both) leave their
    method's setup total empty rather than a sum over some of its runs."""
    summaries = pd.DataFrame(
        {
            "method": ["smac", "smac", "tpe", "tpe"],
            "optimizer_seconds": [3.0, 5.0, 1.0, 1.0],
            "wall_seconds": [15.0, 15.0, 15.0, 15.0],
            "evaluations": [100, 100, 50, 150],
            "setup_seconds": [0.1, 0.2, 0.3, np.nan],
        }
    )
    table = optimiser_time(summaries)
    assert table.loc["smac", "setup_seconds"] == pytest.approx(0.3)
    assert np.isnan(table.loc["tpe", "setup_seconds"])
    assert table.loc["smac", "optimizer share %"] == pytest.approx(100 * 8 / 30)
    assert table.loc["tpe", "optimizer ms / evaluation"] == pytest.approx(10.0)
    assert np.isnan(optimiser_time(summaries.drop(columns="setup_seconds")).setup_seconds).all()


@pytest.mark.parametrize(("optimizer", "seconds"), [("aw_smac", 5.0), ("aw_smac_long", 20.0)])
def test_smac_long_multiplies_the_time_budget_too(monkeypatch, optimizer: str, seconds: float):
    """SMAC-Long (the seed's §4.4) has four times the run's budgets, in seconds as in
    evaluations: the instance loop is handed ``time_budget`` × ``budget_factor``."""
    from experiments.run import instances

    handed = {}

    class Handed(Exception):
        pass

    def record(optimizer, objective, evaluations, time_budget, *args, **kwargs):  # noqa: ANN001, ANN202
        handed.update(evaluations=evaluations, time_budget=time_budget)
        raise Handed  # enough: the loop itself is tested on its own

    monkeypatch.setattr(instances, "run_cash", record)
    spec = compose_run([f"optimizer={optimizer}", *TINY, "time_budget=5", "budget=10"])
    with pytest.raises(Handed):
        instances.run_on_instances(spec)
    assert handed == {"evaluations": 10 * seconds / 5, "time_budget": seconds}


def test_describe_choice_names_the_learner_its_bases_and_feature_selection():
    """What the outcome rows record of a CASH configuration (the report's selection tables read
    it): nothing without one; a meta-method's base; an ensemble's members joined in slot order;
    the feature search and its evaluator."""
    from experiments.run.instances import describe_choice

    assert describe_choice(None) == {"learner": "", "base": "", "fs_search": "", "fs_eval": ""}
    meta = {"learner": "bagging", "meta_base": "j48", "fs_search": "best_first",
            "fs_eval_subset": "cfs"}  # fmt: skip
    assert describe_choice(meta) == {"learner": "bagging", "base": "j48",
                                     "fs_search": "best_first", "fs_eval": "cfs"}  # fmt: skip
    ensemble = {"learner": "vote", "ens_size": "2", "ens_base_1": "knn", "ens_base_2": "j48"}
    assert describe_choice(ensemble) == {"learner": "vote", "base": "knn+j48",
                                         "fs_search": "none", "fs_eval": ""}  # fmt: skip


def test_the_results_frames_keep_every_column_under_its_name_and_type(monkeypatch):
    """The trace and outcome frames are what the report reads back: the trace numbers the
    evaluations from 1 and keeps each one's CPU seconds; the outcome rows have exactly
    ``OUTCOME_COLUMNS`` with their dtypes, the final row the run's own CPU seconds."""
    from experiments.run import instances

    ticks = iter(np.arange(0.0, 100.0, 0.25))
    monkeypatch.setattr(instances, "Clock", _fake_clock(lambda: next(ticks)))
    run = instances.run_cash(_CountingOptimizer(), _stub_objective(), 3, diagnostic=False)
    trace = instances.trace_frame(run)
    assert trace["iteration"].tolist() == [1, 2, 3]
    assert trace["cpu_seconds"].tolist() == [row["cpu"] for row in run.trace]
    assert trace["cpu_seconds"].notna().all()
    spec = compose_run(["optimizer=aw_smac", *TINY])
    outcomes = instances.outcomes_frame(spec, run, [])
    assert outcomes.dtypes.astype(str).to_dict() == instances.OUTCOME_COLUMNS
    final = outcomes[outcomes["rule"] == "final"]
    assert final["cpu_seconds"].tolist() == [run.cpu_seconds]
