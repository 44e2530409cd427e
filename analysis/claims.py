"""The claims engine: declared claims, their conditions, and the status each gets.

A chapter plug-in declares its claims (:class:`Claim`: id, statement, the thesis's value, and a
function of the chapter's inputs returning an :class:`Outcome` — our value and named conditions).
:func:`run_claim` gives each a status:

* ``reproduced`` — every condition holds on our results;
* ``not reproduced`` — some condition fails (the reason names them);
* ``not evaluated`` — an input is missing (:class:`MissingInput`: a table, a method, a curve) or
  the results cannot decide a condition (:class:`Inconclusive`), e.g. a "no significant
  difference" condition on fewer than :data:`MIN_DATASETS_FOR_NO_DIFFERENCE` datasets.

:class:`ScoreSetting` wraps one score table (datasets × methods, test error in %) with the
statistics claims read: average ranks, win rates, medians, win/loss counts, Wilcoxon p-values.
"Significantly better" = positive win/loss count and two-sided Wilcoxon p < alpha.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

from analysis import stats

REPRODUCED, NOT_REPRODUCED, NOT_EVALUATED = "reproduced", "not reproduced", "not evaluated"
STATUSES = (REPRODUCED, NOT_REPRODUCED, NOT_EVALUATED)
InputsT = TypeVar("InputsT")


@dataclass(frozen=True)
class ClaimRecord:
    """Outcome of one claim; ``thesis_value`` is the thesis's number, ``our_value`` ours."""

    id: str
    statement: str
    thesis_value: str
    our_value: str
    statistic: float
    p_value: float
    status: str
    reason: str


class MissingInput(Exception):
    """A table, a method or an auxiliary input that a claim needs was not given."""


class Inconclusive(MissingInput):
    """The results cannot decide a condition (too few datasets, an undefined p-value)."""


# A "no significant difference" condition is only evidence when the test *could* have found one.
# The two-sided exact Wilcoxon signed-rank test's smallest p-value with n non-zero pairs is
# 2 / 2**n (every difference of the same sign): 0.0625 for n = 5, 0.03125 for n = 6. With fewer
# than 6 datasets no result can be significant at alpha = 0.05, so "not significant" would hold
# whatever the methods do; such a condition makes the claim "not evaluated" instead.
MIN_DATASETS_FOR_NO_DIFFERENCE = 6


def check_no_difference_testable(p_value: float, n_datasets: int, label: str) -> None:
    """Raise :class:`Inconclusive` unless a "no significant difference" reading is evidence.

    Needs ``n_datasets >= MIN_DATASETS_FOR_NO_DIFFERENCE`` and a finite ``p_value`` (NaN when
    every paired difference is zero, or the test could not run).
    """
    if n_datasets < MIN_DATASETS_FOR_NO_DIFFERENCE:
        raise Inconclusive(
            f"{label}: {n_datasets} datasets, a Wilcoxon test needs at least "
            f"{MIN_DATASETS_FOR_NO_DIFFERENCE} to be able to reject (min two-sided p = 2/2^n)"
        )
    if not np.isfinite(p_value):
        raise Inconclusive(f"{label}: the Wilcoxon p-value is undefined (no non-zero difference)")


@dataclass
class Outcome:
    """What a claim found: named conditions (all must hold), our numbers, optional statistic."""

    our_value: str
    conditions: list[tuple[str, bool]] = field(default_factory=list)
    statistic: float = float("nan")
    p_value: float = float("nan")


class ScoreSetting:
    """Statistics of one score table, computed on first use; unknown methods raise MissingInput."""

    def __init__(self, scores: pd.DataFrame, label: str, alpha: float) -> None:
        try:
            self.scores = stats.check_scores(scores.dropna(axis=1, how="all"))
        except (TypeError, ValueError) as error:
            raise MissingInput(f"{label} is not a complete score table: {error}") from error
        self.label, self.alpha = label, alpha

    def require(self, *methods: str) -> None:
        absent = [m for m in methods if m not in self.scores.columns]
        if absent:
            raise MissingInput(f"{self.label} lacks methods {absent}")

    @cached_property
    def ranks(self) -> pd.Series:
        return stats.average_ranks(self.scores)

    @cached_property
    def rates(self) -> pd.Series:
        return stats.win_rates(self.scores)

    @cached_property
    def medians(self) -> pd.Series:
        return stats.median_iqr(self.scores)["median"]

    @cached_property
    def counts(self) -> pd.DataFrame:
        return stats.winloss_counts(self.scores)

    @cached_property
    def pvalues(self) -> pd.DataFrame:
        return stats.wilcoxon_pvalues(self.scores)

    def rank(self, method: str) -> float:
        self.require(method)
        return float(self.ranks[method])

    def pvalue(self, first: str, second: str) -> float:
        self.require(first, second)
        return float(self.pvalues.loc[first, second])

    def count(self, first: str, second: str) -> int:
        self.require(first, second)
        return int(self.counts.loc[first, second])

    def significant(self, first: str, second: str) -> bool:
        return bool(self.pvalue(first, second) < self.alpha)

    def significantly_better(self, first: str, second: str) -> bool:
        return self.count(first, second) > 0 and self.significant(first, second)

    def not_significant(self, first: str, second: str) -> bool:
        """No significant difference; :class:`Inconclusive` when the test could not find one."""
        p_value = self.pvalue(first, second)
        label = f"{first} vs {second} [{self.label}]"
        check_no_difference_testable(p_value, len(self.scores), label)
        return not p_value < self.alpha

    def pair(self, first: str, second: str) -> str:
        """``first`` vs ``second`` in the thesis's notation: count, ``*`` if significant, p."""
        mark = "*" if self.significant(first, second) else ""
        return (
            f"{first} vs {second} {self.count(first, second):+d}{mark} "
            f"(p={self.pvalue(first, second):.3g})"
        )

    def best_by_rank(self, method: str) -> bool:
        """``method`` has the strictly lowest average rank (hence the highest win rate)."""
        return self.rank(method) < self.ranks.drop(method).min()


@dataclass(frozen=True)
class Claim(Generic[InputsT]):
    """A declared claim: thesis statement and value, and the function that evaluates it."""

    id: str
    statement: str
    thesis_value: str
    evaluate: Callable[[InputsT], Outcome]


def run_claim(claim: Claim[InputsT], inputs: InputsT) -> ClaimRecord:
    """Evaluate ``claim``: reproduced when every condition holds, not evaluated when an input is
    missing or the results cannot decide a condition, not reproduced otherwise."""
    header = {"id": claim.id, "statement": claim.statement, "thesis_value": claim.thesis_value}
    try:
        outcome = claim.evaluate(inputs)
    except MissingInput as missing:
        nan = float("nan")
        kind = "cannot decide" if isinstance(missing, Inconclusive) else "missing input"
        return ClaimRecord(
            **header,
            our_value="",
            statistic=nan,
            p_value=nan,
            status=NOT_EVALUATED,
            reason=f"{kind}: {missing}",
        )
    failed = [name for name, holds in outcome.conditions if not holds]
    reason = "fails: " + "; ".join(failed) if failed else "all conditions hold"
    return ClaimRecord(
        **header,
        our_value=outcome.our_value,
        statistic=float(outcome.statistic),
        p_value=float(outcome.p_value),
        status=NOT_REPRODUCED if failed else REPRODUCED,
        reason=reason,
    )


def records_frame(records: Iterable[ClaimRecord]) -> pd.DataFrame:
    """Claim records as a DataFrame, one row per claim, indexed by claim id."""
    return pd.DataFrame([asdict(r) for r in records]).set_index("id")
