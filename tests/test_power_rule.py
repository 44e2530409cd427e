"""The one power rule (``analysis/power.py``): each test's smallest attainable p against scipy's
own tests at the most extreme data, for n = 3…25 and each alternative; every claims engine and
report deciding "underpowered" through it; and no module computing a floor of its own.

Sources of the floors: the exact null laws (Wilcoxon's signed-rank statistic and the sign test's
count under H0: each of the 2^n sign patterns equally likely; Spearman's n! orders; Friedman's
(k!)^n rankings; the binomial and Poisson-binomial laws), scipy's exact tests
(``scipy.stats.wilcoxon(method="exact")``, ``binomtest``, ``poisson_binom``) and its asymptotic
ones (``wilcoxon(method="approx", correction=False)``, ``friedmanchisquare``); the PB test of
Lacoste et al. (AISTATS 2012), as ``analysis.bayes_comparison.pb_probability`` computes it.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis import bayes_comparison, stats
from analysis.power import (
    ALTERNATIVES,
    Underpowered,
    all_can_decide,
    any_can_decide,
    power,
    smallest_attainable_p,
)

REPO = Path(__file__).resolve().parents[1]
SIZES = range(3, 26)
ONE_SIDED = ("less", "greater")


def _extreme(n: int, alternative: str) -> np.ndarray:
    """Differences giving the most extreme signed-rank statistic for ``alternative``: n distinct
    magnitudes, all positive (all negative for ``less``)."""
    values = np.arange(1.0, n + 1)
    return -values if alternative == "less" else values


# ------------------------------------------------------------------------ against scipy's tests


@pytest.mark.parametrize("n", SIZES)
def test_the_signed_rank_floor_is_scipys_exact_p_at_the_extreme_data(n: int) -> None:
    """Two-sided 2/2^n, one-sided 1/2^n: scipy's exact p of all n differences of one sign."""
    for alternative in ALTERNATIVES:
        exact = scipy_stats.wilcoxon(_extreme(n, alternative), alternative=alternative,
                                     method="exact").pvalue  # fmt: skip
        assert smallest_attainable_p("wilcoxon", n, alternative=alternative) == pytest.approx(
            exact, rel=1e-12
        )
    assert smallest_attainable_p("wilcoxon", n) == pytest.approx(2 / 2**n, rel=1e-12)
    assert smallest_attainable_p("wilcoxon", n, alternative="greater") == 1 / 2**n


@pytest.mark.parametrize("n", range(1, 7))
def test_no_sign_pattern_gives_a_signed_rank_p_below_the_floor(n: int) -> None:
    """All 2^n sign patterns of the ranks 1..n (and, with ties, of 1, 1, 2, …): the smallest
    exact p of each alternative is the floor, reached at one pattern (two, two-sided)."""
    for magnitudes in (np.arange(1.0, n + 1), np.r_[1.0, np.arange(1.0, n)]):
        for alternative in ALTERNATIVES:
            pvalues = [
                scipy_stats.wilcoxon(magnitudes * signs, alternative=alternative,
                                     method="exact").pvalue
                for signs in itertools.product((-1.0, 1.0), repeat=n)
            ]  # fmt: skip
            floor = smallest_attainable_p("wilcoxon", n, alternative=alternative)
            assert min(pvalues) == pytest.approx(floor, rel=1e-12), (magnitudes, alternative)


@pytest.mark.parametrize("n", SIZES)
def test_the_asymptotic_signed_rank_floor_is_the_larger_of_the_exact_and_the_approximate(
    n: int,
) -> None:
    """A claim reading the normal approximation (``analysis.stats.wilcoxon_pvalue``) is decided
    only where the exact test and the approximation can both go below alpha: the floor is the
    larger of scipy's exact p and its approximate p (no continuity correction) at the extreme
    data. The approximation's floor is below the exact one up to n = 6 (0.043 < 0.0625 at 5),
    above it from n = 7 (0.0117 > 0.0078 at 8)."""
    for alternative in ALTERNATIVES:
        data = _extreme(n, alternative)
        exact = scipy_stats.wilcoxon(data, alternative=alternative, method="exact").pvalue
        approx = scipy_stats.wilcoxon(data, alternative=alternative, method="approx",
                                      correction=False).pvalue  # fmt: skip
        floor = smallest_attainable_p("wilcoxon", n, alternative=alternative, method="asymptotic")
        assert floor == pytest.approx(max(exact, approx), rel=1e-9)
    reported = stats.wilcoxon_pvalue(_extreme(n, "greater"), np.zeros(n))
    assert smallest_attainable_p("wilcoxon", n, method="asymptotic") == pytest.approx(
        max(reported, 2 / 2**n), rel=1e-9
    )
    assert (reported < 2 / 2**n) == (n <= 6)


@pytest.mark.parametrize("n", SIZES)
def test_the_sign_and_binomial_floors_are_scipys_smallest_binomtest_p(n: int) -> None:
    """The sign test (p0 = 1/2) and the binomial test (p0 = 0.1, 0.3, 0.8): the smallest
    ``scipy.stats.binomtest`` p over every count 0..n, per alternative — one-sided p0^n
    (``greater``) or (1 − p0)^n (``less``); two-sided min(p0, 1 − p0)^n, 2/2^n at p0 = 1/2."""
    for alternative in ALTERNATIVES:
        smallest = min(scipy_stats.binomtest(k, n, 0.5, alternative=alternative).pvalue
                       for k in range(n + 1))  # fmt: skip
        assert smallest_attainable_p("sign", n, alternative=alternative) == pytest.approx(
            smallest, rel=1e-9
        )
        for p0 in (0.1, 0.3, 0.8):
            smallest = min(scipy_stats.binomtest(k, n, p0, alternative=alternative).pvalue
                           for k in range(n + 1))  # fmt: skip
            floor = smallest_attainable_p("binomial", n, alternative=alternative, p0=p0)
            assert floor == pytest.approx(smallest, rel=1e-9), (p0, alternative)
    assert smallest_attainable_p("binomial", n, alternative="greater", p0=0.3) == pytest.approx(
        0.3**n
    )
    assert smallest_attainable_p("binomial", n, alternative="less", p0=0.3) == pytest.approx(0.7**n)
    assert smallest_attainable_p("binomial", n, p0=0.3) == pytest.approx(0.3**n)
    assert smallest_attainable_p("sign", n) == pytest.approx(2 / 2**n)


def _enumerated_law(probabilities: np.ndarray) -> np.ndarray:
    """The Poisson-binomial law by enumerating all 2^n outcomes (independent of scipy)."""
    pmf = np.zeros(len(probabilities) + 1)
    for outcome in itertools.product((0, 1), repeat=len(probabilities)):
        chosen = np.where(np.array(outcome) == 1, probabilities, 1 - probabilities)
        pmf[sum(outcome)] += np.prod(chosen)
    return pmf


@pytest.mark.parametrize("n", SIZES)
def test_the_poisson_binomial_floor_is_the_laws_least_likely_count(n: int) -> None:
    """n trials with unequal probabilities: ``greater`` ∏ p_j (scipy's ``poisson_binom`` upper
    tail at n), ``less`` ∏ (1 − p_j) (its lower tail at 0), two-sided the least likely count's
    probability plus that of counts as unlikely (the binomtest rule; by enumeration of the 2^n
    outcomes up to n = 10); with equal probabilities, the binomial test's floor."""
    probabilities = np.random.default_rng(n).uniform(0.05, 0.95, n)
    law = scipy_stats.poisson_binom(probabilities)
    floor = {
        a: smallest_attainable_p("poisson-binomial", n, alternative=a, probabilities=probabilities)
        for a in ALTERNATIVES
    }
    assert floor["greater"] == pytest.approx(law.sf(n - 1), rel=1e-9)
    assert floor["greater"] == pytest.approx(np.prod(probabilities), rel=1e-9)
    assert floor["less"] == pytest.approx(law.cdf(0), rel=1e-9)
    if n <= 10:
        pmf = _enumerated_law(probabilities)
        two_sided = min(pmf[pmf <= value * (1 + 1e-7)].sum() for value in pmf)
        assert floor["two-sided"] == pytest.approx(two_sided, rel=1e-9)
    for alternative in ALTERNATIVES:
        equal = smallest_attainable_p("poisson-binomial", n, alternative=alternative,
                                      probabilities=[0.3] * n)  # fmt: skip
        assert equal == pytest.approx(
            smallest_attainable_p("binomial", n, alternative=alternative, p0=0.3), rel=1e-9
        )


@pytest.mark.parametrize("n", range(0, 26))
def test_the_pb_floor_is_one_minus_the_largest_posterior(n: int) -> None:
    """The PB test's "p" is 1 − Pr(A ≻ B); its floor, every per-dataset probability 1, is
    Beta(n + 1, 1)'s mass below 1/2 = 1/2^(n+1) (uniform prior) — ``pb_probability`` of all
    ones — and random per-dataset probabilities never go below it."""
    floor = smallest_attainable_p("pb", n)
    assert floor == pytest.approx(1 - bayes_comparison.pb_probability(np.ones(n)), abs=1e-12)
    assert floor == pytest.approx(0.5 ** (n + 1))
    prior = (2.0, 3.0)
    assert smallest_attainable_p("pb", n, prior=prior) == pytest.approx(
        1 - bayes_comparison.pb_probability(np.ones(n), prior), abs=1e-12
    )
    rng = np.random.default_rng(n)
    for _ in range(5):
        assert 1 - bayes_comparison.pb_probability(rng.uniform(size=n)) >= floor - 1e-12


@pytest.mark.parametrize("k", range(3, 7))
def test_the_friedman_floor_is_the_exact_laws_and_scipys_asymptotic_at_the_extreme_ranking(
    k: int,
) -> None:
    """Every block ranking the k methods alike, the largest statistic n(k − 1): exactly, k! of
    the (k!)^n equally likely rankings, (k!)^(1−n) (by enumeration for k = 3, n ≤ 4); the
    reports' p (``analysis.stats.friedman``) is scipy's ``friedmanchisquare``, χ²'s tail at
    n(k − 1); ``method="asymptotic"`` takes the larger of the two."""
    for n in range(2, 26):
        blocks = np.tile(np.arange(1.0, k + 1), (n, 1))
        asymptotic = scipy_stats.friedmanchisquare(*blocks.T).pvalue
        assert stats.friedman(pd.DataFrame(blocks)).pvalue == pytest.approx(asymptotic)
        assert asymptotic == pytest.approx(scipy_stats.chi2.sf(n * (k - 1), k - 1))
        exact = float(math.factorial(k)) ** (1 - n)
        assert smallest_attainable_p("friedman", n, k) == pytest.approx(exact, rel=1e-12)
        assert smallest_attainable_p("friedman", n, k, method="asymptotic") == pytest.approx(
            max(exact, asymptotic), rel=1e-9
        )
    if k == 3:
        orders = list(itertools.permutations(range(1, 4)))
        for n in range(2, 5):
            sums = [np.sum(np.sum(b, axis=0) ** 2) for b in itertools.product(orders, repeat=n)]
            share = np.mean(np.isclose(sums, max(sums)))
            assert smallest_attainable_p("friedman", n, 3) == pytest.approx(share)
    # k = 4, 2 datasets: the exact floor (1/24 = 0.042) could reach 0.05, the p the reports
    # compute (0.112) never does: underpowered, the χ² bound said
    weak = power("friedman", 2, 0.05, 4, method="asymptotic")
    assert weak is not None and weak.bound == "asymptotic"
    assert "chi-square tail at n(k-1)" in str(weak)


@pytest.mark.parametrize("n", range(3, 7))
def test_the_spearman_floor_is_one_order_of_the_n_factorial(n: int) -> None:
    """ρ = 1 (or −1) is 1 of the n! equally likely orders: one-sided 1/n!, two-sided 2/n!."""
    x = np.arange(n)
    rhos = np.array([scipy_stats.spearmanr(x, order).statistic
                     for order in itertools.permutations(x)])  # fmt: skip
    assert smallest_attainable_p("spearman", n, alternative="greater") == pytest.approx(
        np.mean(rhos >= 1 - 1e-12)
    )
    assert smallest_attainable_p("spearman", n) == pytest.approx(np.mean(abs(rhos) >= 1 - 1e-12))


def test_each_one_sided_floor_is_half_the_two_sided_and_the_rule_refuses_what_a_test_lacks() -> (
    None
):
    """A one-sided floor taken for a two-sided test halves it: at n = 5, 1/32 would let a
    two-sided Wilcoxon or sign test "decide" at 0.05 where it cannot (2/32 = 0.0625)."""
    for test in ("wilcoxon", "sign"):
        assert power(test, 5, 0.05) == Underpowered(test, 5, 0.0625, 0.05)
        assert power(test, 5, 0.05, alternative="greater") is None
        assert power(test, 5, 0.05, alternative="less") is None
    assert smallest_attainable_p("wilcoxon-one-sided", 5) == 1 / 32  # the older spelling
    with pytest.raises(ValueError, match="unknown alternative"):
        smallest_attainable_p("wilcoxon", 5, alternative="larger")
    with pytest.raises(ValueError, match="one direction only"):
        smallest_attainable_p("pb", 5, alternative="less")
    with pytest.raises(ValueError, match="no one-sided form"):
        smallest_attainable_p("friedman", 5, 3, alternative="greater")
    with pytest.raises(ValueError, match="no asymptotic p"):
        smallest_attainable_p("sign", 5, method="asymptotic")
    with pytest.raises(ValueError, match="probabilities"):
        smallest_attainable_p("poisson-binomial", 3, probabilities=[0.5, 0.5])
    text = str(power("sign", 4, 0.05, alternative="greater"))
    assert text == (
        "smallest attainable p = 0.0625 >= alpha = 0.05: one-sided sign test, 1/2^n with n = 4"
    )


def test_a_condition_read_on_either_test_needs_one_that_can_decide_and_on_both_needs_both() -> None:
    """ESMBO's "significant by the PB or the sign test": 3 datasets, the PB test can reach
    Pr > 0.9 (1 − Pr down to 1/16) while the one-sided sign test cannot reach 0.05 (1/8)."""
    sign, pb = power("sign", 3, 0.05, alternative="greater"), power("pb", 3, 0.1)
    assert sign is not None and pb is None
    assert any_can_decide(pb, sign) is None
    assert all_can_decide(pb, sign) is sign
    assert any_can_decide(power("pb", 2, 0.1), power("sign", 2, 0.05)) == power("pb", 2, 0.1)


# -------------------------------------------------------------- every engine decides through it


def test_the_benchmark_and_demo_sections_give_one_floor_for_4_datasets() -> None:
    """The benchmark report's versus section and its win/loss section (the demo's) once said
    0.125 and 0.0679 for the same 4 datasets: both now say the rule's 0.125, and with 5 datasets
    (approximate p 0.043, exact floor 0.0625) no win/loss cell is marked significant."""
    from analysis.benchmark.report import versus_section
    from analysis.demo import report as demo

    written: list[pd.DataFrame] = []

    def write(frame: pd.DataFrame, *_: object) -> str:
        written.append(frame)
        return frame.to_string()

    for n in (4, 5, 6):
        base = np.linspace(10.0, 20.0, n)
        means = pd.DataFrame({"cand": base - 1.0, "base": base, "other": base + 0.5},
                             index=[f"d{i}" for i in range(n)])  # fmt: skip
        tables = {("holdout", "main"): means}
        versus = versus_section(tables, ["cand"], write)
        winloss = demo.winloss_section(tables, write)
        floor = smallest_attainable_p("wilcoxon", n, method="asymptotic")
        underpowered = floor >= 0.05
        assert (f"smallest attainable p {floor:.3g}" in versus) == underpowered, versus
        assert (f"smallest attainable p is {floor:.3g}" in winloss) == underpowered, winloss
        marked = written[-1].map(lambda cell: cell.endswith("*"))
        assert bool(marked.to_numpy().any()) == (not underpowered), winloss
        assert demo.smallest_p(n) == floor
    assert demo.smallest_p(4) == 0.125


def _esmbo_results(n: int, pb: float, sign_p: float) -> dict:
    """Every ESMBO space with ``n`` datasets, ESMBO first, and the same (Pr(a ≻ b), sign p) in
    every cell of ESMBO against another method (the reverse cells 1 − Pr and p 1)."""
    from analysis.esmbo import report as esmbo
    from analysis.esmbo.data import PAPER_ORDER, SPACES

    class Given(esmbo.SpaceResult):
        def __post_init__(self) -> None:
            cells = [
                {"row": a, "column": b, "rho": 0.5,
                 "pb": pb if a == "ESMBO" else 1 - pb if b == "ESMBO" else 0.5,
                 "sign_p": sign_p if a == "ESMBO" else 1.0 if b == "ESMBO" else 0.5,
                 "row_expected_rank": rank}
                for rank, a in enumerate(PAPER_ORDER, start=1) for b in PAPER_ORDER
            ]  # fmt: skip
            self.table, self.rank_curves = pd.DataFrame(cells), pd.DataFrame()
            self.pb_curves = pd.DataFrame({"ESMBO ≻ SMBO": np.full(30, pb)}, index=range(1, 31))

    datasets = pd.DataFrame({"dataset": [f"d{i}" for i in range(n)]})
    return {part: Given(part, datasets, pd.DataFrame(), 15) for part in SPACES}


@pytest.mark.parametrize(
    ("n", "never_beaten", "wins_on_hard"),
    [(2, "not evaluated", "not evaluated"), (3, "reproduced", "not evaluated"),
     (4, "reproduced", "not evaluated"), (5, "reproduced", "reproduced")],
)  # fmt: skip
def test_esmbo_claims_are_underpowered_exactly_where_their_tests_cannot_reach(
    n: int, never_beaten: str, wins_on_hard: str
) -> None:
    """U1 "never significantly beaten" reads the PB test (Pr > 0.9) *or* the one-sided sign test
    (p < 0.05): decided once either can reject, the PB test from 3 datasets (1 − Pr down to
    1/2^(n+1) = 1/16), not only from 5 (the sign test's 1/2^n); U4 "wins, by both tests" needs
    both, so 5 datasets."""
    from analysis.claims import run_claim
    from analysis.esmbo import report as esmbo

    by_id = {c.id: c for c in esmbo.CLAIMS}
    assert run_claim(by_id["U1"], _esmbo_results(n, 0.5, 0.5)).status == never_beaten
    record = run_claim(by_id["U4"], _esmbo_results(n, 0.99, 0.001))
    assert record.status == wins_on_hard, record.reason
    if n in (3, 4):  # the PB test could decide, the sign test cannot
        assert "one-sided sign test, 1/2^n" in record.reason


RULE_CALLS = {"power", "smallest_attainable_p"}
# the engine's wrappers that ask the rule (checked below to call it)
WRAPPERS = {"ScoreSetting", "no_significant_difference"}
# claims engines and reports that decide on a test with a floor
ENGINES = (
    "analysis/claims.py",
    "analysis/chapter3/claims.py",
    "analysis/chapter4/claims.py",
    "analysis/chapter5/claims.py",
    "analysis/esmbo/report.py",
    "analysis/hierarchical/claims.py",
    "analysis/benchmark/report.py",
    "analysis/demo/report.py",
)
# engines whose conditions rest on no test with a floor: descriptive (the surrogates study's
# medians and spreads, the learned priors' distances) or Welch's t-test per dataset (Auto-WEKA:
# a continuous statistic, p -> 0 as |t| grows for any 2 samples a side); should one of them
# read a test with a floor, the check below sends it to ENGINES
NO_FLOOR_ENGINES = (
    "analysis/surrogates/claims.py",
    "analysis/autoweka/report.py",
    "analysis/hierarchical/priors.py",
)
TESTS_WITH_A_FLOOR = {
    "wilcoxon", "wilcoxon_pvalue", "wilcoxon_pvalues", "significance_marks", "binomtest",
    "binom", "sign_test", "sign_test_matrix", "friedman", "friedmanchisquare", "spearmanr",
    "pb_probability", "comparison_table", "nemenyi_critical_difference", "ScoreSetting",
}  # fmt: skip


def _names(path: str) -> set[str]:
    """Every name and attribute ``path`` reads (calls included)."""
    tree = ast.parse((REPO / path).read_text())
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }


def test_every_claims_engine_asks_the_rule_and_every_engine_is_listed() -> None:
    """Each engine calls :func:`~analysis.power.power` or
    :func:`~analysis.power.smallest_attainable_p` (or the engine's wrappers, which do); the
    others read no test with a floor; and every module of ``analysis/`` that declares claims or
    speaks of underpowered tests is one or the other."""
    for path in ENGINES:
        assert _names(path) & (RULE_CALLS | WRAPPERS), f"{path} does not ask the power rule"
    for path in NO_FLOOR_ENGINES:
        assert not _names(path) & TESTS_WITH_A_FLOOR, f"{path} reads a test with a floor"
    tree = ast.parse((REPO / "analysis/claims.py").read_text())
    asking = {"no_significant_difference", "power", "friedman", "nemenyi"}
    wrappers = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in asking]
    for node in wrappers:
        called = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call)
                  and isinstance(c.func, ast.Name)}  # fmt: skip
        assert "power" in called, node.name
    found = set()
    for path in sorted((REPO / "analysis").rglob("*.py")):
        source = path.read_text()
        if re.search(
            r"^CLAIMS\b|\bOutcome\(|not evaluated: underpowered|smallest attainable p", source, re.M
        ):
            found.add(str(path.relative_to(REPO)))
    found.discard("analysis/power.py")
    assert found <= set(ENGINES) | set(NO_FLOOR_ENGINES), found - set(ENGINES)


# a floor computed by hand: a power of 2 or 1/2 by a count, a factorial, a tail at an extreme
FLOOR_PATTERNS = {
    "power of 2 or 1/2": r"(?<![\w.])(2|2\.0|0\.5)\s*\*\*\s*(?!\d)",
    "negative power": r"\*\*\s*\(?\s*-\s*[A-Za-z_(]",
    "numpy power of 2": r"np\.(exp2|ldexp)\(|np\.power\(\s*(2|0\.5)\b",
    "factorial": r"\bfactorial\(",
    "tail at an extreme": r"studentized_range\.sf\(|beta\.cdf\(\s*0\.5",
    "p of made-up extreme data": r"wilcoxon_pvalue\([^)]*np\.(zeros|ones|arange)",
    "a verdict built by hand": r"\bUnderpowered\(",
}


def test_no_module_but_the_power_rule_computes_a_floor() -> None:
    """Outside ``analysis/power.py`` no module of ``analysis/`` computes 2^-n, 1/n!, a tail at
    the extreme statistic or a made-up extreme data set's p, nor builds an ``Underpowered``
    itself; a function named for a floor there is a thin call of the rule."""
    offences = []
    for path in sorted((REPO / "analysis").rglob("*.py")):
        relative = str(path.relative_to(REPO))
        if relative == "analysis/power.py":
            continue
        source = path.read_text()
        for what, pattern in FLOOR_PATTERNS.items():
            for match in re.finditer(pattern, source):
                line = source.count("\n", 0, match.start()) + 1
                offences.append(f"{relative}:{line} {what}")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and re.search(
                r"smallest|floor|attainable", node.name
            ):
                called = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call)
                          and isinstance(c.func, ast.Name)}  # fmt: skip
                if not called & RULE_CALLS:
                    offences.append(f"{relative}:{node.lineno} {node.name} computes a floor")
    assert not offences, offences


@pytest.mark.parametrize(("n", "k"), [(5, 3), (10, 4), (8, 5)])
def test_the_nemenyi_floor_is_scikit_posthocs_p_of_a_method_always_first_against_one_always_last(
    n: int, k: int
) -> None:
    """Every block ranks the methods alike: the first and the last differ by k - 1 in average
    rank, the largest difference there is; scikit-posthocs' Nemenyi p of that pair."""
    import scikit_posthocs

    blocks = np.tile(np.arange(k, dtype=float), (n, 1))
    expected = scikit_posthocs.posthoc_nemenyi_friedman(blocks).iloc[0, k - 1]
    assert smallest_attainable_p("nemenyi", n, k=k) == pytest.approx(expected, rel=1e-9)


def test_a_rank_correlation_of_fewer_than_three_points_reaches_no_level() -> None:
    for n in (1, 2):  # two points are always in order: no evidence of a trend
        assert smallest_attainable_p("spearman", n) == 1.0
        assert smallest_attainable_p("spearman", n, alternative="greater") == 1.0


def test_the_asymptotic_signed_rank_floor_of_one_pair_is_the_exact_one_half() -> None:
    # one pair: the exact one-sided floor 1/2 is above the normal approximation's 1 - Phi(1)
    approximate = 1 - scipy_stats.norm.cdf(1.0)
    assert approximate < 0.5
    floor = smallest_attainable_p("wilcoxon", 1, alternative="greater", method="asymptotic")
    assert floor == pytest.approx(0.5)


def test_bad_binomial_and_poisson_binomial_inputs_are_one_line_naming_them() -> None:
    with pytest.raises(ValueError, match=r"binomial needs p0 in \[0, 1\], got 1.5"):
        smallest_attainable_p("binomial", 5, p0=1.5)
    with pytest.raises(ValueError, match="needs the trials' success probabilities"):
        smallest_attainable_p("poisson-binomial", 3)
