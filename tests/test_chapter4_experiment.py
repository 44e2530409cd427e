"""Chapter 4's experiment (thesis §4.4.1-4.4.2): the plan's shared runs (BO-post, RS-post and
EO-post are rules over the BO-best, RS-best and EO runs), one BO-best + BO-post run whose
post-hoc choice and test errors are recomputed by hand from the predictions sidecar, and the
one-line refusals (exit 2, nothing written).

The method definitions (family, rules, space and protocol by default, GP settings per space) are
checked in ``tests/test_method_configs.py``.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from experiments.run.single import run_and_save
from experiments.sweep import plan
from hpo.data.catalog import load_dataset
from hpo.ensembles import forward_greedy, majority_vote
from runfiles.files import read_predictions
from runfiles.schema import PREDICTION_KINDS

REPO = Path(__file__).resolve().parents[1]
FAST_GP = {"burnin": 5, "n_samples": 2, "ls_restarts": 2, "ls_best_observed": 2, "ls_max_iter": 5}


def test_chapter4_plan_shares_the_best_and_post_runs(tmp_path: Path) -> None:
    groups = defaultdict(set)
    for run in plan("chapter4", "smoke", results_root=tmp_path):
        key = (run.part, run.spec.task.dataset, run.spec.repetition)
        groups[key].add(frozenset(run.spec.method.rules))
        assert run.spec.task.protocol_name == "chapter4" and run.spec.outputs.predictions
        assert (
            run.spec.task.space_name == {"svm": "svm_kernels", "sklearn": "sklearn_cash"}[run.part]
        )
    svm = {
        frozenset(g) for g in (["BO-best", "BO-post"], ["RS-best", "RS-post"], ["EO", "EO-post"])
    }
    sklearn = {
        frozenset(g)
        for g in (["BO-best", "BO-post"], ["RS-best", "RS-post"], ["EO-sqm"], ["EO-C"], ["EO-sig"])
    } | {frozenset(["cma"])}
    assert len(groups) == 2 * 2 * 2  # two parts x 2 datasets x 2 repetitions
    for (part, *_), found in groups.items():
        assert found == (svm if part == "svm" else sklearn)


def test_chapter4_paper_profile_is_the_thesis_design(tmp_path: Path) -> None:
    runs = plan("chapter4", "paper", results_root=tmp_path)
    assert {r.spec.budget.evaluations for r in runs} == {200}
    assert len({r.spec.task.dataset for r in runs}) == 18
    assert {r.spec.repetition for r in runs} == set(range(10))
    assert len(runs) == 18 * 10 * (3 + 6)


def _vote_error(test: pd.DataFrame, models: list[int], y: np.ndarray) -> float:
    rows = test[test["model"] == models[0]]["row"].to_numpy()
    votes = np.stack(
        [
            test[test["model"] == m].set_index("row").loc[rows, "prediction"].to_numpy()
            for m in models
        ]
    )
    return float(np.mean(majority_vote(votes) != y[rows]))


def test_bo_best_and_bo_post_share_one_run_recomputed_from_the_sidecar(tmp_path: Path) -> None:
    best = compose_run(["optimizer=bo_best", "dataset=sklearn-breast-cancer", "budget=10"])
    post = compose_run(["optimizer=bo_post", "dataset=sklearn-breast-cancer", "budget=10"])
    assert {**best.identity(), "rules": None} == {**post.identity(), "rules": None}
    spec = best.with_settings(
        rules={**best.method.rules, **post.method.rules},
        predictions=True,
        optimizer_settings={**best.method.settings, **FAST_GP},
    )
    path = run_and_save(spec, tmp_path / "run.parquet")
    table = pd.read_parquet(path)
    outcomes = table[table["row_type"] == "outcome"]
    trace = table[table["row_type"] == "trace"].sort_values("iteration")
    predictions = read_predictions(path)
    y = load_dataset("sklearn-breast-cancer").y
    valid = predictions[predictions["split"] == PREDICTION_KINDS["valid"]]
    test = predictions[predictions["split"] == PREDICTION_KINDS["test"]]
    # the sidecar stores a configuration's test predictions once: iteration -> first iteration
    params = [c for c in trace.columns if c.startswith("param_")]
    keys = [tuple(row) for row in trace[params].astype(str).to_numpy()]
    first = {
        int(i): int(trace["iteration"].iloc[keys.index(k)])
        for i, k in zip(trace["iteration"], keys, strict=True)
    }
    n_folds = int(valid["fold"].max()) + 1
    for t in (3, 6, 10):
        row = outcomes[(outcomes["method"] == "BO-post") & (outcomes["iteration"] == t)].iloc[0]
        folds = []
        for fold in range(n_folds):
            rows = valid[(valid["model"] == 1) & (valid["fold"] == fold)]["row"].to_numpy()
            pool = np.stack(
                [
                    valid[(valid["model"] == m) & (valid["fold"] == fold)]
                    .set_index("row")
                    .loc[rows, "prediction"]
                    .to_numpy()
                    for m in range(1, t + 1)
                ]
            )
            folds.append((pool, y[rows]))
        counts = forward_greedy(folds)  # defaults: 3 best, 100 members, zero-one, sqm ties
        members = [int(m) for m in row.members.split(",")]
        assert members == [i + 1 for i, c in enumerate(counts) for _ in range(c)]
        assert _vote_error(test, [first[m] for m in members], y) == row.test_error
    bo_best = outcomes[(outcomes["method"] == "BO-best") & (outcomes["iteration"] == 10)].iloc[0]
    assert _vote_error(test, [first[int(bo_best.members)]], y) == bo_best.test_error


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["optimizer=eo_c", "optimizer.settings.loss=hinge"], "unknown ensemble loss 'hinge'"),
        (["optimizer=eo", "optimizer.settings.ensemble_size=1"], "ensemble_size must be"),
        (["optimizer=bo_post", "post_hoc.tie_loss=hinge"], "unknown ensemble loss 'hinge'"),
        (["optimizer=rs_post", "post_hoc.size=0"], "post_hoc.size must be an integer >= 1"),
        (["optimizer=bo_post", "post_hoc.colour=1"], "unknown post_hoc setting 'colour'"),
        (["optimizer=bo_post", "optimizer.reshuffle=true"], "optimizer.reshuffle=true: post_hoc"),
        (["optimizer=eo_sig", "optimizer.reshuffle=true"], "optimizer.reshuffle=true: eo"),
    ],
)
def test_bad_ensemble_settings_are_refused_before_anything_runs(overrides, message) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        check_method(compose_run([*overrides, "dataset=pima"]))


def test_a_bad_ensemble_setting_on_the_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "run.py", "optimizer=bo_post", "optimizer.reshuffle=true",
         "dataset=pima", f"results_dir={tmp_path / 'out'}"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "reshuffle=false" in result.stderr
    assert not (tmp_path / "out").exists()
