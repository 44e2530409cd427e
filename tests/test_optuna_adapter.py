"""Optuna's samplers as optimizers (hpo/optimizers/optuna_sampler.py): the shipped method files
pass the conformance checks, a run with the same seed writes the same results in two fresh
processes (TPE, GP), the space maps to Optuna's distributions with conditions as define-by-run
(a trial holds only the active parameters), the results record Optuna's version, and a sampler
that is not an Optuna sampler is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from hpo.optimizers import make_optimizer, optimizer_class
from hpo.space.search_space import Categorical, Integer, Real
from hpo.testing import TOY_CONDITIONAL_SPACE, check_optimizer
from runfiles.files import without_timing

optuna = pytest.importorskip("optuna")

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("optuna_tpe", "optuna_gp", "optuna_cmaes", "optuna_qmc")


def _sampler(method: str) -> dict:
    return yaml.safe_load((REPO / "conf" / "optimizer" / f"{method}.yaml").read_text())["settings"][
        "sampler"
    ]


@pytest.mark.parametrize("method", CONFIGS)
def test_every_shipped_sampler_passes_the_conformance_checks(method: str) -> None:
    if method == "optuna_gp":
        pytest.importorskip("torch")
    if method == "optuna_cmaes":
        pytest.importorskip("cmaes")
    check_optimizer(optimizer_class("optuna"), budget=6, sampler=_sampler(method))


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "run.py", *args], cwd=REPO, env=env, capture_output=True, text=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("method", ["optuna_tpe", "optuna_gp"])
def test_the_same_seed_gives_the_same_results_file(
    method: str, tmp_path: Path, isolated_env: dict
) -> None:
    if method == "optuna_gp":
        pytest.importorskip("torch")
    tables = []
    for folder in ("a", "b"):  # budget 12: past the 10 random startup trials, the model proposes
        args = [f"optimizer={method}", "dataset=sklearn-iris", "budget=12", "seed=2"]
        result = _run([*args, f"results_dir={tmp_path / folder}"], isolated_env)
        assert result.returncode == 0, result.stderr
        (path,) = (tmp_path / folder).rglob("*.parquet")
        tables.append(pd.read_parquet(path))
    pd.testing.assert_frame_equal(
        without_timing(tables[0]), without_timing(tables[1]), check_exact=True
    )
    assert json.loads(tables[0]["versions"].iloc[0])["optuna"] == optuna.__version__


def test_the_space_maps_to_optuna_s_distributions_with_conditions_define_by_run() -> None:
    optimizer = make_optimizer("optuna", TOY_CONDITIONAL_SPACE, 20, np.random.default_rng(3))
    kernel, gamma, degree, c = (optimizer.distributions[n] for n in TOY_CONDITIONAL_SPACE.names)
    assert isinstance(kernel, optuna.distributions.CategoricalDistribution)
    assert kernel.choices == ("rbf", "poly", "linear")
    assert (gamma.low, gamma.high, gamma.log) == (1e-4, 10.0, True)
    assert isinstance(degree, optuna.distributions.IntDistribution) and not degree.log
    assert (c.low, c.high, c.log) == (0.0, 1.0, False)
    seen, configs = set(), []
    for _ in range(20):
        proposal = optimizer.ask()
        config = dict(proposal.config)
        active = {
            p.name
            for p in TOY_CONDITIONAL_SPACE.parameters
            if TOY_CONDITIONAL_SPACE.is_active(p, config)
        }
        assert set(config) == active  # an inactive parameter is never suggested
        optimizer.tell(proposal, float(config["c"]))
        seen.add(config["kernel"])
        configs.append(config)
    trials = optimizer.study.trials
    assert [t.params for t in trials] == configs  # the sampler sees what was evaluated
    assert seen == {"rbf", "poly", "linear"}
    assert [t.value for t in trials] == optimizer.y


def test_types_follow_the_space() -> None:
    optimizer = make_optimizer("optuna", TOY_CONDITIONAL_SPACE, 5, np.random.default_rng(0))
    for _ in range(5):
        proposal = optimizer.ask()
        for p in TOY_CONDITIONAL_SPACE.parameters:
            value = proposal.config.get(p.name)
            if value is None:
                continue
            kind = {Real: float, Integer: int, Categorical: str}[type(p)]
            assert type(value) is kind, (p.name, value)
        optimizer.tell(proposal, 0.5)


def test_a_sampler_that_is_not_an_optuna_sampler_is_one_line_exit_2(
    tmp_path: Path, isolated_env: dict
) -> None:
    args = ["optimizer=optuna_tpe", "optimizer.settings.sampler._target_=collections.OrderedDict"]
    result = _run([*args, "dataset=sklearn-iris", f"results_dir={tmp_path / 'r'}"], isolated_env)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: optimizer setting sampler: 'collections.OrderedDict' is not an Optuna sampler (a "
        "subclass of optuna.samplers.BaseSampler, e.g. optuna.samplers.TPESampler)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_sampler_that_does_not_import_is_one_line() -> None:
    override = "optimizer.settings.sampler._target_=optuna.samplers.NoSampler"
    with pytest.raises(UsageError, match="'optuna.samplers.NoSampler' is not an Optuna sampler"):
        check_method(compose_run(["optimizer=optuna_tpe", override, "dataset=sklearn-iris"]))


def test_a_seed_in_the_sampler_settings_is_refused() -> None:
    spec = {"_target_": "optuna.samplers.TPESampler", "seed": 1}
    with pytest.raises(ValueError, match="remove seed; the sampler's seed is drawn from the run"):
        make_optimizer("optuna", TOY_CONDITIONAL_SPACE, 5, np.random.default_rng(0), sampler=spec)
