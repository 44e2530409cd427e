"""EO (thesis Alg. 4.1): slot bookkeeping on a stubbed learner, the GP's pool, bad settings; the
post_hoc and eo rules; one run through the runner whose ensemble test errors are recomputed from
the predictions sidecar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.spec import RunSpec
from experiments.run.single import run_and_save
from hpo.data.catalog import load_dataset
from hpo.ensembles import ensemble_loss, forward_greedy, majority_vote
from hpo.evaluation.protocol import ProtocolSettings
from hpo.optimizers import make_optimizer
from hpo.records import FoldPredictions, Trace
from hpo.rules.ensemble import EnsembleOptimizerRule, PostHocRule
from hpo.rules.registry import make_rule
from hpo.space.search_space import Real, Space
from runfiles.files import read_predictions
from runfiles.schema import PREDICTION_KINDS

SPACE = Space("unit", (Real("a", 0.0, 1.0), Real("b", 0.0, 1.0)))
FAST_GP = dict(burnin=5, n_samples=2, grid_size=256, n_refine=2, n_jitter=2)
FOLD_ROWS = (np.arange(0, 25), np.arange(25, 55))  # two folds of different sizes


def fake_model(rng, labels, accuracy):
    """Per-fold validation predictions of a stub classifier that is right with ``accuracy``."""
    predicted = np.where(
        rng.random(labels.size) < accuracy, labels, rng.integers(0, 3, labels.size)
    )
    folds = tuple(
        FoldPredictions(rows, labels[rows], predicted[rows], np.zeros(0, int)) for rows in FOLD_ROWS
    )
    return predicted, folds


def pool_loss(loss, predictions, labels, members):
    """Mean over folds of the loss of the ensemble ``members`` (direct, one ensemble at a time)."""
    return np.mean(
        [ensemble_loss(loss, predictions[members][:, rows], labels[rows]) for rows in FOLD_ROWS]
    )


@pytest.mark.parametrize("loss", ["sqm", "sigmoid"])
def test_round_robin_slots_refill_and_the_gp_pool(loss):
    m, n_iterations = 4, 14
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 55)
    opt = make_optimizer(
        "eo", SPACE, 20, np.random.default_rng(1), loss=loss, ensemble_size=m, **FAST_GP
    )
    seen_by_gp: list[tuple[np.ndarray, np.ndarray]] = []

    def recording(sample):
        def recording_sample(X, y, n_samples, rng_):
            seen_by_gp.append((X.copy(), y.copy()))
            return sample(X, y, n_samples, rng_)

        return recording_sample

    for chain in (opt.chain, *opt.chains):  # one chain, or one per slot (hyper_chain)
        chain.sample = recording(chain.sample)
    predictions = []
    for i in range(n_iterations):
        before = list(opt.slots)
        slot = i % m
        kept = [h for s, h in enumerate(before) if s != slot and h is not None]
        outside = [h for h in range(i) if h not in kept]
        n_gp_fits = len(seen_by_gp)
        proposal = opt.ask()
        if len(outside) >= 2:  # the GP sees exactly the pool minus E_i, re-scored against E_i
            X, y = seen_by_gp[n_gp_fits]
            np.testing.assert_array_equal(X, np.array(opt.X)[outside])
            expected = [pool_loss(loss, np.array(predictions), labels, kept + [h]) for h in outside]
            np.testing.assert_allclose(y, np.multiply(expected, opt.loss_scale))
        else:
            assert len(seen_by_gp) == n_gp_fits  # random proposal, no GP
        predicted, folds = fake_model(rng, labels, accuracy=0.4 + 0.04 * (i % 5))
        predictions.append(predicted)
        opt.observe_predictions(proposal, folds)
        opt.tell(proposal, float(np.mean([np.mean(f.valid != f.valid_labels) for f in folds])))
        # only slot i mod m changed; it holds the zero-one argmin outside E_i
        assert [h for s, h in enumerate(opt.slots) if s != slot] == [
            h for s, h in enumerate(before) if s != slot
        ]
        candidates = [h for h in range(i + 1) if h not in kept]
        zero_one = [
            pool_loss("zero_one", np.array(predictions), labels, kept + [h]) for h in candidates
        ]
        assert opt.slots[slot] in candidates
        assert zero_one[candidates.index(opt.slots[slot])] == min(zero_one)
        members = [h for h in opt.slots if h is not None]
        assert len(members) == len(set(members)) == min(i + 1, m)  # no duplicates
        assert opt.current_ensemble() == tuple(h + 1 for h in members)
    assert len(seen_by_gp) == n_iterations - (m + 1)  # the first m + 1 proposals are random


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"loss": "margin"}, r"unknown ensemble loss 'margin'; valid choices: zero_one, sqm, "),
        ({"loss": "hinge"}, r"unknown ensemble loss 'hinge'; valid choices: zero_one, sqm, "),
        ({"ensemble_size": 1}, r"ensemble_size must be an integer >= 2, got 1"),
        ({"loss_scale": 0}, r"loss_scale must be > 0, got 0"),
    ],
)
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises(ValueError, match=message) as error:
        make_optimizer("eo", SPACE, 10, np.random.default_rng(0), **settings)
    assert "\n" not in str(error.value)


def test_tell_without_predictions_is_refused():
    opt = make_optimizer("eo", SPACE, 10, np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="observe_predictions"):
        opt.tell(opt.ask(), 0.5)


def test_reshuffled_folds_are_refused():
    opt = make_optimizer("eo", SPACE, 10, np.random.default_rng(0))
    labels = np.zeros(55, int)
    _, folds = fake_model(np.random.default_rng(0), labels, 1.0)
    proposal = opt.ask()
    opt.observe_predictions(proposal, folds)
    opt.tell(proposal, 0.0)
    moved = tuple(
        FoldPredictions(f.valid_rows + 1, *[f.valid_labels, f.valid, f.selection]) for f in folds
    )
    with pytest.raises(ValueError, match="same folds"):
        opt.observe_predictions(opt.ask(), moved)


def test_post_hoc_rule_is_forward_greedy_on_the_trace():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 3, 55)
    models = [fake_model(rng, labels, 0.5) for _ in range(7)]
    trace = Trace(
        valid_loss=rng.random(7),
        selection_loss=np.full(7, np.nan),
        batch=np.arange(1, 8),
        configs=[{"a": float(i)} for i in range(7)],
        predictions=[folds for _, folds in models],
    )
    rule = make_rule("post_hoc")
    assert isinstance(rule, PostHocRule) and rule.needs_predictions
    choices = rule.choices(trace)
    stacked = np.array([p for p, _ in models])
    for t, choice in enumerate(choices, start=1):
        counts = forward_greedy([(stacked[:t, rows], labels[rows]) for rows in FOLD_ROWS])
        assert [m.iteration for m in choice.members] == list(np.flatnonzero(counts) + 1)
        assert choice.weights == tuple(float(c) for c in counts[counts > 0])
    assert sum(choices[-1].weights) == 100
    assert isinstance(make_rule("eo"), EnsembleOptimizerRule)


def _vote_error(predictions: pd.DataFrame, members: str, y: np.ndarray, same: dict) -> float:
    """Majority vote (ties to the lowest label, the run's default) of the members' test
    predictions, from the sidecar alone; ``same`` maps an iteration to the first iteration with
    its configuration (the sidecar stores a configuration's test predictions once)."""
    test = predictions[predictions["split"] == PREDICTION_KINDS["test"]]
    ids = [same[int(m)] for m in members.split(",")]
    rows = test[test["model"] == ids[0]]["row"].to_numpy()
    votes = np.stack(
        [test[test["model"] == i].set_index("row").loc[rows, "prediction"].to_numpy() for i in ids]
    )
    return float(np.mean(majority_vote(votes) != y[rows]))


def test_eo_run_through_the_runner_and_the_sidecar(tmp_path: Path):
    spec = RunSpec.of(
        dataset="sklearn-breast-cancer",
        optimizer="eo",
        rules={"EO": "eo", "EO-post": "post_hoc"},
        protocol=ProtocolSettings(validation="cv"),
        budget=8,
        optimizer_settings={"ensemble_size": 3, **FAST_GP},
        predictions=True,
    )
    path = run_and_save(spec, tmp_path / "run.parquet")
    table = pd.read_parquet(path)
    outcomes = table[table["row_type"] == "outcome"]
    predictions = read_predictions(path)
    y = load_dataset("sklearn-breast-cancer").y
    trace = table[table["row_type"] == "trace"]
    params = [c for c in trace.columns if c.startswith("param_")]
    keys = [tuple(row) for row in trace[params].astype(str).to_numpy()]
    same = {
        int(i): int(trace["iteration"].iloc[keys.index(k)])
        for i, k in zip(trace["iteration"], keys, strict=True)
    }
    eo = outcomes[outcomes["method"] == "EO"].set_index("iteration")
    assert list(eo["n_members"]) == [1, 2, 3, 3, 3, 3, 3, 3]
    for row in outcomes.itertuples():
        members = row.members.split(",")
        if row.method == "EO":
            assert len(set(members)) == len(members)  # EO's slots hold distinct models
        assert _vote_error(predictions, row.members, y, same) == row.test_error
    post = outcomes[outcomes["method"] == "EO-post"]
    assert (post["members"].str.count(",") + 1 == 100).all()  # multiplicities as repeats
