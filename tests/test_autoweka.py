"""Seed 004's command line (experiments/autoweka.py) and report (analysis/autoweka): a method runs
by name and its results show the chosen learner, meta-method and feature selection; bad input is
one line, exit code 2, nothing written; the report's bootstrap, Welch tests and seed tables."""

from __future__ import annotations

import json

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
from experiments.autoweka import load_profile, main, plan, resolve_dataset


def test_a_method_runs_by_name_and_its_results_show_the_choice(tmp_path, capsys):
    code = main(
        [
            "run", "--method", "random", "--dataset", "sklearn-iris", "--budget", "8",
            "--budget-kind", "wall", "--time-limit", "30", "--memory-limit", "3000",
            "--learners", "knn,j48,bagging", "--results-dir", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "learner" in out and "fs_search" in out
    summary = json.loads((tmp_path / "sklearn-iris" / "random__seed0__rep0.json").read_text())
    assert summary["learner"] == json.loads(summary["incumbent"])["learner"]
    assert summary["learner"] in ("knn", "j48", "bagging")
    assert {"base", "fs_search", "fs_eval", "cv_error", "test_error"} <= set(summary)
    assert 0 <= summary["test_error"] <= 100 and summary["evaluations"] > 0
    frame = pd.read_parquet(tmp_path / "sklearn-iris" / "random__seed0__rep0.parquet")
    trajectory = frame[frame.row_type == "trajectory"]
    assert len(trajectory) >= 1 and trajectory.wall.is_monotonic_increasing
    assert main(["run", "--method", "random", "--dataset", "sklearn-iris", "--budget", "8",
                 "--results-dir", str(tmp_path)]) == 0  # fmt: skip
    assert "already finished" in capsys.readouterr().out  # never run again or overwritten
    summary_path = tmp_path / "sklearn-iris" / "random__seed0__rep0.json"
    written = summary_path.read_bytes()
    summary_path.unlink()  # a kill between the results file and its summary
    assert main(["run", "--method", "random", "--dataset", "sklearn-iris", "--budget", "8",
                 "--results-dir", str(tmp_path)]) == 0  # fmt: skip
    assert "already finished" in capsys.readouterr().out
    assert summary_path.read_bytes() == written  # restored from the results file, for the report
    assert not list(tmp_path.glob("sklearn-iris/.*"))  # no temporary file left


BASE = ["run", "--dataset", "sklearn-iris", "--budget", "5"]


@pytest.mark.parametrize(
    "argv, message",
    [
        ([*BASE, "--method", "random", "--budget", "0"], "budget must be > 0 seconds"),
        ([*BASE, "--method", "random", "--time-limit", "0"], "limits.time_s must be > 0"),
        ([*BASE, "--method", "random", "--memory-limit", "-1"], "limits.memory_mb must be > 0"),
        ([*BASE, "--method", "random", "--learners", "knn,m5p"], "unknown learner 'm5p'"),
        ([*BASE, "--method", "random", "--space", "regression"], "a regression space cannot"),
        (
            [
                "run",
                "--dataset",
                "sklearn-diabetes",
                "--budget",
                "5",
                "--method",
                "random",
                "--space",
                "classification",
            ],
            "a classification space cannot run on dataset 'sklearn-diabetes'",
        ),  # fmt: skip
        ([*BASE, "--method", "random", "--max-ensemble", "6"], "ensembles take 1 to 5"),
        ([*BASE, "--method", "irace", "--set", "alpha=2"], "alpha=2 out of range"),
        ([*BASE, "--method", "hyperband"], "unknown method 'hyperband'; valid choices: exdef"),
        (["run", "--dataset", "Dexter", "--budget", "5", "--method", "smac"], "fetch-openml 4136"),
        ([*BASE, "--method", "random", "--openml", "always"], "unknown openml mode 'always'"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path, capsys, empty_openml, argv, message
):
    assert main([*argv, "--results-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not any(tmp_path.iterdir())


@pytest.fixture
def empty_openml(tmp_path_factory, monkeypatch):
    """An empty OpenML folder (no seed set is cached)."""
    folder = tmp_path_factory.mktemp("openml")
    monkeypatch.setenv("HPO_OPENML_DIR", str(folder))
    return folder


def test_seed_sets_on_openml_run_once_cached_or_fetched_and_name_the_command(empty_openml):
    with pytest.raises(ValueError, match=r"fetch-openml 4136` .* or pass --openml fetch"):
        resolve_dataset("Dexter")
    assert resolve_dataset("Dexter", "fetch") == "openml:4136"  # downloaded on loading
    np.savez_compressed(empty_openml / "openml-4136.npz", X=np.zeros((4, 2)), y=np.arange(4))
    assert resolve_dataset("Dexter") == "openml:4136"  # cached: runs without network
    assert resolve_dataset("Abalone") == "abalone"  # the labelled 3-class substitute
    assert resolve_dataset("Abalone", "fetch") == "openml:183"  # the seed's 28 classes
    assert resolve_dataset("Abalone", "fetch", "regression") == "openml:42726"
    with pytest.raises(ValueError, match="no OpenML id found"):
        resolve_dataset("Slice", "fetch")
    with pytest.raises(ValueError, match="unknown openml mode 'always'"):
        resolve_dataset("Dexter", "always")


def test_seed_openml_ids_are_read_with_the_task_of_their_table():
    from experiments.autoweka import seed_datasets
    from hpo.data.catalog import dataset_task

    for task in ("classification", "regression"):
        ids = [e["openml"] for e in seed_datasets()[task].values() if e.get("openml")]
        assert ids and all(dataset_task(f"openml:{i}") == task for i in ids)


def test_the_paper_profile_lists_what_cannot_run_and_why(empty_openml):
    from experiments.autoweka import profile_datasets

    paper = load_profile("paper")
    runnable, not_run = profile_datasets(paper, "fetch")
    assert set(not_run) == {
        "MNIST Basic (classification)", "Rot. MNIST + BI (classification)",
        "Parkinson's Motor (regression)", "Parkinson's Total (regression)",
        "Relation Network (regression)", "Slice (regression)",
    }  # fmt: skip
    assert "openml:4136" in runnable and "openml:42726" in runnable
    cached_only, offline_not_run = profile_datasets(paper)
    assert "openml:4136" not in cached_only
    assert "fetch-openml 4136" in offline_not_run["Dexter (classification)"]
    assert len(cached_only) + len(offline_not_run) == len(runnable) + len(not_run)


def test_seed_dataset_names_map_to_ours_and_profiles_plan(uci_dir):
    assert resolve_dataset("KR-vs-KP") == "chess-krvkp"
    assert resolve_dataset("sklearn-wine") == "sklearn-wine"
    runs = plan(load_profile("smoke"))
    assert {r.dataset for r in runs} == {"car", "yeast", "sklearn-diabetes"}
    assert len(runs) == 3 * 7 * 2


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
    from analysis.autoweka.report import oracle_table
    from experiments.autoweka import AutowekaRun, execute

    run = AutowekaRun(
        method="exdef",
        dataset="sklearn-iris",
        budget=1000,
        budget_kind="evaluations",
        learners=("knn", "j48", "zero_r"),
    )
    outcome = execute(run)
    points = outcome["summary"]["oracle_points"]
    oracle = {p["learner"]: p["test_error"] for p in points}
    assert set(oracle) == {"knn", "j48", "zero_r"} and len(points) == 3
    assert oracle["zero_r"] > max(oracle["knn"], oracle["j48"])  # the majority class is worst
    table = oracle_table(pd.DataFrame([outcome["summary"]]), {}, ["sklearn-iris"])
    assert table.loc[0, "ExDef Worst ours"] == oracle["zero_r"]
    assert table.loc[0, "ExDef Gap ours"] == oracle["zero_r"] - min(oracle.values())


def test_the_report_has_the_grid_oracle_the_limited_grid_and_the_sets_not_run(
    tmp_path, empty_openml
):
    """End to end on two small sets, one of them a seed set read from the OpenML folder (iris's
    rows planted as 'Dexter', so the seed's numbers are set beside it): Ex-Def, the grid (two
    seeds) and random search, then the report."""
    from sklearn.datasets import load_iris

    from analysis.autoweka.report import grid_points, load_summaries, write_report
    from experiments.autoweka import seed_datasets

    iris = load_iris()
    np.savez_compressed(empty_openml / "openml-4136.npz", X=iris.data, y=iris.target)
    runs = tmp_path / "runs"
    for dataset in ("sklearn-wine", "Dexter"):
        for method, seeds in (("exdef", [0]), ("grid", [0, 1]), ("random", [0, 1])):
            for seed in seeds:
                assert main(
                    [
                        "run", "--method", method, "--dataset", dataset, "--budget", "60",
                        "--budget-kind", "evaluations", "--seed", str(seed),
                        "--learners", "knn,j48,zero_r", "--results-dir", str(runs),
                    ]
                ) == 0  # fmt: skip
    summaries = load_summaries(runs)
    assert set(summaries.dataset) == {"sklearn-wine", "openml:4136"}
    profile = {"name": "test", "budget": 60, "budget_kind": "evaluations"}
    report = write_report(
        runs, tmp_path / "report", seed_datasets(), profile, 1, 50, {"Slice (regression)": "no id"}
    )
    text = report.read_text()
    assert "## Datasets of the profile not run" in text and "**Slice (regression)**: no id" in text
    random = summaries[summaries.method == "random"]
    per_evaluation = 1e3 * random.optimizer_seconds.sum() / random.evaluations.sum()
    overhead = text.split("## Optimiser time")[1]
    assert "optimizer ms / evaluation" in overhead and "wall ms / evaluation" in overhead
    header = next(line for line in overhead.splitlines() if line.startswith("| method |"))
    row = next(line for line in overhead.splitlines() if line.startswith("| random |"))
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    assert float(cells[" optimizer ms / evaluation "]) == pytest.approx(per_evaluation, rel=5e-3)
    setup = summaries[summaries.method == "random"].setup_seconds.sum()
    assert float(cells[" setup_seconds "]) == pytest.approx(setup, rel=5e-3) and setup > 0
    oracle = pd.read_csv(tmp_path / "report" / "table_4_2.tsv", sep="\t").set_index("dataset")
    points = grid_points(summaries, "openml:4136")
    assert len(points) == oracle.loc["openml:4136", "Grid models"] >= 6  # two runs' union
    assert oracle.loc["openml:4136", "Grid Best ours"] == points.test_error.min()
    assert oracle.loc["openml:4136", "Grid Gap seed"] == 59.44  # the seed's Dexter
    assert oracle.loc["openml:4136", "ExDef models"] == 3
    cv = pd.read_csv(tmp_path / "report" / "table_4_3.tsv", sep="\t").set_index("dataset")
    limited = cv.loc["openml:4136", "limited_grid ours"]
    assert points.cv_error.min() <= limited <= points.cv_error.max()
    assert cv.loc["openml:4136", "limited_grid seed"] == 6.61  # the seed's Dexter
    wins = pd.read_csv(tmp_path / "report" / "wins_classification_cv.tsv", sep="\t", index_col=0)
    assert "best_limited_baseline" in wins.index


def test_i_f_race_budget_is_the_time_budget_over_random_search_s_mean_evaluation_time(tmp_path):
    from experiments.autoweka import AutowekaRun, irace_budget

    run = AutowekaRun(method="irace", dataset="car", budget=60, budget_kind="cpu")
    assert irace_budget(run, tmp_path)[0] == {}  # no random run yet: I/F-Race's default
    folder = tmp_path / "car"
    folder.mkdir()
    for seed, (cpu, wall, n) in enumerate([(50.0, 70.0, 100), (70.0, 90.0, 140)]):
        summary = {"budget_kind": "cpu", "cpu_seconds": cpu, "wall_seconds": wall, "evaluations": n}
        (folder / f"random__seed{seed}__rep0.json").write_text(json.dumps(summary))
    settings, source = irace_budget(run, tmp_path)
    assert settings == {"max_evaluations": 120}  # 60 s / (120 CPU s / 240 evaluations)
    assert "random search's mean evaluation time (0.5 s, 2 runs)" in source
    wall = AutowekaRun(method="irace", dataset="car", budget=60, budget_kind="wall")
    assert irace_budget(wall, tmp_path)[0] == {}  # random's runs had a CPU budget
    fixed = AutowekaRun(method="irace", dataset="car", budget=60, settings={"max_evaluations": 7})
    assert irace_budget(fixed, tmp_path) == ({}, "max_evaluations set")
    assert irace_budget(AutowekaRun(method="smac", dataset="car", budget=60), tmp_path) == ({}, "")


def test_a_regression_fit_predicting_nan_is_a_failed_fold_and_smac_goes_on(monkeypatch):
    """A learner whose predictions hold NaN (the smoke profile met one: a Gaussian process with a
    fractional polynomial exponent) scores the seed's failure loss (RMSE 1e10, §4.1), counts as
    a failing fold, and SMAC, told that loss, keeps running (it was told NaN and crashed)."""
    import dataclasses

    from experiments.autoweka import PROTOCOL, load_methods
    from experiments.spaces import load_cash_library
    from hpo.cash.budget import TimeBudget
    from hpo.cash.methods import make_method
    from hpo.cash.objective import NOT_FINITE, InstanceObjective, make_instances
    from hpo.cash.run import run_cash
    from hpo.cash.space import build_cash_space
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.isolation import EvaluationLimits
    from hpo.learners import FitGuard

    data = load_dataset("sklearn-diabetes")
    limits = EvaluationLimits(time_s=60)  # max_failed_folds 3; no fit reaches the child here
    evaluator = Evaluator(
        data, PROTOCOL, lambda _: "autoweka_regression", FitGuard(), 0, 0, limits=limits
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
        smac = make_method(load_methods()["smac_10batch"], cash, 10, np.random.default_rng(0))
        run = run_cash(smac, objective, TimeBudget(200, "evaluations"), diagnostic=False)
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
