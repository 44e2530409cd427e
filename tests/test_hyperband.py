"""Hyperband (hpo/optimizers/hyperband.py, seed 002 §1.3.3, §2.1.2.1): its brackets against SMAC
2's Hyperband utilities, the seed's 16/6/3 and 81/34/15/8/5, successive halving keeps the best,
bad settings in one line; and partial evaluations in the pipeline (resource asked, spent and
cumulative in the trace; resumed networks; training shares for learners that cannot resume)."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from experiments.run.runner import run
from hpo.data.catalog import load_dataset
from hpo.optimizers import make_optimizer
from hpo.optimizers.hyperband import Fidelity, Hyperband, brackets

SEED_SETTINGS = {"mnist": (50, 4, [16, 6, 3]), "mrbi": (100, 3, [81, 34, 15, 8, 5])}


def _drive(optimizer: Hyperband, losses: np.random.Generator) -> list[tuple[int, float, bytes]]:
    """Run the plan with random losses: (bracket, resource, point) of every proposal."""
    seen = []
    while True:
        try:
            proposal = optimizer.ask()
        except StopIteration:
            return seen
        seen.append((proposal.bracket, proposal.resource, proposal.u.tobytes()))
        optimizer.tell(proposal, float(losses.uniform()))


@pytest.mark.parametrize("dataset", sorted(SEED_SETTINGS))
def test_brackets_match_smacs_hyperband_utilities(dataset: str) -> None:
    hyperband_utils = pytest.importorskip("smac.intensifier.hyperband_utils")
    R, eta, first_rungs = SEED_SETTINGS[dataset]
    plan = brackets(R, eta)
    smac = hyperband_utils.determine_HB(
        min_budget=R / eta ** (len(plan) - 1), max_budget=R, eta=eta
    )
    assert [bracket[0].n for bracket in plan] == first_rungs  # §2.1.2.1 and B2.5
    assert len(plan) == smac["number_of_brackets"]
    for stage, bracket in enumerate(plan):
        assert [rung.n for rung in bracket] == smac["n_configs_in_stage"][stage]
        np.testing.assert_allclose([r.r for r in bracket], smac["budgets_in_stage"][stage])


@pytest.mark.parametrize("R, eta", [(27, 3), (81, 3), (16, 2), (10, 2), (9, 3), (64, 4)])
def test_other_plans_match_smac_too(R: int, eta: int) -> None:
    hyperband_utils = pytest.importorskip("smac.intensifier.hyperband_utils")
    plan = brackets(R, eta)
    smac = hyperband_utils.determine_HB(
        min_budget=R / eta ** (len(plan) - 1), max_budget=R, eta=eta
    )
    assert [[rung.n for rung in b] for b in plan] == list(smac["n_configs_in_stage"].values())


def test_the_optimizer_proposes_the_seeds_mnist_plan_in_epochs() -> None:
    space = load_space("ffnn_mnist")
    optimizer = make_optimizer("hyperband", space, 10_000, np.random.default_rng(0))
    seen = _drive(optimizer, np.random.default_rng(1))
    expected = [  # (bracket, epochs) of every proposal: 20 epochs per unit, 3.125 units -> 63
        *[(2, 63.0)] * 16, *[(2, 250.0)] * 4, (2, 1000.0),
        *[(1, 250.0)] * 6, (1, 1000.0),
        *[(0, 1000.0)] * 3,
    ]  # fmt: skip
    assert [(b, r) for b, r, _ in seen] == expected
    assert len({u for _, _, u in seen}) == 16 + 6 + 3  # 25 configurations (§2.1.2.1)


def test_successive_halving_keeps_the_best_configurations() -> None:
    space = load_space("ffnn_mnist")
    optimizer = Hyperband(space, 10_000, np.random.default_rng(0), max_resource=9, eta=3)
    first = [optimizer.ask() for _ in range(9)]  # bracket s = 2: 9 configurations
    for k, proposal in enumerate(first):
        optimizer.tell(proposal, loss=[5, 1, 7, 3, 9, 2, 8, 4, 6][k])
    second = [optimizer.ask() for _ in range(3)]
    assert [p.u.tobytes() for p in second] == [first[k].u.tobytes() for k in (1, 5, 3)]
    assert [p.resource for p in second] == [60.0] * 3  # 3 units of 20 epochs


def test_asking_past_a_rung_before_telling_it_is_an_error_that_says_what_to_do() -> None:
    """Successive halving ranks a whole rung (Li et al. 2017, Algorithm 1): the next rung cannot
    be proposed while a proposal of this one has no loss."""
    optimizer = Hyperband(
        load_space("ffnn_mnist"), 100, np.random.default_rng(0), max_resource=9, eta=3
    )
    first = [optimizer.ask() for _ in range(9)]
    for proposal in first[:-1]:
        optimizer.tell(proposal, loss=0.5)
    with pytest.raises(RuntimeError, match="tell every proposal of a rung before asking for more"):
        optimizer.ask()


def test_the_training_share_resource_is_r_over_R() -> None:
    space = load_space("svm_rbf")
    optimizer = Hyperband(
        space, 100, np.random.default_rng(0), max_resource=9, eta=3, resource="train_fraction"
    )
    seen = _drive(optimizer, np.random.default_rng(0))
    assert sorted({r for _, r, _ in seen}) == pytest.approx([1 / 9, 1 / 3, 1.0])


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"eta": 1}, "eta must be an integer >= 2, got 1"),
        ({"eta": 2.5}, "eta must be an integer >= 2, got 2.5"),
        ({"max_resource": 3, "eta": 4}, "max_resource R=3 must be >= eta=4"),
        ({"resource": "seconds"}, "unknown hyperband resource 'seconds'; valid: epochs"),
        ({"rounding": "up"}, "unknown hyperband rounding 'up'; valid: round, floor, ceil"),
    ],
)
def test_bad_settings_are_one_line(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        make_optimizer(
            "hyperband", load_space("ffnn_mnist"), 10, np.random.default_rng(0), **settings
        )
    assert "\n" not in str(error.value)


def test_a_learner_that_cannot_resume_is_refused_epochs_in_one_line(plan_spec) -> None:
    spec = plan_spec("hyperband", "svm_rbf", "sklearn-iris", budget=5)
    with pytest.raises(ValueError, match="trains by epochs but learner 'svm_rbf'.*train_fraction"):
        run(spec)


def test_the_trace_records_resource_asked_spent_and_cumulative_and_networks_resume(
    plan_spec,
) -> None:
    pytest.importorskip("torch")
    space_settings = {"patience": 1000, "max_epochs": 4}
    spec = plan_spec("hyperband", "ffnn_mnist", space_settings=space_settings)
    trace = run(spec, load_dataset("sklearn-digits")).trace
    plan = brackets(4, 2)  # (4 @ 1, 2 @ 2, 1 @ 4), (3 @ 2, 1 @ 4), (3 @ 4)
    assert len(trace) == sum(rung.n for bracket in plan for rung in bracket) == 14
    assert trace["bracket"].tolist() == [2] * 7 + [1] * 4 + [0] * 3
    assert trace["resource"].tolist() == [1] * 4 + [2] * 2 + [4] + [2] * 3 + [4] + [4] * 3
    # a configuration promoted from r to r' trains r' - r more epochs: patience never ends one
    assert trace["resource_spent"].tolist() == [1] * 4 + [1] * 2 + [2] + [2] * 3 + [2] + [4] * 3
    np.testing.assert_array_equal(trace["resource_cumulative"], np.cumsum(trace["resource_spent"]))


def test_training_shares_serve_learners_that_cannot_resume(plan_spec) -> None:
    settings = {"resource": "train_fraction"}
    spec = plan_spec("hyperband", "svm_rbf", "sklearn-breast-cancer", settings)
    trace = run(spec).trace
    assert set(trace["resource"]) == {0.25, 0.5, 1.0}
    shares = trace.groupby("resource")["resource_spent"].agg(["min", "max"])
    np.testing.assert_allclose(shares["min"], [0.25, 0.5, 1.0], atol=0.01)
    np.testing.assert_allclose(shares["max"], [0.25, 0.5, 1.0], atol=0.01)


def test_a_rung_never_trains_less_than_one_epoch() -> None:
    """R = 27, eta = 3, 0.1 epoch per unit: the first rung's r = 1 unit is 0.1 epoch, which every
    rounding takes up to one whole epoch (a network trains at least one); the last rung's 2.7
    epochs round to 3, 2 and 3."""
    for rounding, last in (("round", 3.0), ("floor", 2.0), ("ceil", 3.0)):
        fidelity = Fidelity("hyperband", 27, 3, 0.1, "epochs", rounding, 1)
        assert (fidelity.amount(1.0), fidelity.amount(27.0)) == (1.0, last)


def test_iterations_repeat_the_whole_plan() -> None:
    """``iterations`` runs Hyperband's outer loop that many times (Li et al. 2017, Alg. 1
    repeated): the schedule is the one-iteration plan, whole, that many times."""
    once = Fidelity("hyperband", 27, 3, 1.0, "epochs", "round", 1).schedule()
    thrice = Fidelity("hyperband", 27, 3, 1.0, "epochs", "round", 3).schedule()
    assert thrice == once * 3
    assert once[0] == (3, 1.0) and len(once) == 27 + 9 + 3 + 1 + 12 + 4 + 1 + 6 + 2 + 4


def test_a_runs_progress_counts_to_hyperbands_own_plan_not_the_budget_cap() -> None:
    """The progress line's total and its time left come from the plan (31 evaluations for
    R = 16, η = 4), not from a budget that only caps it (a 100,000-evaluation cap once read
    'about 26 h 52 min left' for a 31-evaluation run)."""
    from experiments.configuration.compose import compose_run
    from experiments.run.single import planned_evaluations

    base = ["optimizer=hyperband", "dataset=sklearn-digits", "space=ffnn_mnist"]
    plan = ["optimizer.settings.max_resource=16", "optimizer.settings.eta=4"]
    assert planned_evaluations(compose_run([*base, "budget=100000", *plan])) == 31
    assert planned_evaluations(compose_run([*base, "budget=10", *plan])) == 10  # the cap
    assert (
        Hyperband.planned_evaluations({"max_resource": 16, "eta": 4, "iterations": 2}, 5, 2) == 62
    )
    assert Hyperband.planned_evaluations({}) == sum(
        rung.n for bracket in brackets(50.0, 4) for rung in bracket
    )  # the class's defaults
