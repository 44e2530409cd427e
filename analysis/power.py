"""The power rule: the smallest p-value each test the claims use can give with the data at hand,
and whether a claim that rests on it can be decided.

A condition that rests on a test — "significantly better" as much as "no significant difference"
— is decided only when the most extreme data the test could see give p < alpha. Below that, "not
significant" holds whatever the methods do and "significant" fails whatever they do, so either
verdict would be an artefact of n: the condition is *underpowered* (:class:`Underpowered`).
Every claims engine and report asks :func:`power` (or reads :func:`smallest_attainable_p`); no
other module computes a floor (``tests/test_power_rule.py`` checks both, and each floor against
scipy's tests).

Each test's floor, with n observations (``alternative`` one of :data:`ALTERNATIVES`):

* ``wilcoxon`` (signed-rank, n non-zero paired differences): all n of one sign, probability
  1/2^n under H0 — one-sided 1/2^n, two-sided 2/2^n (capped at 1): scipy's exact p of that data.
  Ties among the |differences| leave it so (only all-positive signs reach the largest T+).
* ``sign`` (n non-tied pairs) and ``binomial`` (n trials, success probability ``p0``): the
  binomial test of all n successes or none — ``greater`` p0^n, ``less`` (1 − p0)^n,
  ``two-sided`` the least likely count's probability plus that of every count as unlikely (scipy's
  ``binomtest`` rule): min(p0, 1 − p0)^n, twice that when p0 = 1/2. ``sign`` is p0 = 1/2.
* ``poisson-binomial`` (n independent trials with success probabilities ``probabilities``, the
  count tested against that law): ``greater`` ∏ p_j, ``less`` ∏ (1 − p_j), ``two-sided`` as the
  binomial's, on the Poisson-binomial law.
* ``pb`` (the Bayesian PB test of :mod:`analysis.bayes_comparison` over n datasets, a Beta
  ``prior``): its "p" is 1 − Pr(A ≻ B), at best Beta(n + a, b)'s mass below 1/2 (every
  per-dataset probability 1); a report's level 0.9 on Pr(A ≻ B) is alpha = 0.1 here.
* ``spearman`` (n points): a perfectly monotone sequence, 1 of the n! equally likely orders —
  one-sided 1/n!, two-sided 2/n! (1 below n = 3).
* ``friedman`` (n blocks, k methods): every block ranks the k methods alike. Exact
  (permutation) law: k! of the (k!)^n equally likely rankings, (k!)^(1−n). The reports compute
  the asymptotic p (``analysis.stats.friedman``, as ``scipy.stats.friedmanchisquare``): the
  largest statistic, n(k − 1), read on χ² with k − 1 degrees of freedom.
* ``nemenyi`` (n datasets, k methods): the largest difference of average ranks, k − 1, read on
  the studentized range distribution the critical difference uses.

``method="exact"`` gives the exact null law's floor. ``method="asymptotic"`` is for a claim that
reads an approximate p (Wilcoxon's normal approximation without continuity correction, as
``analysis.stats.wilcoxon_pvalue``; Friedman's χ²): its floor is the larger of the exact one and
the approximation's at the most extreme data — below the exact floor an approximate p is an
artefact of the approximation (0.043 for a two-sided Wilcoxon of 5 pairs, whose exact floor is
0.0625), and below the approximation's floor the p the claim reads can never go (0.0117 for 8
pairs, where the exact floor is 0.0078).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

ALTERNATIVES = ("two-sided", "less", "greater")
METHODS = ("exact", "asymptotic")
# test -> what the reason calls it; the floor rule of each alternative (two-sided, one-sided)
TESTS = {
    "wilcoxon": ("Wilcoxon signed-rank", "2/2^n", "1/2^n"),
    "sign": ("sign test", "2/2^n", "1/2^n"),
    "binomial": ("binomial test", "least likely count", "p0^n or (1-p0)^n"),
    "poisson-binomial": ("Poisson-binomial test", "least likely count", "prod p_j or (1-p_j)"),
    "pb": ("PB test, 1 - Pr(A > B)", "Beta(n + a, b) mass below 1/2", ""),
    "spearman": ("Spearman rank correlation", "2/n!", "1/n!"),
    "friedman": ("Friedman", "(k!)^(1-n)", ""),
    "nemenyi": ("Nemenyi", "rank difference k-1", ""),
}
ONE_SIDED_ONLY = {"pb"}  # the test has one direction (A better than B)
TWO_SIDED_ONLY = {"friedman", "nemenyi"}  # no direction to choose
ASYMPTOTIC_RULES = {
    "wilcoxon": "normal approximation at T = n(n+1)/2",
    "friedman": "chi-square tail at n(k-1)",
}
# the older spelling of a one-sided test: "wilcoxon-one-sided" = "wilcoxon", alternative "greater"
ONE_SIDED_NAMES = {"wilcoxon-one-sided": "wilcoxon", "sign-one-sided": "sign"}
RELATIVE_TOLERANCE = 1 + 1e-7  # scipy.stats.binomtest's: counts as likely as the observed one


def _normalise(test: str, alternative: str, method: str) -> tuple[str, str]:
    """The test's name and alternative after the older one-sided spellings; refuses unknown
    tests, alternatives and methods, and an alternative or a method a test does not have."""
    if test in ONE_SIDED_NAMES:
        test, alternative = ONE_SIDED_NAMES[test], "greater"
    if test not in TESTS:
        valid = ", ".join([*TESTS, *ONE_SIDED_NAMES])
        raise ValueError(f"unknown test {test!r}; valid: {valid}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"unknown alternative {alternative!r}; valid: {', '.join(ALTERNATIVES)}")
    if test in ONE_SIDED_ONLY:
        if alternative == "less":
            raise ValueError(f"{test} tests one direction only (A better than B), got 'less'")
        alternative = "greater"
    if test in TWO_SIDED_ONLY and alternative != "two-sided":
        raise ValueError(f"{test} has no one-sided form, got alternative={alternative!r}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if method == "asymptotic" and test not in ASYMPTOTIC_RULES:
        raise ValueError(f"{test}: no asymptotic p is computed here; use method='exact'")
    return test, alternative


def _least_likely(pmf: np.ndarray, alternative: str) -> float:
    """The smallest p of a test of a count with null law ``pmf`` (counts 0..n): the upper tail
    at n (``greater``), the lower at 0 (``less``), or, two-sided, the least likely count's
    probability plus that of every count as unlikely (``scipy.stats.binomtest``'s rule)."""
    if alternative == "greater":
        return float(pmf[-1])
    if alternative == "less":
        return float(pmf[0])
    rarest = pmf.min()
    return float(min(1.0, pmf[pmf <= rarest * RELATIVE_TOLERANCE].sum()))


def _exact_floor(
    test: str,
    n: int,
    k: int | None,
    alternative: str,
    p0: float,
    probabilities: np.ndarray | None,
    prior: tuple[float, float],
) -> float:
    sides = 2.0 if alternative == "two-sided" else 1.0
    if test == "wilcoxon":
        return min(1.0, sides / 2.0**n)
    if test in ("sign", "binomial", "poisson-binomial"):
        if n == 0:
            return 1.0
        if test == "poisson-binomial":
            assert probabilities is not None
            law = scipy_stats.poisson_binom(probabilities)
            none, every = float(np.prod(1 - probabilities)), float(np.prod(probabilities))
        else:
            success = 0.5 if test == "sign" else p0
            law = scipy_stats.binom(n, success)
            none, every = (1 - success) ** n, success**n
        pmf = law.pmf(np.arange(n + 1))
        pmf[0], pmf[-1] = none, every  # the extremes exactly (a product, not a rounded pmf)
        return _least_likely(pmf, alternative)
    if test == "pb":
        return float(scipy_stats.beta.cdf(0.5, n + prior[0], prior[1]))
    if test == "spearman":
        return 1.0 if n < 3 else min(1.0, sides / math.factorial(n))
    assert k is not None
    if n < 1:
        return 1.0
    if test == "friedman":
        return float(math.factorial(k) ** (1 - n))
    q = (k - 1) * math.sqrt(2.0) / math.sqrt(k * (k + 1) / (6.0 * n))
    return float(scipy_stats.studentized_range.sf(q, k, np.inf))


def _asymptotic_floor(test: str, n: int, k: int | None, alternative: str) -> float:
    """The approximate p of the most extreme data (1 with no observation)."""
    if n < 1:
        return 1.0
    if test == "wilcoxon":  # T+ = n(n+1)/2 on N(n(n+1)/4, n(n+1)(2n+1)/24), no correction
        z = (n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        sides = 2.0 if alternative == "two-sided" else 1.0
        return float(min(1.0, sides * scipy_stats.norm.sf(z)))
    assert k is not None
    return float(scipy_stats.chi2.sf(n * (k - 1), k - 1))


def _floor_and_rule(
    test: str,
    n: int,
    k: int | None,
    alternative: str,
    method: str,
    p0: float,
    probabilities: Sequence[float] | None,
    prior: tuple[float, float],
) -> tuple[float, str, str]:
    """The floor, the test's normalised name and which bound gives it ("exact" or
    "asymptotic")."""
    test, alternative = _normalise(test, alternative, method)
    if test in ("friedman", "nemenyi") and (k is None or k < 2):
        raise ValueError(f"{test} needs n >= 0 observations and k >= 2 methods, got n={n}, k={k}")
    if test == "poisson-binomial":
        if probabilities is None:
            raise ValueError("poisson-binomial needs the trials' success probabilities")
        weights = np.asarray(probabilities, dtype=float)
        if weights.ndim != 1 or len(weights) != n or np.any((weights < 0) | (weights > 1)):
            raise ValueError(f"poisson-binomial needs n = {n} probabilities in [0, 1]")
    else:
        weights = None
    if test == "binomial" and not 0 <= p0 <= 1:
        raise ValueError(f"binomial needs p0 in [0, 1], got {p0}")
    if n < 0:
        raise ValueError(f"{test} needs n >= 0 observations, got n={n}")
    exact = _exact_floor(test, n, k, alternative, p0, weights, prior)
    if method == "asymptotic":
        approximate = _asymptotic_floor(test, n, k, alternative)
        if approximate > exact:
            return approximate, test, "asymptotic"
    return exact, test, "exact"


def smallest_attainable_p(
    test: str,
    n: int,
    k: int | None = None,
    *,
    alternative: str = "two-sided",
    method: str = "exact",
    p0: float = 0.5,
    probabilities: Sequence[float] | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
) -> float:
    """The smallest p-value ``test`` can give with ``n`` observations (the non-zero pairs of a
    signed-rank test, the non-tied pairs of a sign test, the trials of a binomial or
    Poisson-binomial test, the datasets of the PB test, the points of a correlation, the datasets
    of Friedman or Nemenyi over ``k`` methods), whatever their values, for ``alternative`` and
    ``method`` (the module docstring); 1 when n is too small for any evidence.

    ``p0``: the binomial test's success probability; ``probabilities``: the Poisson-binomial
    test's, one per trial; ``prior``: the PB test's Beta prior (a, b)."""
    return _floor_and_rule(test, n, k, alternative, method, p0, probabilities, prior)[0]


@dataclass(frozen=True)
class Underpowered:
    """A condition whose test cannot reach its level with the data at hand: the most extreme
    data would give ``smallest_p`` >= ``alpha``. Neither true nor false (``bool()`` raises).
    ``bound`` says which floor gave ``smallest_p``: the exact law's or the approximation's."""

    test: str
    n: int
    smallest_p: float
    alpha: float
    k: int | None = None
    alternative: str = "two-sided"
    bound: str = "exact"
    parameters: str = field(default="", compare=False)  # p0 or prior, as the reason says them

    def __bool__(self) -> bool:
        raise TypeError(f"an underpowered condition is undecided, not a truth value: {self}")

    def __str__(self) -> str:
        test, alternative = _normalise(self.test, self.alternative, "exact")
        name, two_sided, one_sided = TESTS[test]
        if test in ONE_SIDED_ONLY or test in TWO_SIDED_ONLY:
            side = ""
        else:
            side = "two-sided " if alternative == "two-sided" else "one-sided "
        rule = two_sided if alternative == "two-sided" or not one_sided else one_sided
        if self.bound == "asymptotic":
            rule = ASYMPTOTIC_RULES[test]
        size = f"n = {self.n}" + (f", k = {self.k}" if self.k is not None else "")
        extra = f", {self.parameters}" if self.parameters else ""
        return (
            f"smallest attainable p = {self.smallest_p:.3g} >= alpha = {self.alpha:g}: "
            f"{side}{name}, {rule} with {size}{extra}"
        )


def power(
    test: str,
    n: int,
    alpha: float,
    k: int | None = None,
    *,
    alternative: str = "two-sided",
    method: str = "exact",
    p0: float = 0.5,
    probabilities: Sequence[float] | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
) -> Underpowered | None:
    """:class:`Underpowered` when ``test`` cannot give p < ``alpha`` at this n (and k, and the
    other arguments of :func:`smallest_attainable_p`), else None (the test can decide)."""
    smallest, name, bound = _floor_and_rule(
        test, n, k, alternative, method, p0, probabilities, prior
    )
    if smallest < alpha:
        return None
    _, alternative = _normalise(test, alternative, method)
    parameters = ""
    if name == "binomial":
        parameters = f"p0 = {p0:g}"
    elif name == "pb" and tuple(prior) != (1.0, 1.0):
        parameters = f"Beta({prior[0]:g}, {prior[1]:g}) prior"
    return Underpowered(name, n, smallest, alpha, k, alternative, bound, parameters)


def any_can_decide(*checks: Underpowered | None) -> Underpowered | None:
    """A condition that holds when *any* of several tests rejects ("significant by the PB or
    the sign test") is decided when one of them can reach its level: None if any check is None,
    else the first :class:`Underpowered`."""
    return None if any(c is None for c in checks) else next(iter(checks), None)


def all_can_decide(*checks: Underpowered | None) -> Underpowered | None:
    """A condition that needs *every* test to reject ("significant by both tests") is decided
    only when each can reach its level: the first :class:`Underpowered`, else None."""
    return next((c for c in checks if c is not None), None)
