"""CARP-S (hpo/optimizers/carps_optimizer.py, experiments/carps_tasks): its optimizers run by
configuration and pass the conformance checks, the same seed writes the same results file, an
optimizer that ignores conditions has its inactive values dropped, the results record CARP-S's and
the wrapped library's versions, a bad setting is one line with exit 2; and the framework's tasks
run in CARP-S's own loop with the numbers this framework gives the same configurations."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from experiments.objectives import ObjectiveFunction
from hpo.optimizers import make_optimizer, optimizer_class
from hpo.optimizers.carps_optimizer import active_config
from hpo.testing import TOY_CONDITIONAL_SPACE, check_optimizer
from runfiles.files import without_timing

carps = pytest.importorskip("carps")
nevergrad = pytest.importorskip("nevergrad")

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("carps_random", "carps_nevergrad_de", "carps_nevergrad_ngopt")
TASK = ["dataset=sklearn-wine", "space=svm_rbf"]


def _settings(method: str) -> dict:
    return yaml.safe_load((REPO / "conf" / "optimizer" / f"{method}.yaml").read_text())["settings"]


def _run(args: list[str], env: dict, module: str = "run.py", cwd: Path = REPO):
    command = [sys.executable, *(["-m", module] if module != "run.py" else [str(REPO / module)])]
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("method", CONFIGS)
def test_every_shipped_carps_optimizer_passes_the_conformance_checks(method: str) -> None:
    check_optimizer(optimizer_class("carps"), budget=6, **_settings(method))


@pytest.mark.slow
def test_the_same_seed_gives_the_same_results_file_with_both_libraries_recorded(
    tmp_path: Path, isolated_env: dict
) -> None:
    tables = []
    for folder in ("a", "b"):
        args = ["optimizer=carps_nevergrad_de", "dataset=sklearn-iris", "budget=8", "seed=3"]
        result = _run([*args, f"results_dir={tmp_path / folder}"], isolated_env)
        assert result.returncode == 0, result.stderr
        (path,) = (tmp_path / folder).rglob("*.parquet")
        tables.append(pd.read_parquet(path))
    pd.testing.assert_frame_equal(
        without_timing(tables[0]), without_timing(tables[1]), check_exact=True
    )
    versions = json.loads(tables[0]["versions"].iloc[0])
    assert versions["carps"] == metadata.version("carps")
    assert versions["nevergrad"] == nevergrad.__version__


def test_an_optimizer_that_ignores_conditions_has_its_inactive_values_dropped() -> None:
    # Nevergrad proposes every hyperparameter; the run sees only the active ones, typed
    optimizer = make_optimizer(
        "carps",
        TOY_CONDITIONAL_SPACE,
        12,
        np.random.default_rng(1),
        **_settings("carps_nevergrad_de"),
    )
    kernels = set()
    for i in range(12):
        proposal = optimizer.ask()
        config = dict(proposal.config)
        kernels.add(config["kernel"])
        space = TOY_CONDITIONAL_SPACE
        active = [p.name for p in space.parameters if space.is_active(p, config)]
        assert sorted(config) == sorted(active), config
        optimizer.tell(proposal, float(i % 4))
    assert len(kernels) > 1  # more than one branch of the condition was proposed


def test_active_config_keeps_exactly_the_active_parameters() -> None:
    proposed = {"kernel": "linear", "c": 0.5, "gamma": 0.1, "degree": np.int64(3)}
    assert active_config(TOY_CONDITIONAL_SPACE, proposed) == {"kernel": "linear", "c": 0.5}
    proposed["kernel"] = "poly"
    config = active_config(TOY_CONDITIONAL_SPACE, proposed)
    assert config == {"kernel": "poly", "c": 0.5, "gamma": 0.1, "degree": 3}
    assert type(config["degree"]) is int


def test_a_class_that_is_not_a_carps_optimizer_is_one_line_exit_2(
    tmp_path: Path, isolated_env: dict
) -> None:
    args = [
        "optimizer=carps_random",
        "optimizer.settings.carps_optimizer._target_=collections.OrderedDict",
    ]
    result = _run([*args, "dataset=sklearn-iris", f"results_dir={tmp_path / 'r'}"], isolated_env)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: optimizer setting carps_optimizer: 'collections.OrderedDict' is not a CARP-S "
        "optimizer (a subclass of carps.optimizers.optimizer.Optimizer, e.g. "
        "carps.optimizers.nevergrad.NevergradOptimizer)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_settings_without_a_seed_from_the_run_are_refused() -> None:
    override = "optimizer.settings.carps_optimizer.nevergrad_cfg.seed=3"
    with pytest.raises(UsageError, match="is given no seed; write from_run where"):
        check_method(
            compose_run(["optimizer=carps_nevergrad_de", override, "dataset=sklearn-iris"])
        )


def test_a_wrapped_library_that_is_not_installed_is_one_line() -> None:
    override = "optimizer.settings.carps_optimizer._target_=carps.optimizers.hebo.HEBOOptimizer"
    try:
        import hebo  # noqa: F401
    except ImportError:
        with pytest.raises(UsageError, match="does not import .*install the library it wraps"):
            check_method(compose_run(["optimizer=carps_random", override, "dataset=sklearn-iris"]))
    else:
        pytest.skip("hebo is installed here")


def test_a_task_in_carps_own_loop_gives_this_framework_s_numbers() -> None:
    from carps.optimizers.random_search import RandomSearchOptimizer

    from experiments.carps_tasks import make_task

    task = make_task(TASK, n_trials=4, seed=2)
    task.objective_function.configspace.seed(5)
    optimizer = RandomSearchOptimizer(task)
    seen = []
    optimizer.tell = lambda trial_info, trial_value: seen.append((trial_info, trial_value))
    optimizer.get_current_incumbent = lambda: None
    optimizer.run()  # CARP-S's own ask -> evaluate -> tell loop
    assert len(seen) == 4
    ours = ObjectiveFunction(TASK)  # its numbers are run.py's (tests/test_objective_functions.py)
    for trial_info, trial_value in seen:
        expected = ours.evaluate(dict(trial_info.config), seed=2)
        assert trial_value.cost == expected.cost
        assert trial_value.additional_info["test_error"] == expected.info["test_error"]


def test_carps_runner_runs_its_optimizer_on_a_shipped_task(
    tmp_path: Path, isolated_env: dict
) -> None:
    args = [
        "+task/HPOThesis=chapter3_svm",
        "+optimizer/randomsearch=config",
        "seed=1",
        "task.n_trials=3",
        "hydra.searchpath=[pkg://experiments.carps_tasks]",
    ]
    env = {**isolated_env, "PYTHONPATH": str(REPO)}  # this checkout's tasks, whatever is installed
    result = _run(args, env, module="carps.run", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (log,) = tmp_path.rglob("trial_logs.jsonl")
    trials = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(trials) == 3
    ours = ObjectiveFunction(TASK)
    names = list(ours.configspace.keys())  # CARP-S logs a configuration's values in space order
    for trial in trials:
        config = dict(zip(names, trial["trial_info"]["config"], strict=True))
        expected = ours.evaluate(config, seed=1)
        assert trial["trial_value"]["cost"] == pytest.approx(expected.cost, abs=0)
        assert trial["trial_value"]["additional_info"]["test_error"] == expected.info["test_error"]
    # the documented way to another dataset: its own folder, not the first run's
    other = [*args, "task.dataset=sklearn-iris", 'task.overrides=["space=svm_rbf"]']
    again = _run(other, env, module="carps.run", cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    logs = sorted(str(p.parent.relative_to(tmp_path)) for p in tmp_path.rglob("trial_logs.jsonl"))
    assert len(logs) == 2 and "chapter3_svm-sklearn-iris" in logs[0] + logs[1]
    assert [json.loads(line) for line in log.read_text().splitlines()] == trials  # kept


def test_a_dataset_in_the_overrides_beside_task_dataset_is_one_line() -> None:
    from experiments.carps_tasks import make_task

    with pytest.raises(ValueError, match="name the dataset with task.dataset=<name>"):
        make_task(["dataset=iris"], n_trials=2, dataset="sklearn-wine")


def test_composing_inside_another_hydra_app_leaves_that_app_as_it_was(tmp_path: Path) -> None:
    from hydra import compose, initialize_config_dir

    (tmp_path / "config.yaml").write_text("theirs: 1\n")
    with initialize_config_dir(config_dir=str(tmp_path), version_base=None):
        spec = compose_run(["optimizer=rs", "dataset=sklearn-iris"])
        assert spec.method.optimizer == "rs"
        assert compose(config_name="config") == {"theirs": 1}
