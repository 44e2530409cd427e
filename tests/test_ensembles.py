"""Ensemble losses (thesis §4.3), the sigmoid's a(m) table and the toy problems (Tables 4.1,
4.2), and Caruana forward greedy selection, against direct loop formulas."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.ensembles import (
    LOSSES,
    candidate_losses,
    cbound_loss,
    ensemble_loss,
    forward_greedy,
    majority_vote,
    margins,
    sigmoid_loss,
    sigmoid_scale,
    squared_margin_loss,
    vote_counts,
    zero_one_loss,
)

# ------------------------------------------------------------------ direct (loop) formulas


def loop_loss(loss: str, predictions, labels, weights=None, a=None) -> float:
    """Per example, by loops over members and labels: v*, v_max, |E|, then the loss."""
    predictions = np.asarray(predictions)
    weights = np.ones(len(predictions)) if weights is None else np.asarray(weights, float)
    size = weights.sum()
    per_example, margin_values = [], []
    for i, y in enumerate(labels):
        votes: dict[int, float] = {}
        for h, w in zip(predictions[:, i], weights, strict=True):
            if h >= 0:
                votes[int(h)] = votes.get(int(h), 0.0) + w
        correct = votes.get(int(y), 0.0)
        wrong = max([v for label, v in votes.items() if label != y], default=0.0)
        margin = (
            sum(w * (1 if h == y else -1) for h, w in zip(predictions[:, i], weights, strict=True))
            / size
        )
        margin_values.append(margin)
        if loss == "zero_one":
            per_example.append(float(correct <= wrong))
        elif loss == "margin":
            per_example.append((1 - margin) / 2)
        elif loss == "sqm":
            per_example.append((1 - margin) ** 2 / 4)
        elif loss == "sigmoid":
            scale = sigmoid_scale(round(size)) if a is None else a
            per_example.append(1 - 1 / (1 + np.exp(-scale * (correct - wrong) / size)))
    if loss == "cbound":
        mu1 = np.mean(margin_values)
        mu2 = np.mean(np.square(margin_values))
        return 0.5 if mu2 == 0 else 0.5 * (1 - np.sign(mu1) * mu1**2 / mu2)
    return float(np.mean(per_example))


def random_votes(rng, n_labels, m=7, n=40, failed=True):
    predictions = rng.integers(0, n_labels, (m, n))
    if failed:
        predictions[0] = -1  # a failed fit abstains (and is a wrong vote in the margin)
    return predictions, rng.integers(0, n_labels, n)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n_labels", [2, 3, 5])
def test_losses_match_loop_formulas(loss, n_labels):
    rng = np.random.default_rng(n_labels)
    for trial in range(5):
        predictions, labels = random_votes(rng, n_labels, failed=trial % 2 == 0)
        weights = rng.integers(1, 4, len(predictions)) if trial > 2 else None
        expected = loop_loss(loss, predictions, labels, weights)
        assert ensemble_loss(loss, predictions, labels, weights) == pytest.approx(expected)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n_labels", [2, 4])
def test_candidate_losses_equal_one_ensemble_per_candidate(loss, n_labels):
    """The vectorised scores of E ∪ {h} equal the loop loss of each ensemble built in full."""
    rng = np.random.default_rng(10 + n_labels)
    ensemble, labels = random_votes(rng, n_labels, m=6)
    candidates = rng.integers(-1, n_labels, (9, labels.size))
    weights = rng.integers(1, 3, len(ensemble))
    got = candidate_losses(loss, candidates, labels, ensemble, weights)
    for k, h in enumerate(candidates):
        full = np.vstack([ensemble, h])
        expected = loop_loss(loss, full, labels, np.append(weights, 1))
        assert got[k] == pytest.approx(expected), k
    empty = candidate_losses(loss, candidates, labels)  # E = ∅: single models
    for k, h in enumerate(candidates):
        assert empty[k] == pytest.approx(loop_loss(loss, h[None], labels)), k


def test_binary_margin_and_sigmoid_equal_the_binary_formulas():
    """Eq. 4.5 (y, h in {-1, +1}) and Eq. 4.23 equal the multiclass forms (Eq. 4.6, §4.3.3)."""
    rng = np.random.default_rng(3)
    predictions, labels = random_votes(rng, 2, m=7, failed=False)
    signed_h, signed_y = 2 * predictions - 1, 2 * labels - 1
    binary_margin = np.mean(signed_y * signed_h, axis=0)
    np.testing.assert_allclose(margins(predictions, labels), binary_margin)
    a = sigmoid_scale(7)
    expected = np.mean(1 - 1 / (1 + np.exp(-a * binary_margin)))
    assert sigmoid_loss(predictions, labels) == pytest.approx(expected)
    assert squared_margin_loss(predictions, labels) == pytest.approx(
        np.mean((1 - binary_margin) ** 2) / 4
    )
    # sqm = (1 - 2 mu1 + mu2) / 4 = (1 - mu1 - dis) / 2 (Eqs 4.14-4.20)
    mu1, mu2 = binary_margin.mean(), np.mean(binary_margin**2)
    assert squared_margin_loss(predictions, labels) == pytest.approx((1 - 2 * mu1 + mu2) / 4)
    assert squared_margin_loss(predictions, labels) == pytest.approx((1 - mu1 - (1 - mu2) / 2) / 2)


def test_zero_one_counts_ties_as_errors_and_matches_a_strict_vote():
    rng = np.random.default_rng(4)
    predictions, labels = random_votes(rng, 3, m=5, failed=False)
    counts = vote_counts(predictions)
    strict = counts[np.arange(labels.size), labels] > np.max(
        np.where(np.arange(counts.shape[1]) == labels[:, None], -1, counts), axis=1
    )
    assert zero_one_loss(predictions, labels) == pytest.approx(1 - strict.mean())
    tie = np.array([[0, 1], [1, 0]])  # two members, every example tied
    assert zero_one_loss(tie, np.array([0, 1])) == 1.0
    assert np.mean(majority_vote(tie) != np.array([0, 1])) == 0.5  # the test vote's "lowest"


def test_cbound_corner_cases():
    labels = np.array([0, 1, 0, 1])
    all_zero = np.array([[0, 1, 0, 1], [1, 0, 1, 0]])  # one right, one wrong everywhere: mu2 = 0
    assert np.all(margins(all_zero, labels) == 0)
    assert cbound_loss(all_zero, labels) == 0.5
    half = np.array([[0, 1, 1, 0]])  # margins +1, +1, -1, -1: mu1 = 0, mu2 = 1
    assert cbound_loss(half, labels) == 0.5
    assert cbound_loss(np.array([[0, 1, 0, 1]]), labels) == 0.0  # all right: mu1 = mu2 = 1
    assert cbound_loss(np.array([[1, 0, 1, 0]]), labels) == 1.0  # all wrong: mu1 = -1


SIGMOID_TABLE = {  # thesis §4.3.3: d_min(a | m) = 1e-3, root a > 1
    3: 20.72, 4: 13.81, 5: 11.49, 6: 10.31, 7: 9.58, 8: 9.06, 9: 8.68, 10: 8.37,
    11: 8.12, 12: 7.91, 13: 7.73, 15: 7.43, 20: 6.90, 25: 6.53, 30: 6.24,
}  # fmt: skip


def test_sigmoid_scale_reproduces_the_table():
    for m, a in SIGMOID_TABLE.items():
        assert round(sigmoid_scale(m), 2) == a, m
        gap = 1 / (1 + np.exp(-sigmoid_scale(m))) - 1 / (
            1 + np.exp(-sigmoid_scale(m) * (1 - 2 / m))
        )
        assert gap == pytest.approx(1e-3)
    assert sigmoid_scale(1) == sigmoid_scale(2) == sigmoid_scale(3)  # no root a > 1 for m <= 2


def test_unknown_loss_is_one_line():
    with pytest.raises(ValueError, match=r"unknown ensemble loss 'hinge'; valid choices: zero_one"):
        ensemble_loss("hinge", np.zeros((1, 2), int), np.zeros(2, int))


# ------------------------------------------------------------------ toy problems (Tables 4.1-4.2)

TOY_A = 11.49  # a(5); the printed 0.98 of Table 4.1 needs a ≈ 11.2-12.4
TOY_COLUMNS = ("zero_one", "margin", "sqm", "sigmoid", "cbound")


def errors_to_predictions(errors: np.ndarray) -> np.ndarray:
    """Binary toy problem with every label 0: a member predicts 1 where it errs."""
    return np.asarray(errors, dtype=int)


def toy_row(errors):
    predictions, labels = errors_to_predictions(errors), np.zeros(np.shape(errors)[1], int)
    return [round(ensemble_loss(loss, predictions, labels, a=TOY_A), 2) for loss in TOY_COLUMNS]


def test_table_4_1():
    ensemble = np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]])  # h1 = (1, 0, 1); 2 wrong votes each
    assert np.allclose(ensemble.mean(axis=1), 2 / 3)
    assert toy_row(ensemble) == [1.00, 0.67, 0.44, 0.98, 1.00]
    h0, h1 = np.array([[1, 0, 0]]), np.array([[1, 1, 1]])
    assert toy_row(np.vstack([ensemble, h0])) == [1.00, 0.58, 0.35, 0.67, 0.67]
    assert toy_row(np.vstack([ensemble, h1])) == [1.00, 0.75, 0.56, 1.00, 1.00]


def test_table_4_2():
    ensemble = np.array(  # wrong votes per sample (3, 2, 1, 1, 1), individual errors 0.40
        [[1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [0, 1, 0, 0, 1]]
    )
    assert np.allclose(ensemble.mean(axis=1), 0.4)
    assert toy_row(ensemble) == [0.40, 0.40, 0.20, 0.30, 0.40]
    # candidate wrong on samples where E has (…) wrong votes -> its row (Table 4.2 rebuilt from
    # its E row, its one surviving candidate row and its text)
    candidates = {
        (2, 1): ([0, 1, 1, 0, 0], [0.40, 0.40, 0.19, 0.38, 0.38]),
        (1, 1): ([0, 0, 1, 1, 0], [0.20, 0.40, 0.18, 0.24, 0.31]),
        (3, 1): ([1, 0, 1, 0, 0], [0.20, 0.40, 0.21, 0.24, 0.41]),
        (3, 2): ([1, 1, 0, 0, 0], [0.40, 0.40, 0.22, 0.38, 0.43]),
    }
    rows = {}
    for kind, (errors, expected) in candidates.items():
        rows[kind] = toy_row(np.vstack([ensemble, errors]))
        assert rows[kind] == expected, kind
    # the text: h'1 (2,1) has lower sqm and C-bound than h'2 (3,1) but a higher zero-one error
    assert rows[(2, 1)][2] < rows[(3, 1)][2] and rows[(2, 1)][4] < rows[(3, 1)][4]
    assert rows[(2, 1)][0] > rows[(3, 1)][0]


# ------------------------------------------------------------------ Caruana selection


def greedy_by_enumeration(folds, n_init, n_iterations, loss, tie_loss="sqm"):
    """Forward greedy by building every candidate ensemble in full and looping (reference);
    ties of ``loss`` go to ``tie_loss`` (None: skipped), the individual error, the index."""
    n_models = len(folds[0][0])
    individual = [np.mean([np.mean(p[k] != y) for p, y in folds]) for k in range(n_models)]
    members = sorted(range(n_models), key=lambda k: (individual[k], k))[:n_init]
    while len(members) < n_iterations:
        scored = []
        for k in range(n_models):
            trial = members + [k]
            value = np.mean([loop_loss(loss, p[trial], y) for p, y in folds])
            tie = 0.0
            if tie_loss is not None:
                tie = round(np.mean([loop_loss(tie_loss, p[trial], y) for p, y in folds]), 12)
            scored.append((value, tie, individual[k], k))
        members.append(min(scored)[3])
    return np.bincount(members, minlength=n_models)


@pytest.mark.parametrize("tie_loss", ["sqm", None])
@pytest.mark.parametrize("loss", ["zero_one", "sqm"])
def test_forward_greedy_matches_enumeration(loss, tie_loss):
    rng = np.random.default_rng(5)
    folds = []
    for n in (11, 12):  # two folds of different sizes: the mean of per-fold losses
        labels = rng.integers(0, 3, n)
        pool = np.where(rng.random((6, n)) < 0.6, labels, rng.integers(0, 3, (6, n)))
        folds.append((pool, labels))
    expected = greedy_by_enumeration(folds, 3, 9, loss, tie_loss)
    np.testing.assert_array_equal(forward_greedy(folds, 3, 9, loss, tie_loss), expected)
    assert forward_greedy(folds, 3, 9, loss, tie_loss).sum() == 9


def test_forward_greedy_first_step_is_the_exhaustive_best():
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 2, 15)
    pool = np.where(rng.random((5, 15)) < 0.7, labels, 1 - labels)
    individual = (pool != labels).mean(axis=1)
    best3 = list(np.lexsort((np.arange(5), individual))[:3])
    counts = forward_greedy([(pool, labels)], n_init=3, n_iterations=4)
    added = int(np.flatnonzero(counts - np.bincount(best3, minlength=5))[0])
    values = [zero_one_loss(pool[best3 + [k]], labels) for k in range(5)]
    ties = [round(loop_loss("sqm", pool[best3 + [k]], labels), 12) for k in range(5)]
    assert added == min(range(5), key=lambda k: (values[k], ties[k], individual[k], k))


@pytest.mark.parametrize("loss", LOSSES)
def test_candidates_with_unseen_labels_and_failed_fits(loss):
    """A candidate may predict a label no member or example has, or fail everywhere (-1)."""
    labels = np.array([0, 1, 0, 1, 1])
    ensemble = np.array([[0, 1, 1, 1, 0], [0, 0, 0, 1, 1]])
    candidates = np.array([[4, 4, 0, 1, 3], [-1, -1, -1, -1, -1], [-1, 1, 7, 0, 1]])
    got = candidate_losses(loss, candidates, labels, ensemble)
    for k, h in enumerate(candidates):
        assert got[k] == pytest.approx(loop_loss(loss, np.vstack([ensemble, h]), labels)), k


def test_post_hoc_ties_broken_by_sqm_escape_the_collapse_onto_the_best_model():
    """The observed collapse (docs/ensembles.md): the three best models err together on A, so
    no single addition changes the zero-one loss; ties broken by the individual error alone
    vote the best model 98 times (post-hoc = best single model), while the squared-margin
    tie-break (the default) adds the two diverse models and reaches the strictly better
    ensemble {h0, d1, d2} (zero error against the best model's 10 %)."""
    labels = np.zeros(20, dtype=np.int64)

    def wrong_on(rows):
        predicted = labels.copy()
        predicted[rows] = 1
        return predicted

    A = [0, 1]
    pool = np.array(
        [
            wrong_on(A),
            wrong_on(A + [2]),
            wrong_on(A + [3]),
            wrong_on([4, 5, 6]),
            wrong_on([7, 8, 9]),
        ]
    )
    collapsed = forward_greedy([(pool, labels)], 3, 100, "zero_one", tie_loss=None)
    np.testing.assert_array_equal(collapsed, [98, 1, 1, 0, 0])
    assert zero_one_loss(np.repeat(pool, collapsed, axis=0), labels) == 0.10
    default = forward_greedy([(pool, labels)], 3, 100)
    assert default[3] > 0 and default[4] > 0 and default.sum() == 100
    assert zero_one_loss(np.repeat(pool, default, axis=0), labels) == 0.0
    assert zero_one_loss(pool[:1], labels) == 0.10  # the best single model
