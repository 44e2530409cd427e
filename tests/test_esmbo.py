"""ESMBO (Lacoste et al., UAI 2014, Algorithm 2): round robin over bootstrap problems, histories
updated by every evaluation, and the run's anytime agnostic-Bayes output."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.spec import RunSpec
from experiments.run.runner import run
from hpo.ensembles.agnostic_bayes import bootstrap_risks, example_losses
from hpo.optimizers import make_optimizer
from hpo.optimizers.esmbo import ESMBOOptimizer
from hpo.records import FoldPredictions, Trace
from hpo.rules.agnostic_bayes import AgnosticBayesRule
from hpo.space.search_space import Real, Space

SPACE = Space("unit", (Real("a", 0.0, 1.0), Real("b", 0.0, 1.0)))
FAST_GP = {"n_samples": 2, "burnin": 5, "grid_size": 200, "n_refine": 2}
M_EXAMPLES = 40


def _fake_folds(u: np.ndarray, labels: np.ndarray) -> tuple[FoldPredictions, ...]:
    """Predictions of a fake model at ``u``: it errs on the first ``⌈40 · u_0⌉`` examples
    of a fixed permutation, in two folds as k-fold gives them."""
    order = np.random.default_rng(0).permutation(labels.size)
    wrong = np.zeros(labels.size, dtype=bool)
    wrong[order[: int(np.ceil(labels.size * u[0]))]] = True
    predicted = np.where(wrong, 1 - labels, labels)
    rows = np.arange(labels.size)
    return tuple(
        FoldPredictions(rows[s], labels[s], predicted[s], np.empty(0, dtype=int))
        for s in (slice(0, None, 2), slice(1, None, 2))
    )


def _drive(budget: int, n_bootstraps: int | None = None) -> tuple[ESMBOOptimizer, list[int]]:
    """Run ESMBO's ask/observe/tell loop on fake predictions; return the proposing problems."""
    labels = np.random.default_rng(1).integers(0, 2, M_EXAMPLES)
    optimizer = ESMBOOptimizer(
        SPACE, budget, np.random.default_rng(2), n_bootstraps=n_bootstraps, gp=FAST_GP
    )
    proposers, sizes = [], []
    for _ in range(budget):
        proposal = optimizer.ask()
        proposers.append(optimizer.current)
        sizes.append(len(optimizer.problems[optimizer.current].y))
        folds = _fake_folds(proposal.u, labels)
        optimizer.observe_predictions(proposal, folds)
        optimizer.tell(
            proposal, float(np.mean([np.mean(f.valid != f.valid_labels) for f in folds]))
        )
    assert sizes == list(range(budget))  # problem v proposes from a history of every model so far
    return optimizer, proposers


@pytest.mark.parametrize(("budget", "n_bootstraps"), [(12, None), (10, 3)])
def test_round_robin_each_problem_proposes_floor_m_over_n_times(
    budget: int, n_bootstraps: int | None
) -> None:
    optimizer, proposers = _drive(budget, n_bootstraps)
    n = optimizer.n_bootstraps
    assert n == (budget // 2 if n_bootstraps is None else n_bootstraps)
    assert proposers == [k % n for k in range(budget)]
    counts = np.bincount(proposers, minlength=n)
    assert counts.min() == budget // n and counts.max() <= budget // n + 1


def test_every_history_holds_every_model_with_its_bootstrap_risk() -> None:
    optimizer, _ = _drive(12)
    labels = np.random.default_rng(1).integers(0, 2, M_EXAMPLES)
    losses = np.stack(
        [example_losses(_fake_folds(x, labels))[1] for x in optimizer.X], axis=1
    )  # (m, k)
    expected = bootstrap_risks(optimizer.counts, losses)  # (N, k)
    np.testing.assert_allclose(optimizer.histories(), expected)
    for problem in optimizer.problems:  # shared inputs, distinct targets
        np.testing.assert_array_equal(np.array(problem.X), np.array(optimizer.X))
    assert not np.allclose(expected[0], expected[1])


def test_bad_settings_are_refused_with_the_value_and_range() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"essr must be in \(0, 1\], got 1.2"):
        make_optimizer("esmbo", SPACE, 10, rng, essr=1.2)
    with pytest.raises(ValueError, match="N must be an integer >= 1, got 0"):
        make_optimizer("esmbo", SPACE, 10, rng, n_bootstraps=0)
    with pytest.raises(ValueError, match=r"floor\(budget / 2\) needs budget >= 2, got 1"):
        make_optimizer("esmbo", SPACE, 1, rng)
    with pytest.raises(ValueError, match="unknown setting.*burn_in.*valid: kernel"):
        make_optimizer("esmbo", SPACE, 10, rng, gp={"burn_in": 5})


def test_end_to_end_esmbo_and_argmin_from_one_run() -> None:
    spec = RunSpec.of(
        dataset="sklearn-breast-cancer",
        optimizer="esmbo",
        rules={"ESMBO": "agnostic_bayes", "SMBO": "best_validation"},
        budget=12,
        predictions=True,
        optimizer_settings={"gp": {"burnin": 20, "grid_size": 2000}},
    )
    result = run(spec)
    outcomes = result.outcomes
    assert len(result.trace) == 12
    esmbo = outcomes[outcomes.method == "ESMBO"].set_index("iteration")
    assert list(esmbo.index) == list(range(1, 13))
    # the ensemble is N = 6 bootstrap argmins (weights = bootstraps won, summing to N)
    weights = [
        sum(float(part.split(":")[1]) if ":" in part else 1.0 for part in text.split(","))
        for text in esmbo.members
    ]
    np.testing.assert_allclose(weights, 6.0, rtol=1e-5)  # members text: 6 digits
    assert esmbo.loc[1, "n_members"] == 1 and esmbo.loc[12, "n_members"] >= 1
    assert outcomes[outcomes.method == "SMBO"].test_error.between(0, 1).all()


def test_rule_on_an_esmbo_run_uses_the_optimizers_bootstraps() -> None:
    optimizer, _ = _drive(8)
    rule = AgnosticBayesRule()
    rule.check(optimizer)
    labels = np.random.default_rng(1).integers(0, 2, M_EXAMPLES)
    trace = Trace(
        valid_loss=np.array(optimizer.y),
        selection_loss=np.full(8, np.nan),
        batch=np.arange(1, 9),
        configs=[{"i": i} for i in range(8)],
        predictions=[_fake_folds(x, labels) for x in optimizer.X],
    )
    rule.choices(trace)
    np.testing.assert_array_equal(rule.counts, optimizer.counts)


def test_ers_is_the_rule_over_a_random_search_run_with_n_half_the_budget() -> None:
    spec = compose_run(["optimizer=ers", "dataset=sklearn-breast-cancer", "budget=10"])
    assert spec.method.optimizer == "rs" and dict(spec.method.rules) == {
        "ers": "agnostic_bayes",
        "ers-argmin": "best_validation",
    }
    outcomes = run(spec).outcomes
    ers = outcomes[outcomes.method == "ers"]
    weights = [
        sum(float(part.split(":")[1]) if ":" in part else 1.0 for part in text.split(","))
        for text in ers.members
    ]
    np.testing.assert_allclose(weights, 5.0, rtol=1e-5)  # N = floor(10 / 2)


def test_esmbo_config_composes_with_its_settings() -> None:
    spec = compose_run(["optimizer=esmbo", "budget=8", "+optimizer.settings.essr=0.5"])
    assert spec.method.optimizer == "esmbo" and dict(spec.method.settings) == {"essr": 0.5}
    assert dict(spec.method.rules) == {  # an overridden setting names both methods' labels
        "esmbo[essr=0.5]": "agnostic_bayes",
        "esmbo-argmin[essr=0.5]": "best_validation",
    }
