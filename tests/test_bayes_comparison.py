"""The ESMBO paper's statistics (UAI 2014; PB test of Lacoste et al., AISTATS 2012) on small
hand-made tables, against brute force and their limits."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.bayes_comparison import (
    PB_THRESHOLDS,
    SIGN_THRESHOLDS,
    bootstrap_dataset_probability,
    comparison_table,
    dataset_probabilities,
    expected_rank,
    pb_matrix,
    pb_probability,
    poisson_binomial_pmf,
    sign_test,
    sign_test_matrix,
    significance_level,
    winning_frequency,
    zero_one_dataset_probability,
)


def _brute_force_pb(p: np.ndarray, prior: tuple[float, float] = (1.0, 1.0)) -> float:
    """Pr(A ≻ B) by enumerating the 2^L outcomes (which datasets A truly wins)."""
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(p)):
        z = np.array(outcome)
        weight = np.prod(np.where(z == 1, p, 1 - p))
        k = z.sum()
        total += weight * stats.beta.sf(0.5, k + prior[0], len(p) - k + prior[1])
    return float(total)


@pytest.mark.parametrize("seed", range(4))
def test_pb_matches_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(rng.integers(1, 8))
    assert pb_probability(p) == pytest.approx(_brute_force_pb(p), abs=1e-12)
    assert pb_probability(p, (2.0, 0.5)) == pytest.approx(_brute_force_pb(p, (2.0, 0.5)), abs=1e-12)
    pmf = poisson_binomial_pmf(p)
    assert pmf.sum() == pytest.approx(1.0) and pmf.size == p.size + 1


def test_pb_limits() -> None:
    assert pb_probability(np.ones(40)) == pytest.approx(1.0, abs=1e-9)
    assert pb_probability(np.zeros(40)) == pytest.approx(0.0, abs=1e-9)
    assert pb_probability(np.full(10, 0.5)) == pytest.approx(0.5)  # no evidence either way
    assert pb_probability(np.ones(3)) == pytest.approx(1 - 0.5**4)  # Beta(4, 1) above ½


def test_pb_and_sign_test_agree_in_direction() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        risk_b = rng.random(15)
        risk_a = risk_b + rng.normal(rng.choice([-0.2, 0.2]), 0.1, 15)
        p = np.where(risk_a < risk_b, 0.95, 0.05)  # confident per-dataset verdicts
        pb, pvalue = pb_probability(p), sign_test(risk_a, risk_b)
        wins = np.sum(risk_a < risk_b)
        if wins > 7.5:
            assert pb > 0.5 and pvalue < 0.5
        else:
            assert pb < 0.5 and pvalue > 0.5


def test_sign_test_drops_ties_and_is_one_sided() -> None:
    a = [0.1, 0.1, 0.1, 0.2, 0.3]
    b = [0.2, 0.2, 0.2, 0.2, 0.1]  # 3 wins, 1 loss, 1 tie
    assert sign_test(a, b) == pytest.approx(5 / 16)  # P(X >= 3), X ~ Bin(4, ½)
    assert sign_test(b, a) == pytest.approx(15 / 16)
    assert sign_test([1, 2], [1, 2]) == 1.0


def test_zero_one_dataset_probability_counts_only_disagreements() -> None:
    a = np.array([0, 0, 0, 1, 1, 0])
    b = np.array([1, 1, 0, 0, 1, 0])  # k_A = 2, k_B = 1
    assert zero_one_dataset_probability(a, b) == pytest.approx(stats.beta.sf(0.5, 3, 2))
    assert zero_one_dataset_probability(a, a) == pytest.approx(0.5)


def test_bayesian_bootstrap_probability_follows_the_better_method() -> None:
    rng = np.random.default_rng(0)
    b = rng.random(200)
    assert bootstrap_dataset_probability(b - 0.2, b, rng) == 1.0
    assert bootstrap_dataset_probability(b, b, rng) == 0.5


def _risks() -> pd.DataFrame:
    """3 datasets, 3 methods, iterations 1-20; A < B < C everywhere except C wins d2 at
    iterations 16-20, where A and B tie on d1."""
    rows = []
    for it in range(1, 21):
        late = it > 15
        table = {
            "d0": {"A": 0.1, "B": 0.2, "C": 0.3},
            "d1": {"A": 0.1, "B": 0.1 if late else 0.2, "C": 0.3},
            "d2": {"A": 0.1, "B": 0.2, "C": 0.0 if late else 0.3},
        }
        rows += [(d, m, it, v) for d, r in table.items() for m, v in r.items()]
    return pd.DataFrame(rows, columns=["dataset", "method", "iteration", "loss"])


def test_winning_frequency_and_expected_rank_over_the_last_iterations() -> None:
    rho = winning_frequency(_risks(), last=5)  # iterations 16-20 only
    assert rho.loc["A", "B"] == pytest.approx(2.5 / 3)
    assert rho.loc["B", "A"] == pytest.approx(0.5 / 3)
    assert rho.loc["A", "C"] == pytest.approx(2 / 3)
    np.testing.assert_allclose(rho.to_numpy() + rho.to_numpy().T, 1.0)
    ranks = expected_rank(_risks(), last=5)
    np.testing.assert_allclose(ranks, 1 + rho.sum(axis=0) - 0.5)  # E[R]_i = 1 + Σ_{l≠i} ρ[l,i]
    assert ranks.sum() == pytest.approx(1 + 2 + 3)
    # default: iterations 6-20, ten without the late change and five with it, averaged
    averaged = winning_frequency(_risks())
    assert averaged.loc["A", "B"] == pytest.approx((10 * 1.0 + 5 * 2.5 / 3) / 15)


def test_sign_test_matrix_matches_the_pairwise_test() -> None:
    risks = _risks()
    matrix = sign_test_matrix(risks, last=1)
    last = risks[risks.iteration == 20].pivot(index="dataset", columns="method", values="loss")
    assert matrix.loc["A", "C"] == pytest.approx(sign_test(last.A, last.C))


def test_pb_matrix_from_example_losses() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for d in range(6):
        for it in (1, 2):
            for method, error in (("good", 0.1), ("bad", 0.4)):
                wrong = rng.random(80) < error
                rows += [(f"d{d}", method, it, e, float(w)) for e, w in enumerate(wrong)]
    frame = pd.DataFrame(rows, columns=["dataset", "method", "iteration", "example", "loss"])
    probs = dataset_probabilities(frame, "good", "bad")
    assert probs.shape == (12,) and (probs > 0.9).all()
    matrix = pb_matrix(frame)
    assert matrix.loc["good", "bad"] > 0.95
    assert matrix.loc["good", "bad"] + matrix.loc["bad", "good"] == pytest.approx(1.0)
    assert significance_level(matrix.loc["good", "bad"], PB_THRESHOLDS) == 3


def test_significance_levels() -> None:
    assert [significance_level(v, PB_THRESHOLDS) for v in (0.5, 0.85, 0.92, 0.99)] == [0, 1, 2, 3]
    assert significance_level(0.03, SIGN_THRESHOLDS, higher_is_stronger=False) == 2


def test_comparison_table_orders_by_rank_and_marks_both_tests() -> None:
    rows = []
    rng = np.random.default_rng(2)
    for d in range(12):
        for method, error in (("good", 0.05), ("bad", 0.45)):
            wrong = (rng.random(60) < error).astype(float)
            rows += [(f"d{d}", method, 1, e, w) for e, w in enumerate(wrong)]
    examples = pd.DataFrame(rows, columns=["dataset", "method", "iteration", "example", "loss"])
    risks = examples.groupby(["dataset", "method", "iteration"], as_index=False).loss.mean()
    table = comparison_table(risks, examples)
    assert list(table.row.unique()) == ["good", "bad"]
    cell = table[(table.row == "good") & (table.column == "bad")].iloc[0]
    assert cell.rho == 1.0 and cell.pb > 0.95 and cell.sign_p < 0.01
    assert cell.marks == "★★" and cell.row_expected_rank == 1.0
    assert np.isnan(comparison_table(risks).pb).all()
