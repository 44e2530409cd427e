"""CMA-ES optimizer: generation bookkeeping, the unit cube, determinism, convergence
([decide] set-up in docs/deviations.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from hpo.optimizers import Proposal, make_optimizer
from hpo.optimizers.cmaes import CMAESOptimizer
from hpo.space.search_space import space_from_config

OPTIMUM = np.array([0.3, 0.7])
Loss = Callable[[np.ndarray], float]


def quadratic(u: np.ndarray) -> float:
    return float(np.sum((u - OPTIMUM) ** 2))


def run(
    seed: int, budget: int = 100, loss: Loss = quadratic, **settings: int | str
) -> tuple[CMAESOptimizer, list[Proposal]]:
    opt = CMAESOptimizer(load_space("svm_rbf"), budget, np.random.default_rng(seed), **settings)
    proposals = []
    for _ in range(budget):
        proposal = opt.ask()
        proposals.append(proposal)
        opt.tell(proposal, loss(proposal.u))
    return opt, proposals


def test_budget_100_is_16_generations_of_6_and_one_of_4() -> None:
    opt, proposals = run(0)
    sizes = Counter(p.batch for p in proposals)
    assert sizes == {**{g: 6 for g in range(1, 17)}, 17: 4}
    assert [p.batch for p in proposals] == sorted(p.batch for p in proposals)
    assert opt.strategy.countiter == 16  # the truncated generation never updates the strategy
    with pytest.raises(StopIteration):
        opt.ask()


def test_population_settings() -> None:
    _, proposals = run(0, budget=20, popsize=8, mu=4)
    assert Counter(p.batch for p in proposals) == {1: 8, 2: 8, 3: 4}
    with pytest.raises(ValueError, match="mu <= popsize // 2"):
        CMAESOptimizer(load_space("svm_rbf"), 100, np.random.default_rng(0), popsize=6, mu=4)


def test_proposals_stay_in_the_cube_when_the_optimum_is_outside() -> None:
    def outside(u: np.ndarray) -> float:
        return float(np.sum((u - [1.5, -0.5]) ** 2))

    opt, proposals = run(0, loss=outside)
    points = np.array([p.u for p in proposals])
    assert points.min() >= 0.0 and points.max() <= 1.0
    assert np.sum(np.all(points == [1.0, 0.0], axis=1)) > 10  # clipped into the corner
    # told the clipped points, the mean is their weighted average: inside the cube (raw: outside)
    assert np.all((opt.strategy.mean >= -1e-12) & (opt.strategy.mean <= 1 + 1e-12))


def test_same_rng_same_proposals_bit_for_bit_and_global_state_untouched() -> None:
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    _, first = run(7)
    after = np.random.get_state()[1]
    np.testing.assert_array_equal(before, after)
    np.random.seed(999)  # the global stream has no say in the proposals
    _, second = run(7)
    assert [(p.u.tobytes(), p.batch) for p in first] == [(p.u.tobytes(), p.batch) for p in second]


def test_different_rng_different_proposals() -> None:
    _, a = run(1)
    _, b = run(2)
    assert not np.array_equal(a[0].u, b[0].u)
    assert not np.array_equal(np.array([p.u for p in a]), np.array([p.u for p in b]))


def test_tell_order_within_a_generation_does_not_matter() -> None:
    def reversed_tells(seed: int) -> list[np.ndarray]:
        opt = CMAESOptimizer(load_space("svm_rbf"), 30, np.random.default_rng(seed))
        points = []
        for _generation in range(5):
            batch = [opt.ask() for _ in range(6)]
            for proposal in reversed(batch):
                opt.tell(proposal, quadratic(proposal.u))
            points += [p.u for p in batch]
        return points

    _, in_order = run(3, budget=30)
    np.testing.assert_array_equal(reversed_tells(3), [p.u for p in in_order])


def test_converges_on_a_quadratic_on_most_seeds() -> None:
    distances = [np.sqrt(min(run(seed)[0].y)) for seed in range(20)]
    assert sum(d < 1e-2 for d in distances) >= 15, distances


def test_ask_before_all_tells_of_the_generation_is_an_error() -> None:
    opt = CMAESOptimizer(load_space("svm_rbf"), 100, np.random.default_rng(0))
    batch = [opt.ask() for _ in range(6)]
    for proposal in batch[:5]:
        opt.tell(proposal, quadratic(proposal.u))
    with pytest.raises(RuntimeError, match="1 of 6 losses outstanding"):
        opt.ask()
    opt.tell(batch[5], quadratic(batch[5].u))
    assert opt.ask().batch == 2


def test_tell_refuses_foreign_repeated_or_nan() -> None:
    opt = CMAESOptimizer(load_space("svm_rbf"), 100, np.random.default_rng(0))
    proposal = opt.ask()
    with pytest.raises(ValueError, match="not an untold individual"):
        opt.tell(Proposal(u=np.array([0.123, 0.456]), batch=1), 0.5)
    with pytest.raises(ValueError, match="NaN"):
        opt.tell(proposal, float("nan"))
    opt.tell(proposal, 0.5)
    with pytest.raises(ValueError, match="not an untold individual"):
        opt.tell(proposal, 0.5)


def test_registry_builds_it_and_nothing_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    opt = make_optimizer(
        "cma", load_space("svm_rbf"), 12, np.random.default_rng(0), popsize=6, mu=3
    )
    assert isinstance(opt, CMAESOptimizer)
    for _ in range(12):
        proposal = opt.ask()
        opt.tell(proposal, quadratic(proposal.u))
    assert list(tmp_path.iterdir()) == []


def test_initial_step_size_is_0_3_in_the_unit_cube_as_configured_for_every_cma_method() -> None:
    from experiments.configuration.compose import compose_run

    assert (
        CMAESOptimizer(load_space("svm_rbf"), 100, np.random.default_rng(0)).strategy.sigma0 == 0.3
    )
    for method in ("cma", "cma_r", "cma_pv", "cma_bw_r"):  # sigma0 = 0.3: docs/deviations.md
        spec = compose_run([f"optimizer={method}", "dataset=iris"])
        space = space_from_config(spec.task.space)
        rng = np.random.default_rng(0)
        built = make_optimizer(spec.method.optimizer, space, 100, rng, **spec.method.settings)
        assert built.strategy.sigma0 == 0.3


def test_pycma_seed_is_drawn_from_the_run_rng_never_zero_and_active_cma_is_off() -> None:
    seeds = {
        CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(s)).seed for s in range(5)
    }
    assert len(seeds) == 5 and min(seeds) >= 1  # 0 would be pycma's "seed from the clock"
    strategy = CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(0)).strategy
    assert strategy.opts["CMA_active"] is False  # DEAP's strategy has no negative weights


def test_non_positive_sigma0_is_refused_with_its_value() -> None:
    with pytest.raises(ValueError, match="sigma0 must be > 0, got 0"):
        CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(0), sigma0=0)


def one_class_plateau(u: np.ndarray) -> float:
    """Chapter 3's landscape in caricature: every configuration with C tiny (u0 < 0.35) or γ huge
    (u1 > 0.65) predicts one class and scores the same loss; elsewhere a bowl."""
    if u[0] < 0.35 or u[1] > 0.65:
        return 0.6
    return float(0.1 + np.sum((u - np.array([0.7, 0.3])) ** 2))


def test_a_random_start_can_stay_on_the_one_class_plateau_and_the_centre_start_does_not() -> None:
    """The start decides whether CMA-ES ever sees two different losses."""
    stuck = Counter()
    for seed in range(40):
        for start in ("random", "centre"):
            _, proposals = run(seed, budget=60, loss=one_class_plateau, start=start)
            losses = {one_class_plateau(p.u) for p in proposals}
            stuck[start] += len(losses) == 1
    assert stuck["random"] >= 1 and stuck["centre"] == 0


def test_the_start_is_the_centre_for_every_cma_method_and_random_on_request() -> None:
    from experiments.configuration.compose import compose_run

    for overrides in (
        ["optimizer=cma"],
        ["optimizer=cma_pv_r"],
        ["optimizer=cma_gv", "protocol=cv5"],
        [
            "optimizer=cma",
            "space=sklearn_cash",
            "protocol=chapter5",
            "+optimizer.settings.popsize=auto",
        ],
    ):
        spec = compose_run([*overrides, "dataset=iris"])
        assert spec.method.settings["start"] == "centre", overrides
        space = space_from_config(spec.task.space)
        built = make_optimizer(
            spec.method.optimizer, space, 100, np.random.default_rng(0), **spec.method.settings
        )
        assert np.array_equal(built.centroid, np.full(space.dim, 0.5))
    centre = CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(4))
    drawn = CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(4), start="random")
    assert np.array_equal(drawn.centroid, np.random.default_rng(4).uniform(size=2))
    assert centre.seed == drawn.seed  # the same pycma stream: an ablation pairs the two starts


def test_an_unknown_start_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown start 'corner'; valid: centre, random"):
        CMAESOptimizer(load_space("svm_rbf"), 12, np.random.default_rng(0), start="corner")
