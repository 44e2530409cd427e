"""Agnostic Bayes (Lacoste et al., ICML 2014): bootstrap matrix, posterior, ensemble, the rule."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hpo.ensembles.agnostic_bayes import (
    bootstrap_counts,
    bootstrap_risks,
    bootstrap_rng,
    bootstrap_wins,
    ensemble_predict,
    example_losses,
    pool_losses,
    posterior_from_risks,
)
from hpo.records import FoldPredictions, Trace
from hpo.rules.agnostic_bayes import AgnosticBayesRule
from hpo.rules.registry import RULE_NAMES, make_rule


def _loop_posterior(losses: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The posterior as the authors' code computes it: one bootstrap at a time."""
    n_models = losses.shape[1]
    prob = np.zeros(n_models)
    for row in counts:
        sample = np.repeat(np.arange(losses.shape[0]), row)  # the resampled examples
        risk = losses[sample].mean(axis=0)
        tied = [i for i in range(n_models) if risk[i] == risk.min()]
        for i in tied:
            prob[i] += 1.0 / len(tied)
    return prob / len(counts)


def test_bootstrap_counts_rows_are_resamples_of_the_right_size() -> None:
    counts = bootstrap_counts(np.random.default_rng(0), 40, 25, essr=0.5)
    assert counts.shape == (25, 40) and counts.dtype.kind == "i"
    assert np.all(counts.sum(axis=1) == 20) and np.all(counts >= 0)
    again = bootstrap_counts(np.random.default_rng(0), 40, 25, essr=0.5)
    np.testing.assert_array_equal(counts, again)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"essr": 0.0}, r"essr must be in \(0, 1\], got 0.0"), ({"essr": 1.5}, "got 1.5"),
     ({"n_bootstraps": 0}, "N must be an integer >= 1, got 0")],
)  # fmt: skip
def test_bad_settings_are_one_line_naming_the_value(kwargs: dict, message: str) -> None:
    settings = {"n_examples": 10, "n_bootstraps": 3, "essr": 1.0} | kwargs
    with pytest.raises(ValueError, match=message):
        bootstrap_counts(np.random.default_rng(0), **settings)


def test_posterior_matches_a_direct_bootstrap_loop_with_ties_shared() -> None:
    rng = np.random.default_rng(3)
    losses = (rng.random((30, 6)) < 0.3).astype(float)
    losses[:, 4] = losses[:, 1]  # a duplicate model: every bootstrap it is in a tie with model 1
    counts = bootstrap_counts(rng, 30, 200)
    posterior = posterior_from_risks(bootstrap_risks(counts, losses))
    np.testing.assert_allclose(posterior, _loop_posterior(losses, counts), atol=1e-12)
    assert posterior.sum() == pytest.approx(1.0)
    assert posterior[1] == pytest.approx(posterior[4]) and posterior[1] > 0


def test_ties_are_shared_equally() -> None:
    risks = np.array([[0.1, 0.1, 0.3], [0.2, 0.1, 0.1], [0.0, 0.5, 0.5]])
    np.testing.assert_allclose(bootstrap_wins(risks), [1.5, 1.0, 0.5])


def test_ensemble_vote_and_regression_mean() -> None:
    votes = np.array([[0, 1, 1], [1, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(ensemble_predict(votes, [0.6, 0.2, 0.2]), [0, 1, 1])
    np.testing.assert_array_equal(ensemble_predict(votes, [0.2, 0.4, 0.4]), [1, 1, 0])
    values = np.array([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(ensemble_predict(values, [0.75, 0.25], "regression"), [1.5, 3.0])


def _folds(rows: np.ndarray, labels: np.ndarray, predicted: np.ndarray) -> tuple:
    """Two folds over ``rows`` (unsorted, as k-fold gives them)."""
    half = len(rows) // 2
    return tuple(
        FoldPredictions(rows[s], labels[s], predicted[s], np.empty(0, dtype=int))
        for s in (slice(half, None), slice(0, half))
    )


def test_example_losses_are_out_of_fold_errors_in_fold_order_as_the_pool() -> None:
    rows = np.array([4, 0, 3, 1, 2, 5])
    labels = np.array([1, 0, 1, 0, 1, 1])
    predicted = np.array([1, 1, 1, 0, 0, -1])  # -1: a failed fit, an error
    got_rows, losses = example_losses(_folds(rows, labels, predicted))
    np.testing.assert_array_equal(got_rows, [1, 2, 5, 4, 0, 3])  # second half first, as given
    np.testing.assert_array_equal(losses, [0, 1, 1, 0, 1, 0])
    other = (rows * 0 + 1).astype(int)
    pool = pool_losses([_folds(rows, labels, predicted), _folds(rows, labels, other)])
    np.testing.assert_array_equal(pool[:, 0], losses)


def _trace(predicted: np.ndarray, labels: np.ndarray) -> Trace:
    rows = np.arange(labels.size)
    preds = [_folds(rows, labels, p) for p in predicted]
    return Trace(
        valid_loss=(predicted != labels).mean(axis=1),
        selection_loss=np.full(len(predicted), np.nan),
        batch=np.arange(1, len(predicted) + 1),
        configs=[{"i": i} for i in range(len(predicted))],
        predictions=preds,
    )


def test_rule_gives_the_posterior_of_the_pool_so_far_after_every_evaluation() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 50)
    predicted = np.where(rng.random((8, 50)) < 0.3, 1 - labels, labels)
    rule = AgnosticBayesRule(n_bootstraps=20, seed=11)
    choices = rule.choices(_trace(predicted, labels))
    fold_order = np.r_[25:50, 0:25]  # _folds gives the second half first
    losses = (predicted != labels).T[fold_order].astype(float)
    for t, choice in enumerate(choices, start=1):
        expected = _loop_posterior(losses[:, :t], rule.counts) * 20
        got = np.zeros(8)
        got[[m.iteration - 1 for m in choice.members]] = choice.weights
        np.testing.assert_allclose(got, np.pad(expected, (0, 8 - t)), atol=1e-9)
    assert choices[0].is_single and choices[0].weights == (20.0,)
    counts = rule.counts
    assert rule.choices(_trace(predicted, labels)) == choices  # the same bootstraps every call
    np.testing.assert_array_equal(rule.counts, counts)


def test_rule_refuses_models_validated_on_different_examples() -> None:
    labels = np.array([0, 1, 0, 1])
    trace = _trace(np.array([[0, 1, 0, 1], [1, 1, 0, 1]]), labels)
    first, second = trace.predictions[1]
    moved = (replace(first, valid_rows=first.valid_rows + 10), second)
    bad = replace(trace, predictions=[trace.predictions[0], moved])
    with pytest.raises(ValueError, match="validated on the same folds"):
        AgnosticBayesRule(n_bootstraps=3, seed=0).choices(bad)


def test_registered_rule_and_bootstrap_stream_leave_the_optimizer_stream_alone() -> None:
    assert "agnostic_bayes" in RULE_NAMES
    rule = make_rule("agnostic_bayes")
    assert isinstance(rule, AgnosticBayesRule) and rule.needs_predictions
    seq = np.random.SeedSequence([1, 2])
    a, b = np.random.default_rng(seq), np.random.default_rng(seq)
    first = bootstrap_rng(a).random(3)
    np.testing.assert_array_equal(first, bootstrap_rng(a).random(3))  # same stream every time
    assert a.random() == b.random()  # ``a`` was not advanced
