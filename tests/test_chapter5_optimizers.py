"""Chapter 5's SMAC and CMA baselines (thesis §5.5): the SMAC adapter's ConfigSpace conversion,
conditions, bounds, seeding and files; CMA-ES's automatic population size on the mixed space."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from hpo.optimizers import FAMILIES, Optimizer, make_optimizer, setting_names
from hpo.optimizers.cmaes import CMAESOptimizer, auto_popsize
from hpo.space.search_space import Categorical, Condition, Integer, Real, Space

# A small conditional space: a three-way choice, a nested condition (gamma under kernel under
# model), a condition on several values (share) and an unconditional parameter (lr).
COND = Space(
    "cond",
    (
        Categorical("model", ("svm", "forest", "knn")),
        Real("C", 1e-3, 1e3, log=True, condition=Condition("model", ("svm",))),
        Categorical("kernel", ("rbf", "poly"), Condition("model", ("svm",))),
        Real("gamma", 1e-4, 10.0, log=True, condition=Condition("kernel", ("rbf",))),
        Integer("degree", 2, 5, Condition("kernel", ("poly",))),
        Integer("trees", 1, 100, Condition("model", ("forest",))),
        Real("share", 0.0, 1.0, condition=Condition("model", ("forest", "knn"))),
        Real("lr", -1.0, 1.0),
    ),
    learner_parameter="model",
)


def assert_valid(space: Space, config: Mapping[str, Any]) -> None:
    """Every active parameter set, no inactive one, each value of its type and in its bounds."""
    assert set(config) <= set(space.names)
    for p in space.parameters:
        assert (p.name in config) == space.is_active(p, config), (p.name, dict(config))
        if p.name not in config:
            continue
        value = config[p.name]
        if isinstance(p, Categorical):
            assert isinstance(value, str) and value in p.choices
        elif isinstance(p, Integer):
            assert type(value) is int and p.low <= value <= p.high
        else:
            assert type(value) is float and p.low <= value <= p.high


def synthetic_loss(config: Mapping[str, Any]) -> float:
    """A loss on COND that depends on each branch's own parameters."""
    if config["model"] == "svm":
        inner = abs(math.log10(config.get("gamma", 1.0))) if config["kernel"] == "rbf" else 1.0
        return 0.1 * abs(math.log10(config["C"])) + 0.1 * inner + 0.1 * config["lr"] ** 2
    if config["model"] == "forest":
        return 0.5 + config["share"] / 2 - config["trees"] / 1000
    return 0.8 + 0.1 * config["share"]


def drive(optimizer: Optimizer, space: Space = COND) -> list[dict[str, Any]]:
    """Ask/tell until the budget is spent; the configurations proposed, in order."""
    configs = []
    for _ in range(optimizer.budget):
        proposal = optimizer.ask()
        config = space.decode(proposal.u) if proposal.config is None else dict(proposal.config)
        configs.append(config)
        optimizer.tell(proposal, synthetic_loss(config) if space is COND else 0.5)
    return configs


# --- SMAC ---------------------------------------------------------------------------------------


def smac_run(seed: int, budget: int = 12, **settings: Any) -> tuple[Optimizer, list[dict]]:
    pytest.importorskip("smac")
    optimizer = make_optimizer("smac", COND, budget, np.random.default_rng(seed), **settings)
    return optimizer, drive(optimizer)


def test_smac_is_registered_with_its_settings() -> None:
    assert "smac" in FAMILIES
    assert setting_names("smac") == ("impute", "facade")
    with pytest.raises(ValueError, match="valid: impute, facade"):
        make_optimizer("smac", COND, 5, np.random.default_rng(0), popsize=3)


def test_configspace_has_the_space_s_scales_bounds_defaults_and_conditions() -> None:
    pytest.importorskip("smac")
    from ConfigSpace import EqualsCondition, InCondition

    from hpo.optimizers.smac import to_configspace

    cs = to_configspace(COND)
    assert sorted(cs) == sorted(COND.names)
    assert cs["C"].log and not cs["share"].log
    assert (cs["C"].lower, cs["C"].upper) == (1e-3, 1e3)
    assert (cs["degree"].lower, cs["degree"].upper) == (2, 5)
    assert list(cs["model"].choices) == ["svm", "forest", "knn"]
    # defaults are the values at the middle of the unit cube (thesis §5.5's imputation)
    assert cs["C"].default_value == pytest.approx(1.0)
    assert cs["degree"].default_value == COND.parameters[4].from_unit(0.5) == 3  # lower middle bin
    assert cs["model"].default_value == "forest"
    conditions = {c.child.name: c for c in cs.conditions}
    assert set(conditions) == {p.name for p in COND.parameters if p.condition is not None}
    assert isinstance(conditions["gamma"], EqualsCondition)
    assert conditions["gamma"].parent.name == "kernel" and conditions["gamma"].value == "rbf"
    assert isinstance(conditions["share"], InCondition)
    assert set(conditions["share"].values) == {"forest", "knn"}


def test_smac_proposals_respect_conditions_and_bounds() -> None:
    _, configs = smac_run(0, budget=30)
    for config in configs:
        assert_valid(COND, config)
    assert set(Counter(c["model"] for c in configs)) == {"svm", "forest", "knn"}
    assert {c["kernel"] for c in configs if c["model"] == "svm"} == {"rbf", "poly"}


def test_smac_same_seed_same_proposals_other_seed_other_proposals() -> None:
    np.random.seed(5)
    _, first = smac_run(3)
    np.random.seed(6)  # the global stream has no say in the proposals
    _, second = smac_run(3)
    _, other = smac_run(4)
    assert first == second
    assert first != other


def test_smac_imputes_inactive_dimensions_at_their_default() -> None:
    optimizer, _ = smac_run(0, budget=6)
    model = optimizer.facade._model  # type: ignore[attr-defined]
    cs = optimizer.configspace  # type: ignore[attr-defined]
    X = np.full((1, len(cs)), np.nan)
    imputed = model._impute_inactive(X)[0]
    for index, hp in enumerate(cs.values()):
        if cs.parents_of[hp.name]:
            assert imputed[index] == pytest.approx(hp.to_vector(hp.default_value))
    assert imputed[list(cs).index("C")] == pytest.approx(0.5)  # log-scale middle
    smac_own, _ = smac_run(0, budget=6, impute="smac")
    assert smac_own.facade._model._impute_inactive(X)[0][list(cs).index("C")] == -1  # type: ignore[attr-defined]


def test_smac_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    optimizer, _ = smac_run(0, budget=6)
    assert list(tmp_path.iterdir()) == []
    assert not optimizer.output_directory.exists()  # type: ignore[attr-defined]


def test_smac_end_to_end_through_the_runner() -> None:
    pytest.importorskip("smac")
    from experiments.configuration.spec import RunSpec
    from experiments.run.runner import run

    result = run(
        RunSpec.of(
            dataset="sklearn-iris", optimizer="smac", rules={"smac": "best_validation"}, budget=6
        )
    )
    trace, outcomes = result.trace, result.outcomes
    assert list(trace["iteration"]) == list(range(1, 7)) == list(trace["batch"])
    assert (
        trace["param_C"].between(1e-5, 1e5).all() and trace["param_gamma"].between(1e-5, 1e5).all()
    )
    assert trace[["u_C", "u_gamma"]].stack().between(0, 1).all()
    final = outcomes[outcomes["iteration"] == 6].iloc[0]
    assert final["incumbent_valid_loss"] == trace["valid_loss"].min()


# --- CMA-ES on the mixed space -------------------------------------------------------------------


def test_auto_population_size_is_hansen_s_with_the_natural_log() -> None:
    assert auto_popsize(14) == 11  # log10 would give 4 + 3 = 7
    assert auto_popsize(2) == 6  # Chapter 3's lambda for its two dimensions
    cash = load_space("sklearn_cash")
    optimizer = CMAESOptimizer(cash, 25, np.random.default_rng(0), popsize="auto")
    assert (cash.dim, optimizer.popsize, optimizer.mu) == (14, 11, 5)
    with pytest.raises(ValueError, match="'auto'"):
        CMAESOptimizer(cash, 25, np.random.default_rng(0), popsize="hansen")


@pytest.mark.parametrize("space", [load_space("sklearn_cash"), COND], ids=["sklearn_cash", "cond"])
def test_cma_auto_proposals_decode_to_valid_configurations(space: Space) -> None:
    optimizer = make_optimizer("cma", space, 40, np.random.default_rng(1), popsize="auto")
    configs = drive(optimizer, space)
    for config in configs:
        assert_valid(space, config)
    assert optimizer.generation == math.ceil(40 / auto_popsize(space.dim))  # type: ignore[attr-defined]


SMAC_TRACE = """
import json, numpy as np
from hpo.optimizers import make_optimizer
from hpo.space.search_space import space_from_config
from experiments.configuration.spaces import space_config
space = space_from_config(space_config("sklearn_cash"))
optimizer = make_optimizer("smac", space, 24, np.random.default_rng(5))
proposals = []
for _ in range(24):
    proposal = optimizer.ask()
    proposals.append(proposal.config)
    u = space.encode(proposal.config)
    optimizer.tell(proposal, float(np.sum((u - 0.3) ** 2)))
print(json.dumps(proposals))
"""


@pytest.mark.slow
def test_smac_proposals_do_not_depend_on_python_s_hash_seed() -> None:
    """SMAC 2.x orders its local search's starts by string hashes (salted per process); the
    adapter fixes the order, so two processes with the same seed propose the same points."""
    pytest.importorskip("smac")
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", SMAC_TRACE], capture_output=True, text=True, env=env,
            cwd=Path(__file__).resolve().parents[1], timeout=300, check=True,
        )  # fmt: skip
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1]
