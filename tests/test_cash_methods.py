"""Seed 004's methods (Thornton 2014 §2-4): Ex-Def, grid, limited grid, random search, SMAC with
instances, SMAC-10-Batch, TPE, I/F-Race, and the timed run loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from experiments.autoweka import make_method
from experiments.configuration.config import CONF_DIR
from experiments.configuration.spaces import load_cash_library
from hpo.cash.space import CashSpace, build_cash_space
from hpo.optimizers import Proposal
from hpo.optimizers.cash_baselines import (
    ExDef,
    GridSearch,
    RandomSearch,
    draws_until,
    learner_grid,
    limited_grid,
)
from hpo.optimizers.instances import CashOptimizer
from hpo.optimizers.irace import IteratedFRace, friedman_step


@pytest.fixture(scope="module")
def cash():
    return build_cash_space(load_cash_library(), "classification", nonnegative_inputs=True)


@pytest.fixture(scope="module")
def small():
    """A small CASH space (three base learners, a meta-method, an ensemble of up to two, no
    feature selection), for the model-based methods, whose time grows with the dimension."""
    return build_cash_space(
        load_cash_library(),
        "classification",
        include=["knn", "svm", "j48", "bagging", "vote"],
        max_ensemble=2,
        feature_selection=False,
    )


GOOD = {"knn": 0.1, "svm": 0.2}  # a synthetic CASH landscape: learner -> loss, else 0.6


def synthetic_loss(config, instance):
    base = GOOD.get(str(config["learner"]), 0.6)
    return base + 0.01 * instance


def family(name: str, cash: CashSpace, n_instances: int, rng: np.random.Generator, **settings):
    """A seed-004 family's class built and started on ``cash``."""
    optimizer = name(cash.space, 1000, rng, **settings)
    optimizer.start(cash, n_instances)
    return optimizer


def drive(optimizer: CashOptimizer, steps: int) -> list[tuple[Proposal, float]]:
    told = []
    for _ in range(steps):
        try:
            request = optimizer.ask()
        except StopIteration:
            break
        loss = synthetic_loss(request.config, request.instance)
        optimizer.tell(request, loss)
        told.append((request, loss))
    return told


# --- I/F-Race: the Friedman race by hand ---------------------------------------------------------


def test_friedman_step_matches_a_hand_computed_race():
    # ranks per block: R = (6, 10, 14), sum of squared ranks A = 70, C = 5 * 3 * 16 / 4 = 60
    losses = np.array([[1, 2, 3], [1, 2, 3], [2, 1, 3], [1, 2, 3], [1, 3, 2]], dtype=float)
    T = 2 * ((6 - 10) ** 2 + (14 - 10) ** 2) / (70 - 60)  # 6.4
    assert stats.friedmanchisquare(*losses.T).statistic == pytest.approx(T)  # a library agrees
    assert stats.chi2.sf(T, 2) == pytest.approx(math.exp(-3.2))  # 0.041 < 0.05: significant
    critical = stats.t.ppf(0.975, 8) * math.sqrt(2 * (5 * 70 - (36 + 100 + 196)) / 8)  # 4.89
    assert 4 < critical < 8  # R - R_best = (0, 4, 8): the third is eliminated, the second not
    assert friedman_step(losses, alpha=0.05).tolist() == [True, True, False]
    assert friedman_step(losses, alpha=0.01).tolist() == [True, True, True]  # p = 0.041 > 0.01


def test_friedman_step_eliminates_as_scikit_posthocs_conover_test_against_the_best():
    import scikit_posthocs

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        b, k = int(rng.integers(5, 11)), int(rng.integers(3, 7))
        losses = rng.normal(size=(b, k)) + np.linspace(0, rng.uniform(0, 1.5), k)
        if stats.friedmanchisquare(*losses.T).pvalue >= 0.05:
            continue
        p = scikit_posthocs.posthoc_conover_friedman(losses, p_adjust=None).to_numpy()
        best = int(np.argmin(np.apply_along_axis(stats.rankdata, 1, losses).sum(axis=0)))
        expected = [i == best or p[best, i] >= 0.05 for i in range(k)]  # no correction
        assert friedman_step(losses, 0.05).tolist() == expected
        checked += 1
    assert checked > 20


def test_friedman_step_keeps_everyone_on_ties_and_uses_wilcoxon_for_two():
    assert friedman_step(np.ones((6, 4))).all()
    pair = np.column_stack([np.arange(8.0), np.arange(8.0) + 1])  # the second always worse
    assert stats.wilcoxon(pair[:, 0], pair[:, 1]).pvalue < 0.05
    assert friedman_step(pair).tolist() == [True, False]
    # the test is on the pair's differences (paired), not on one candidate's losses: here the
    # differences cancel (p = 1 paired) while every loss of the first is above 0
    even = np.column_stack([np.arange(1.0, 9.0), np.arange(1.0, 9.0) + [1, -1] * 4])
    assert stats.wilcoxon(even[:, 0], even[:, 1]).pvalue >= 0.05 > stats.wilcoxon(even[:, 0]).pvalue
    assert friedman_step(even).tolist() == [True, True]


def test_iterated_f_race_finds_the_best_learner_within_its_evaluations(cash):
    race = family(IteratedFRace, cash, 10, np.random.default_rng(0), max_evaluations=600)
    told = drive(race, 10_000)
    assert len(told) <= 600 and race.used == len(told)
    assert race.incumbent()["learner"] in GOOD
    per_config: dict[str, int] = {}
    for request, _ in told:
        key = repr(sorted(request.config.items()))
        per_config[key] = per_config.get(key, 0) + 1
    counts = np.array(list(per_config.values()))
    assert np.median(counts) >= 5  # no test before 5 blocks (only the budget cuts a race short)
    assert counts.max() == 10  # survivors raced to the last fold


def test_iterated_f_race_takes_irace_s_defaults_from_the_dimension(cash, small):
    """irace's defaults (seed 004 §2.2.3, B1.6): n_iterations = min_survival = floor(2 + log2 d);
    iteration j races N_j = floor(B_j / (first_test + min(5, j))) candidates on B_j = (B - used)
    / (n_iterations - j + 1) evaluations."""
    assert (small.space.dim, cash.space.dim) == (44, 264)  # floor(2 + log2 d) = 7, 10
    for space, expected in ((small, 7), (cash, 10)):
        race = family(IteratedFRace, space, 10, np.random.default_rng(0), max_evaluations=700)
        assert (race.n_iterations, race.min_survival) == (expected, expected)
    race = family(IteratedFRace, small, 10, np.random.default_rng(0), max_evaluations=700)
    race.ask()
    assert len(race._race) == 16  # B_1 = 700 / 7 = 100; N_1 = floor(100 / (5 + 1))


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"alpha": 1.5}, "alpha=1.5 out of range; valid: in \\(0, 1\\)"),
        ({"first_test": 1}, "first_test=1 out of range"),
        ({"max_evaluations": 0}, "max_evaluations=0 out of range"),
    ],
)
def test_iterated_f_race_refuses_settings_out_of_range(cash, settings, message):
    with pytest.raises(ValueError, match=message):
        family(IteratedFRace, cash, 10, np.random.default_rng(0), **settings)


# --- baselines ------------------------------------------------------------------------------


def test_grid_has_three_values_per_numeric_and_every_categorical_value(cash):
    knn = learner_grid(cash, "knn")
    assert sorted({c["base.knn.K"] for c in knn}) == pytest.approx([1, 8, 64])  # geometric midpoint
    assert len(knn) == 3 * 2
    forest = learner_grid(cash, "random_forest")
    assert len(forest) == 3 * (1 + 3) * (1 + 3)  # I x (K off | 3 K) x (depth off | 3 depths)
    for config in forest:  # only active parameters
        assert ("base.random_forest.K" in config) == (config["base.random_forest.K_HIDDEN"] == "1")
    grid = family(GridSearch, cash, 10, np.random.default_rng(0))
    learners = {c["learner"] for c in [r.config for r, _ in drive(grid, 10 * grid.size)]}
    assert learners == set(cash.base)
    with pytest.raises(StopIteration):  # finished
        grid.ask()


def test_ex_def_scores_every_learner_at_its_defaults_then_stops(cash):
    exdef = family(ExDef, cash, 3, np.random.default_rng(0))
    told = drive(exdef, 10_000)
    assert len(told) == 3 * len(cash.learners)
    assert exdef.incumbent() == cash.default_config("knn")


def test_random_search_draws_learners_uniformly(cash):
    search = family(RandomSearch, cash, 1, np.random.default_rng(0))
    learners = [r.config["learner"] for r, _ in drive(search, 2300)]
    counts = np.array([learners.count(name) for name in cash.learners])
    assert stats.chisquare(counts).pvalue > 0.001


def test_limited_grid_draws_points_until_the_budget_is_spent():
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    best = limited_grid([1.0, 1.0, 1.0], [0.3, 0.2, 0.1], budget=2.5, rng=rng_a, n_bootstrap=50)
    losses = np.array([0.3, 0.2, 0.1])
    for b in range(50):  # 3 draws each: the third crosses the budget of 2.5 seconds
        draws = rng_b.integers(0, 3, size=math.ceil(2 * 2.5 / 1.0))
        assert losses[best[b]] == losses[draws[:3]].min()
    # one slow point and many fast ones: a chunk sized by the mean time often does not cross
    seconds = np.array([1000.0] + [0.1] * 999)
    for _ in range(200):
        spent = np.cumsum(seconds[draws_until(seconds, 50.0, rng_a)])
        assert (len(spent) == 1 or spent[-2] <= 50.0) and spent[-1] > 50.0


# --- SMAC, SMAC-10-Batch, TPE -----------------------------------------------------------------


def test_smac_races_challengers_fold_by_fold(small):
    smac = make_method("smac", small, 10, np.random.default_rng(0), initial_configs=4)
    told = drive(smac, 50)
    folds: dict[str, set[int]] = {}
    for request, _ in told:
        folds.setdefault(repr(sorted(request.config.items())), set()).add(request.instance)
    sizes = sorted(len(f) for f in folds.values())
    assert sizes[0] < 10 and sizes[-1] > 2  # challengers rejected early, the incumbent raced on
    assert smac.incumbent() is not None


@pytest.mark.parametrize("method", ["smac_10batch", "tpe"])
def test_full_cv_methods_score_every_fold_and_propose_valid_configurations(small, method):
    optimizer = make_method(method, small, 3, np.random.default_rng(0))
    told = drive(optimizer, 3 * 25)
    for i, (request, _) in enumerate(told):
        assert request.instance == i % 3
        config = dict(request.config)
        assert set(small.space.decode(small.space.encode(config))) == set(config)
    assert optimizer.incumbent()["learner"] in set(small.learners)


def test_tpe_is_deterministic_given_its_seed(small):
    runs = [
        [r.config for r, _ in drive(make_method("tpe", small, 1, np.random.default_rng(3)), 25)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_every_named_method_builds_and_unknown_settings_are_refused(small):
    methods = [p.stem[3:] for p in sorted((CONF_DIR / "optimizer").glob("aw_*.yaml"))]
    assert len(methods) == 11
    for method in methods:
        make_method(method, small, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown setting.s. gama for optimizer 'cash_tpe'"):
        make_method("tpe", small, 10, np.random.default_rng(0), gama=0.1)
    with pytest.raises(ValueError, match="unknown instances 'folds'; valid choices: cv"):
        make_method("smac", small, 10, np.random.default_rng(0), instances="folds")
    for factor in (0, -4.0):  # the instance loop multiplies the budgets by it
        with pytest.raises(ValueError, match=f"budget_factor must be > 0, got {factor}"):
            make_method("smac", small, 10, np.random.default_rng(0), budget_factor=factor)


# --- ConfigSpace's shortcuts (hpo.optimizers.backends.configspace_shortcuts)
# -----------------------------


def _pairs_of_configurations(small):
    """Pairs of configurations of the small CASH space: random, one-exchange neighbours, copies,
    and copies whose integers' vectors moved within one integer value (equal as dictionaries)."""
    from ConfigSpace import Configuration, UniformIntegerHyperparameter
    from ConfigSpace.util import get_one_exchange_neighbourhood

    from hpo.optimizers.smac import to_configspace

    space = to_configspace(small.space, seed=0)
    integer = UniformIntegerHyperparameter
    integers = [i for i, name in enumerate(space.at) if isinstance(space[name], integer)]
    sampled = space.sample_configuration(40)
    pairs = list(zip(sampled[:-1], sampled[1:], strict=True))
    for config in sampled[:10]:
        pairs += [(config, n) for n in get_one_exchange_neighbourhood(config, seed=1)]
        vector = config.get_array().copy()
        pairs.append((config, Configuration(space, vector=vector.copy())))
        for i in integers:
            if not np.isnan(vector[i]):
                nudged = vector.copy()
                nudged[i] += 1e-9 if nudged[i] < 0.5 else -1e-9
                pairs.append((config, Configuration(space, vector=nudged)))
    return pairs


def test_configspace_shortcuts_agree_with_configspace_on_every_pair(small):
    """Equality, hash and iteration of each configuration, inside the block and out; equal
    configurations hash equal inside; ConfigSpace's own are back after."""
    from ConfigSpace import Configuration

    from hpo.optimizers.backends.configspace_shortcuts import configspace_shortcuts

    pairs = _pairs_of_configurations(small)
    own = [a == b for a, b in pairs]
    assert 0 < sum(own) < len(own)  # both outcomes are exercised
    nudged_equal = sum(
        a == b and not np.array_equal(a.get_array(), b.get_array(), equal_nan=True)
        for a, b in pairs
    )
    assert nudged_equal > 0  # equal dictionaries with different vectors are among the pairs
    configs = [c for pair in pairs for c in pair]
    hashes, names = [hash(c) for c in configs], [list(c) for c in configs]
    originals = (Configuration.__eq__, Configuration.__hash__, Configuration.__iter__)
    with configspace_shortcuts():
        assert Configuration.__eq__ is not originals[0]
        assert [a == b for a, b in pairs] == own
        for _ in range(2):  # the second time from what each object remembers
            assert [hash(c) for c in configs] == hashes
        assert [list(c) for c in configs] == names
        assert all(hash(a) == hash(b) for a, b in pairs if a == b)
    assert (Configuration.__eq__, Configuration.__hash__, Configuration.__iter__) == originals


def test_a_remembered_hash_follows_the_configuration_when_it_changes(small):
    from hpo.optimizers.backends.configspace_shortcuts import configspace_shortcuts
    from hpo.optimizers.smac import to_configspace

    space = to_configspace(small.space, seed=0)
    config = space.sample_configuration()
    with configspace_shortcuts():
        before = hash(config)
        config["learner"] = next(v for v in space["learner"].choices if v != config["learner"])
        after = hash(config)
    assert after == hash(config) and after != before


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_wave_neighbours_are_configspace_s_on_the_full_cash_space(task):
    """Every parameter of 30 random configurations of the full CASH space changed to a random
    value: the wave-wise ``change_hp_value`` gives ConfigSpace's vector, NaNs included."""
    from ConfigSpace import CategoricalHyperparameter, util

    from hpo.optimizers.backends.configspace_shortcuts import _change_hp_value
    from hpo.optimizers.smac import to_configspace

    cash = build_cash_space(load_cash_library(), task, nonnegative_inputs=True)
    space = to_configspace(cash.space, seed=0)
    rng = np.random.default_rng(0)
    changed = 0
    for config in space.sample_configuration(30):
        vector = config.get_array()
        for index, name in enumerate(space.at):
            hp = space[name]
            value = (
                float(rng.integers(len(hp.choices)))
                if isinstance(hp, CategoricalHyperparameter)
                else float(rng.random())
            )
            want = util.change_hp_value(space, vector.copy(), name, value, index)
            got = _change_hp_value(space, vector.copy(), name, value, index)
            assert np.array_equal(want, got, equal_nan=True), name
            changed += not np.array_equal(want, vector, equal_nan=True)
    assert changed > 1000


@pytest.mark.slow
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_one_pass_deactivation_is_configspace_s_on_sobol_designs(task):
    """SMAC's Sobol initial design of the full CASH space made into configurations
    (``transform_continuous_designs``) with the one-pass deactivation and with ConfigSpace's
    own: the same vectors, NaNs included, and the same values, over many learners."""
    from scipy.stats.qmc import Sobol
    from smac.utils import configspace as smacs_configspace

    from hpo.optimizers.backends.configspace_shortcuts import configspace_shortcuts
    from hpo.optimizers.smac import to_configspace

    cash = build_cash_space(load_cash_library(), task, nonnegative_inputs=True)
    space = to_configspace(cash.space, seed=0)
    design = Sobol(d=len(space), scramble=True, seed=3).random(16)
    own = smacs_configspace.deactivate_inactive_hyperparameters
    want = smacs_configspace.transform_continuous_designs(design.copy(), "sobol", space)
    with configspace_shortcuts():
        assert smacs_configspace.deactivate_inactive_hyperparameters is not own
        got = smacs_configspace.transform_continuous_designs(design.copy(), "sobol", space)
    assert smacs_configspace.deactivate_inactive_hyperparameters is own
    assert len(got) == len(want) == 16
    for a, b in zip(want, got, strict=True):
        assert np.array_equal(a.get_array(), b.get_array(), equal_nan=True)
        assert dict(a) == dict(b)
    assert len({c["learner"] for c in want}) > 8


@pytest.mark.slow
@pytest.mark.parametrize("space, n", [("small", 80), ("cash", 40)])
def test_smac_proposals_are_unchanged_by_the_shortcuts_and_the_batched_best(
    space, n, request, monkeypatch
):
    import contextlib

    import hpo.optimizers.smac_instances as smac_instances

    cash_space = request.getfixturevalue(space)

    def proposals():
        optimizer = make_method("smac", cash_space, 10, np.random.default_rng(5))
        return [(r.config, r.instance) for r, _ in drive(optimizer, n)]

    fast = proposals()
    monkeypatch.setattr(smac_instances, "configspace_shortcuts", contextlib.nullcontext)
    monkeypatch.setattr(smac_instances, "predict_best_in_one_batch", lambda facade: None)
    monkeypatch.setattr(smac_instances, "impute_in_one_pass", lambda facade: None)
    assert proposals() == fast


def test_the_forest_s_one_pass_imputation_is_smac_s(cash):
    """Rows of the CASH space with their inactive (NaN) and infinite entries: the one-pass
    imputation gives SMAC's per-column loop's array, bit for bit."""
    from smac.model.random_forest.abstract_random_forest import AbstractRandomForest

    from hpo.optimizers.smac import to_configspace

    optimizer = make_method("smac", cash, 10, np.random.default_rng(0))
    model = optimizer.facade._model
    X = np.array([c.get_array() for c in to_configspace(cash.space, 0).sample_configuration(64)])
    X[::7, 3] = np.inf
    want = AbstractRandomForest._impute_inactive(model, X)
    got = model._impute_inactive(X)
    assert np.isnan(X).any() and not np.isnan(got).any()
    assert np.array_equal(want, got) and np.isnan(X).any()  # and X is left as it was


def test_smac_s_forest_predicts_a_batch_row_by_row(small):
    """The batched predicted-best relies on it: the means of one prediction over the history are
    the means of one prediction per row, bit for bit."""
    from hpo.optimizers.smac import to_configspace

    optimizer = make_method("smac", small, 10, np.random.default_rng(2))
    drive(optimizer, 60)
    model = optimizer.facade._model
    configs = to_configspace(small.space, seed=0).sample_configuration(50)
    X = np.array([c.get_array() for c in configs])
    batch = model.predict_marginalized(X)[0][:, 0]
    rows = np.array([model.predict_marginalized(x[None, :])[0][0, 0] for x in X])
    assert np.array_equal(batch, rows) and np.ptp(batch) > 0


def test_each_race_of_i_f_race_spends_at_most_its_share_of_what_is_left(cash, monkeypatch):
    """irace's budget split: race j may spend B_j = (B - used) / (N_iter - j + 1) evaluations
    and no more, even when its candidates could take more (all tied here: nobody is eliminated,
    5 candidates x 10 folds = 50 evaluations wanted against a first share of 60 / 2 = 30)."""
    shares = []
    own = IteratedFRace._run_race

    def recording(self, budget):  # noqa: ANN001, ANN202
        start = self.used
        yield from own(self, budget)
        shares.append((budget, self.used - start))

    monkeypatch.setattr(IteratedFRace, "_run_race", recording)
    race = family(IteratedFRace, cash, 10, np.random.default_rng(3), max_evaluations=60,
                  n_iterations=2, min_survival=1)  # fmt: skip
    with pytest.raises(StopIteration):
        for _ in range(100):
            race.tell(race.ask(), 0.5)
    assert shares[0] == (30.0, 30)
    assert all(spent <= share for share, spent in shares) and len(shares) == 2


@pytest.mark.parametrize("max_evaluations", [7, 30, 61])
def test_iterated_f_race_never_asks_past_its_evaluation_budget(cash, max_evaluations: int):
    """Each race stops asking once it has spent its share B_j of what is left (irace's budget
    split), so the whole I/F-Race asks at most ``max_evaluations``, whatever the races keep."""
    race = family(IteratedFRace, cash, 10, np.random.default_rng(3),
                  max_evaluations=max_evaluations)  # fmt: skip
    assert len(drive(race, 10 * max_evaluations)) <= max_evaluations


def test_seed_004_s_tpe_runs_with_hyperopt_s_own_defaults(small) -> None:
    """Auto-WEKA's TPE is hyperopt's TPE as shipped (seed §2.2.2): γ, the random start-up jobs
    and the EI candidates per proposal are ``tpe.suggest``'s defaults."""
    import inspect

    from hyperopt import tpe

    from hpo.optimizers.cash_tpe import TPE

    own = inspect.signature(tpe.suggest).parameters
    settings = TPE(small.space, 10, np.random.default_rng(0)).tpe_settings
    assert settings == {name: own[name].default for name in settings}
