"""Labels say what ran: an override that changes a method's algorithm (a sampler, a facade, any
``optimizer.*`` setting but a post-run stage) gives the run its own label, ``optimizer.label``
names it outright, and the analysis refuses to pool two different methods under one label."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main as analysis_main
from analysis.load import PooledLabelError, check_one_method_per_label, load_outcomes
from experiments.configuration.command_line import label_overrides
from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError
from experiments.run.results import config_hash, method_hash, run_filename
from experiments.run.single import run_and_save

IRIS = ["dataset=sklearn-iris", "budget=3"]
REPO = Path(__file__).resolve().parents[1]


def test_an_overridden_sampler_gets_its_own_label() -> None:
    plain = compose_run(["optimizer=optuna_tpe", *IRIS])
    other = compose_run(
        ["optimizer=optuna_tpe", *IRIS,
         "optimizer.settings.sampler._target_=optuna.samplers.RandomSampler"]
    )  # fmt: skip
    assert list(plain.method.rules) == ["optuna_tpe"]
    assert list(other.method.rules) == ["optuna_tpe[sampler=RandomSampler]"]
    assert method_hash(other) != method_hash(plain)


def test_a_method_flag_and_a_setting_each_enter_the_label_and_a_stage_does_not() -> None:
    assert list(compose_run(["optimizer=gp", *IRIS, "optimizer.reshuffle=true"]).method.rules) == [
        "gp[reshuffle=true]"
    ]
    assert label_overrides(
        ["+optimizer.settings.facade=smac.RandomFacade", "optimizer.settings.n_initial=3",
         "optimizer.model_selection=null", "dataset=iris", "optimizer=smac"]
    ) == [("facade", "RandomFacade"), ("n_initial", "3")]  # fmt: skip
    hrs = compose_run(["optimizer=hrs", "dataset=sklearn-iris", "optimizer.model_selection=null"])
    assert hrs.method.rules == compose_run(["optimizer=hrs", "dataset=sklearn-iris"]).method.rules


def test_a_label_can_be_given_and_is_checked() -> None:
    named = compose_run(["optimizer=optuna_tpe", *IRIS, "optimizer.label=my_tpe"])
    assert list(named.method.rules) == ["my_tpe"]
    assert config_hash(named) != config_hash(compose_run(["optimizer=optuna_tpe", *IRIS]))
    with pytest.raises(UsageError, match="without / : or"):
        compose_run(["optimizer=rs", *IRIS, "optimizer.label=a/b"])


def test_the_analysis_refuses_two_methods_under_one_label(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Two runs that differ in a setting, forced under one label (as results written before the
    labels were derived would be), are refused in one line; apart they load."""
    a = compose_run(["optimizer=rs", *IRIS])
    b = compose_run(["optimizer=rs", *IRIS, "optimizer.label=rs"])  # same method: same hash
    assert method_hash(a) == method_hash(b)
    tpe = compose_run(["optimizer=optuna_tpe", *IRIS])
    other = compose_run(
        ["optimizer=optuna_tpe", *IRIS, "optimizer.label=optuna_tpe",
         "optimizer.settings.sampler._target_=optuna.samplers.RandomSampler"]
    )  # fmt: skip
    root = tmp_path / "sweep"
    for i, spec in enumerate((tpe, other)):
        path = root / "runs" / "main" / f"run{i}.parquet"
        run_and_save(spec, path, None)
    with pytest.raises(PooledLabelError, match=r"label 'optuna_tpe' names 2 different methods"):
        load_outcomes(root)
    assert analysis_main([str(root), "--no-figures"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: label 'optuna_tpe' names 2")


def test_one_method_per_label_is_checked_per_dataset_and_skips_old_runs() -> None:
    rows = pd.DataFrame(
        {"method": ["m", "m", "m"], "dataset": ["a", "b", "a"], "space": "s",
         "protocol": "holdout", "part": "main", "method_hash": ["h1", "h2", "h1"]}
    )  # fmt: skip
    check_one_method_per_label(rows)  # one hash per (label, dataset): not pooled within a dataset
    with pytest.raises(PooledLabelError):
        check_one_method_per_label(rows.assign(method_hash=["h1", "h2", "h3"]).assign(dataset="a"))
    check_one_method_per_label(rows.assign(method_hash=[None, None, None]))  # written before
    check_one_method_per_label(rows.drop(columns="method_hash"))


def test_a_finished_file_is_reused_only_when_it_holds_this_run(tmp_path: Path, isolated_env):  # noqa: ANN001
    """``run.py`` reuses a results file only when the run specification it stores is this
    run's identity, and says so; a file at the run's path holding another run is set aside
    (kept, renamed) and the run runs."""
    spec = compose_run(["optimizer=rs", *IRIS])
    path = tmp_path / run_filename(spec)
    run_and_save(compose_run(["optimizer=rs", *IRIS, "seed=7"]), path, None)
    content = path.read_bytes()
    command = [sys.executable, "run.py", "optimizer=rs", *IRIS, f"results_dir={tmp_path}"]
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "its stored run specification is not this run's" in done.stderr
    assert "already finished" not in done.stdout
    (kept,) = path.parent.glob(path.name + ".corrupt*")
    assert kept.read_bytes() == content  # nothing finished is lost
    again = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "already finished, not run again (the run specification it stores is this run's" in (
        again.stdout
    )
