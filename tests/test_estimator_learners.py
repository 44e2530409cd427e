"""A scikit-learn-compatible estimator named by its class is a learner: in a space file
(``learner: sklearn.ensemble.ExtraTreesClassifier``, ``conf/space/trees.yaml``) or on the command
line (``learner._target_=…``), its parameters checked against the class's own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from experiments.configuration.compose import compose_run
from experiments.run.results import config_hash
from experiments.run.runner import run
from hpo.learners import learner_task, make_estimator
from hpo.learners.guard import FitGuard
from runfiles.files import without_timing

REPO = Path(__file__).resolve().parents[1]
TREES = "sklearn.ensemble.ExtraTreesClassifier"


def test_a_space_names_an_estimator_class_and_runs_it_reproducibly() -> None:
    spec = compose_run(["space=trees", "optimizer=rs", "budget=3", "dataset=sklearn-wine"])
    first, again = run(spec), run(spec)
    assert set(first.trace["learner"]) == {TREES}
    assert without_timing(first.trace).equals(without_timing(again.trace))
    assert first.outcomes["test_error"].between(0, 1).all()


def test_the_estimator_gets_the_configuration_the_settings_and_the_seed() -> None:
    config = {"max_features": 0.5, "min_samples_leaf": 3, "n_estimators": 7}
    estimator = make_estimator(TREES, config, FitGuard(), seed=11)
    assert type(estimator).__name__ == "ExtraTreesClassifier"
    params = estimator.get_params()
    assert (params["max_features"], params["min_samples_leaf"], params["n_estimators"]) == (
        0.5, 3, 7,
    )  # fmt: skip
    assert params["random_state"] == 11
    assert learner_task("sklearn.linear_model.Ridge") == "regression"
    assert learner_task("sklearn.neighbors.KNeighborsClassifier") == "classification"


def test_the_command_line_swaps_the_spaces_learner() -> None:
    forest = "sklearn.ensemble.RandomForestClassifier"
    base = ["space=trees", "optimizer=rs", "budget=3"]
    swapped = compose_run([*base, f"learner._target_={forest}"])
    assert swapped.task.space["learner"] == forest
    assert config_hash(swapped) != config_hash(compose_run(base))
    assert set(run(swapped).trace["learner"]) == {forest}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["learner._target_=sklearn.nope.Forest"],
            "error: space 'trees': learner 'sklearn.nope.Forest' does not import "
            "(ModuleNotFoundError: No module named 'sklearn.nope')",
        ),
        (
            ["learner._target_=numpy.ndarray"],
            "error: space 'trees': learner 'numpy.ndarray' is not a scikit-learn-compatible "
            "estimator class (it lacks fit, predict, get_params)",
        ),
        (
            ["learner._target_=sklearn.svm.SVC"],
            "error: learner 'sklearn.svm.SVC' takes no parameter 'max_features'; its "
            "parameters: C,",
        ),
        (
            ["space=sklearn_cash", "learner._target_=sklearn.svm.SVC"],
            "error: learner._target_ replaces a space's one learner, and space 'sklearn_cash' has "
            "none",
        ),
    ],
)
def test_a_bad_learner_is_one_line_and_writes_nothing(
    tmp_path: Path, isolated_env: dict, overrides: list[str], message: str
) -> None:
    results = tmp_path / "results"
    command = [sys.executable, "run.py", "space=trees", *overrides, f"results_dir={results}"]
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(message) and len(done.stderr.splitlines()) == 1, done.stderr
    assert not results.exists()
