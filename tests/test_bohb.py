"""BOHB-style model-based Hyperband (hpo/optimizers/bohb.py; Falkner et al. 2018) through
SMAC3's multi-fidelity facade: its brackets are Hyperband's for the same R and eta (SMAC's own
stage tables and the proposals' brackets and resources), it runs by name on the MNIST stand-in
(epochs, resumed) and on the SVM (training share), one seed gives one run (also across Python's
hash seeds), and bad settings are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from experiments.run.runner import run
from hpo.data.catalog import load_dataset
from hpo.optimizers import make_optimizer, setting_names
from hpo.optimizers.hyperband import brackets

pytest.importorskip("smac")

PLANS = [(50, 4), (100, 3), (9, 3), (27, 3), (4, 2)]  # the seed's MNIST and MRBI, the SVM's


def _drive(optimizer, space, limit: int = 10_000) -> list[tuple[int, float, str]]:
    """Run the plan with a deterministic loss of the configuration and resource: (bracket,
    resource, configuration) of every proposal."""
    seen = []
    for _ in range(limit):
        try:
            proposal = optimizer.ask()
        except StopIteration:
            break
        config = proposal.config if proposal.config is not None else space.decode(proposal.u)
        u = space.encode(config)
        optimizer.tell(proposal, float(np.sum((u - 0.3) ** 2) + 1.0 / proposal.resource))
        seen.append((proposal.bracket, proposal.resource, json.dumps(config, sort_keys=True)))
    return seen


def test_bohb_is_registered_with_hyperbands_settings_and_its_own() -> None:
    hyperband = setting_names("hyperband")
    assert setting_names("bohb")[: len(hyperband)] == hyperband
    assert setting_names("bohb")[len(hyperband) :] == ("impute", "min_points", "random_probability")


def test_smac_gets_bohbs_own_model_and_random_shares() -> None:
    """Falkner et al. 2018, §4 (HpBandSter's defaults): the model of a budget is built once it
    has d + 1 results, and a third of the new configurations are random; both reach SMAC."""
    space = load_space("ffnn_mnist")
    optimizer = make_optimizer("bohb", space, 100, np.random.default_rng(0), max_resource=9, eta=3)
    facade = optimizer.facade  # type: ignore[attr-defined]
    assert facade._config_selector._min_trials == space.dim + 1
    assert facade._random_design._probability == pytest.approx(1 / 3)


@pytest.mark.parametrize("R, eta", PLANS)
def test_smacs_stages_are_hyperbands_brackets(R: int, eta: int) -> None:
    space = load_space("ffnn_mnist")
    optimizer = make_optimizer(
        "bohb", space, 10_000, np.random.default_rng(0), max_resource=R, eta=eta
    )
    intensifier = optimizer.facade._intensifier  # type: ignore[attr-defined]
    intensifier.__post_init__()  # SMAC fills its tables when it starts iterating
    plan = brackets(R, eta)
    assert list(intensifier._n_configs_in_stage.values()) == [[g.n for g in b] for b in plan]
    for budgets, bracket in zip(intensifier._budgets_in_stage.values(), plan, strict=True):
        np.testing.assert_allclose(budgets, [g.r for g in bracket])


@pytest.mark.parametrize("R, eta, resource", [(16, 4, "epochs"), (9, 3, "train_fraction")])
def test_the_proposals_follow_hyperbands_plan(R: int, eta: int, resource: str) -> None:
    """Same (bracket, resource) sequence as optimizer=hyperband; every configuration of a
    bracket's first rung is new (SMAC drew the first rung before any result)."""
    space = load_space("ffnn_mnist" if resource == "epochs" else "svm_rbf")
    settings = {"max_resource": R, "eta": eta, "unit": 2.5, "resource": resource}
    bohb, hyperband = (
        _drive(make_optimizer(name, space, 10_000, np.random.default_rng(0), **settings), space)
        for name in ("bohb", "hyperband")
    )
    assert [(b, r) for b, r, _ in bohb] == [(b, r) for b, r, _ in hyperband]
    first_rungs = sum(bracket[0].n for bracket in brackets(R, eta))
    assert len({c for _, _, c in bohb}) == first_rungs


def test_a_smaller_budget_cuts_the_plan() -> None:
    space = load_space("svm_rbf")
    optimizer = make_optimizer(
        "bohb", space, 5, np.random.default_rng(0), max_resource=9, eta=3, resource="train_fraction"
    )
    assert len(_drive(optimizer, space)) == 5


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"eta": 1}, "bohb eta must be an integer >= 2, got 1"),
        ({"max_resource": 3, "eta": 4}, "bohb max_resource R=3 must be >= eta=4"),
        ({"resource": "seconds"}, "unknown bohb resource 'seconds'; valid: epochs"),
        ({"min_points": 0}, "bohb min_points must be >= 1"),
        ({"random_probability": 2}, r"bohb random_probability must be in \[0, 1\]"),
    ],
)
def test_bad_settings_are_one_line(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        make_optimizer("bohb", load_space("ffnn_mnist"), 10, np.random.default_rng(0), **settings)
    assert "\n" not in str(error.value)


def test_bohb_runs_by_name_on_the_mnist_stand_in_and_resumes_networks(plan_spec) -> None:
    pytest.importorskip("torch")
    space_settings = {"patience": 1000, "max_epochs": 4}
    spec = plan_spec("bohb", "ffnn_mnist", space_settings=space_settings)
    trace = run(spec, load_dataset("sklearn-digits")).trace
    assert trace["bracket"].tolist() == [2] * 7 + [1] * 4 + [0] * 3  # Hyperband's plan
    assert trace["resource"].tolist() == [1] * 4 + [2] * 2 + [4] + [2] * 3 + [4] + [4] * 3
    # promoted configurations resume: r' - r more epochs
    assert trace["resource_spent"].tolist() == [1] * 4 + [1] * 2 + [2] + [2] * 3 + [2] + [4] * 3


def test_bohb_on_the_svm_with_training_shares_is_deterministic(plan_spec) -> None:
    settings = {"resource": "train_fraction"}
    first, second = (
        run(plan_spec("bohb", "svm_rbf", "sklearn-breast-cancer", settings)) for _ in range(2)
    )
    assert set(first.trace["resource"]) == {0.25, 0.5, 1.0}
    columns = ["valid_loss", "resource", "bracket", "resource_spent", "param_C", "param_gamma"]
    assert first.trace[columns].equals(second.trace[columns])
    assert first.outcomes["test_error"].equals(second.outcomes["test_error"])


BOHB_TRACE = """
import json, numpy as np
from hpo.optimizers import make_optimizer
from experiments.configuration.spaces import load_space
space = load_space("ffnn_mnist")
optimizer = make_optimizer("bohb", space, 10_000, np.random.default_rng(5), max_resource=9, eta=3)
proposals = []
while True:
    try:
        proposal = optimizer.ask()
    except StopIteration:
        break
    proposals.append([proposal.config, proposal.resource])
    u = space.encode(proposal.config)
    optimizer.tell(proposal, float(np.sum((u - 0.3) ** 2) + 1.0 / proposal.resource))
print(json.dumps(proposals))
"""


@pytest.mark.slow
def test_bohb_proposals_do_not_depend_on_pythons_hash_seed() -> None:
    """SMACOptimizer's fix of SMAC's hash-ordered local search holds for the facade too."""
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", BOHB_TRACE], capture_output=True, text=True, env=env,
            cwd=Path(__file__).resolve().parents[1], timeout=300, check=True,
        )  # fmt: skip
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert len(outputs[0]) == 22  # R = 9, eta = 3: (9, 3, 1), (5, 1), (3)
    assert outputs[0] == outputs[1]


def test_the_surrogates_svm_part_runs_bohb_on_hyperbands_plan_in_every_profile() -> None:
    """Beyond the study: bohb beside rs, gp and hyperband on the RBF-SVM, with hyperband's
    settings (training share, R, eta), and drawn in the report's SVM figure."""
    import yaml

    from analysis.surrogates import svm
    from experiments.configuration.config import CONF_DIR

    experiment = yaml.safe_load((CONF_DIR / "experiment" / "surrogates.yaml").read_text())
    with_svm = {n: p for n, p in experiment["profiles"].items() if "svm" in p["parts"]}
    assert set(experiment["profiles"]) - set(with_svm) == {"medium_mnist_basic", "smoke_batched"}
    for name, profile in with_svm.items():
        part = profile["parts"]["svm"]
        assert part["methods"] == ["rs", "gp", "hyperband", "bohb"], name
        overrides = part["method_overrides"]
        assert overrides["bohb"] == overrides["hyperband"], name
        assert overrides["bohb"]["optimizer.settings.resource"] == "train_fraction"
    assert set(svm.METHODS) >= {"rs", "gp", "hyperband", "bohb"}


def _drive_rungs(optimizer, space, ahead: bool) -> list[tuple[int, float, str, str]]:
    """As :func:`_drive`, but with ``ahead`` each rung's proposals are asked (``rung_left``)
    before the first is told, as the runner's ``batch_networks`` asks them; (bracket,
    resource, configuration, SMAC's origin of it) of every proposal."""
    seen = []
    while True:
        try:
            rung = [optimizer.ask()]
        except StopIteration:
            return seen
        for _ in range(optimizer.rung_left() if ahead else 0):
            rung.append(optimizer.ask())
        for proposal in rung:
            origin = optimizer._pending[proposal.batch].config.origin  # type: ignore[attr-defined]
            u = space.encode(proposal.config)
            optimizer.tell(proposal, float(np.sum((u - 0.3) ** 2) + 1.0 / proposal.resource))
            seen.append((proposal.bracket, proposal.resource, json.dumps(proposal.config), origin))


def test_asking_a_rung_ahead_gives_the_proposals_of_asking_one_at_a_time() -> None:
    """SMAC fixes a stage's configurations before any of its trials is told (the draw of a
    bracket's first stage, the promotion of complete stages: bohb.py's docstring), so asking
    a whole rung before telling it gives the same proposals, model-based ones included (R =
    9, eta = 3: rungs of 9, 3, 1; 5, 1; 3 configurations; the model fitted from 3 results on a
    budget)."""
    space = load_space("ffnn_mrbi")
    runs = {}
    for ahead in (False, True):
        optimizer = make_optimizer(
            "bohb", space, 10_000, np.random.default_rng(3), max_resource=9, eta=3,
            min_points=3,
        )  # fmt: skip
        runs[ahead] = _drive_rungs(optimizer, space, ahead)
    assert runs[True] == runs[False]
    assert len(runs[False]) == sum(g.n for b in brackets(9, 3) for g in b)
    origins = {str(origin).split(" ")[0] for *_, origin in runs[False]}
    assert {"Initial", "Random", "Acquisition"} <= origins, origins
