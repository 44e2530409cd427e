"""Bad input to Bermúdez-Chacón 2014's study end to end (``docs/hierarchical.md``): ``python
run.py`` with the study's method and one bad setting prints one line, exits 2 and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRIOR = "space.parameters.radius_neighbors__radius.prior"
FILE = "optimizer.settings.priors={space:seed003,priors:{knn__leaf_size:{dist:uniform}}}"
VIRTUAL = "{type:categorical,choices:[a,b],virtual:true,condition:{classifier:[knn]}}"
WEIGHTS = "optimizer.performance_index.weights"


@pytest.mark.parametrize(
    ("method", "overrides", "message"),
    [
        ("hrs", [f"{PRIOR}.sigma=0"], "sigma=0 must be > 0"),
        ("hrs", ["space.parameters.qda__reg_param.prior.weights=[0.5,0.6]"], "sum to 1"),
        (
            "hrs",
            [
                "++space.parameters.knn__n_neighbors.prior.low=30",
                "++space.parameters.knn__n_neighbors.prior.high=2",
            ],
            "bounds reversed or empty, low=30.0",
        ),
        ("pds", [FILE], "a hyperparameter the space's learners lack"),
        ("hrs", [f"++space.parameters.knn__flag={VIRTUAL}"], "would reach that learner"),
        (
            "hrs",
            [
                "++space.parameters.knn__n_neighbours={type:integer,low:1,high:30,"
                "condition:{classifier:[knn]}}"
            ],
            "parameter 'knn__n_neighbours' is never read by learner 'knn'",
        ),  # fmt: skip
        ("hrs", ["optimizer.model_selection.alpha=1"], "alpha=1 must be in (0, 1)"),
        ("hrs", ["optimizer.model_selection.folds=1"], "folds=1 must be an integer >= 2"),
        ("hrs", ["time_budget=0"], "time_budget must be a number of seconds > 0"),
        ("hrs", [f"{WEIGHTS}.mcc=-1"], "must be a finite number >= 0"),
        (
            "hrs",
            [f"{WEIGHTS}={{accuracy:0,f_beta:0,brier:0,mcc:0}}"],
            "metric weights are all zero",
        ),
        ("hrs", [f"++{WEIGHTS}.auc=1"], "'auc' needs predicted probabilities and learner"),
    ],
)
def test_bad_seed003_input_is_one_line_exit_2_nothing_written(
    tmp_path: Path, method: str, overrides: list[str], message: str
) -> None:
    out = tmp_path / "results"
    result = subprocess.run(
        [sys.executable, "run.py", f"optimizer={method}", "dataset=sklearn-iris", "budget=2"]
        + overrides
        + [f"results_dir={out}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not out.exists()


def test_an_unknown_profile_of_the_experiment_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "experiments.reproduce", "hierarchical", "--profile", "huge"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HPO_RESULTS_ROOT": str(tmp_path / "results")},
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "unknown profile 'huge'" in result.stderr and not (tmp_path / "results").exists()
