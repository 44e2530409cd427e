"""The claims engine: declared claims, their conditions, and the status each gets.

A chapter plug-in declares its claims (:class:`Claim`: id, statement, the thesis's value, and a
function of the chapter's inputs returning an :class:`Outcome` — our value and named conditions).
:func:`run_claim` gives each a status:

* ``reproduced`` — every condition holds on our results;
* ``not reproduced`` — some condition fails (the reason names them);
* ``not evaluated`` — an input is missing (:class:`MissingInput`: a table, a method, a curve) or
  no condition fails but one is undecided (``None``), e.g. a "no significant difference" on
  fewer than :data:`MIN_DATASETS_FOR_NO_DIFFERENCE` datasets or with an undefined p-value.

:class:`ScoreSetting` wraps one score table (datasets × methods, test error in %) with the
statistics claims read: average ranks, win rates, medians, win/loss counts, Wilcoxon p-values.
"Significantly better" = positive win/loss count and two-sided Wilcoxon p < alpha.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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


# A "no significant difference" condition is only evidence when the test *could* have found one.
# The two-sided exact Wilcoxon signed-rank test's smallest p-value with n non-zero pairs is
# 2 / 2**n (every difference of the same sign): 0.0625 for n = 5, 0.03125 for n = 6. With fewer
# than 6 datasets no result can be significant at alpha = 0.05, so "not significant" would hold
# whatever the methods do; such a condition is undecided (None) and the claim "not evaluated".
MIN_DATASETS_FOR_NO_DIFFERENCE = 6
UNDECIDED_NOTE = (
    f"a 'no significant difference' needs at least {MIN_DATASETS_FOR_NO_DIFFERENCE} datasets "
    "(the two-sided Wilcoxon cannot reject with fewer: min p = 2/2^n) and a finite p"
)


def no_significant_difference(p_value: float, n_datasets: int, alpha: float) -> bool | None:
    """``p >= alpha`` when the test could have rejected; None (undecided) with fewer than
    :data:`MIN_DATASETS_FOR_NO_DIFFERENCE` datasets or an undefined p (every difference zero)."""
    if n_datasets < MIN_DATASETS_FOR_NO_DIFFERENCE or not np.isfinite(p_value):
        return None
    return not p_value < alpha


@dataclass
class Outcome:
    """What a claim found: named conditions (all must hold), our numbers, optional statistic."""

    our_value: str
    conditions: list[tuple[str, bool | None]] = field(default_factory=list)  # None: undecided
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

    def not_significant(self, first: str, second: str) -> bool | None:
        """No significant difference (:func:`no_significant_difference`; None: undecided)."""
        return no_significant_difference(self.pvalue(first, second), len(self.scores), self.alpha)

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

    def pairwise(
        self,
        better: tuple[tuple[str, str], ...] = (),
        same: tuple[tuple[str, str], ...] = (),
    ) -> Outcome:
        """A claim that each ``better`` pair (a, b) has a significantly better than b and each
        ``same`` pair is not significantly different, with the pairs as our value."""
        conditions: list[tuple[str, bool | None]] = [
            (f"{a} significantly better than {b}", self.significantly_better(a, b))
            for a, b in better
        ]
        conditions += [(f"{a} vs {b} not significant", self.not_significant(a, b)) for a, b in same]
        return Outcome("; ".join(self.pair(a, b) for a, b in (*better, *same)), conditions)


@dataclass(frozen=True)
class Claim(Generic[InputsT]):
    """A declared claim: thesis statement and value, and the function that evaluates it."""

    id: str
    statement: str
    thesis_value: str
    evaluate: Callable[[InputsT], Outcome]
    undecided_note: str = UNDECIDED_NOTE  # why an undecided condition leaves the claim open


def run_claim(claim: Claim[InputsT], inputs: InputsT) -> ClaimRecord:
    """Evaluate ``claim``: reproduced when every condition holds, not evaluated when an input is
    missing or the results cannot decide a condition, not reproduced otherwise."""
    header = {"id": claim.id, "statement": claim.statement, "thesis_value": claim.thesis_value}
    try:
        outcome = claim.evaluate(inputs)
    except MissingInput as missing:
        nan = float("nan")
        return ClaimRecord(
            **header,
            our_value="",
            statistic=nan,
            p_value=nan,
            status=NOT_EVALUATED,
            reason=f"missing input: {missing}",
        )
    status, reason = _status(outcome.conditions, claim.undecided_note)
    return ClaimRecord(
        **header,
        our_value=outcome.our_value,
        statistic=float(outcome.statistic),
        p_value=float(outcome.p_value),
        status=status,
        reason=reason,
    )


def _status(
    conditions: list[tuple[str, bool | None]], undecided_note: str = UNDECIDED_NOTE
) -> tuple[str, str]:
    """A failed condition decides (not reproduced); else an undecided one leaves it open."""
    failed = [name for name, holds in conditions if holds is not None and not holds]
    undecided = [name for name, holds in conditions if holds is None]
    if failed:
        return NOT_REPRODUCED, "fails: " + "; ".join(failed)
    if undecided:
        return NOT_EVALUATED, f"cannot decide: {'; '.join(undecided)} ({undecided_note})"
    return REPRODUCED, "all conditions hold"


def records_frame(records: Iterable[ClaimRecord]) -> pd.DataFrame:
    """Claim records as a DataFrame, one row per claim, indexed by claim id."""
    return pd.DataFrame([asdict(r) for r in records]).set_index("id")


def claims_display(
    frame: pd.DataFrame, extra: Mapping[str, Sequence[str]] | None = None
) -> tuple[pd.DataFrame, str]:
    """A claims table (:func:`records_frame`) as a report shows it — statement, thesis value,
    our value, ``extra`` columns, status with its reason — and the tally of statuses."""
    columns = {
        "statement": frame["statement"],
        "thesis value": frame["thesis_value"],
        "our value": frame["our_value"].replace("", "–"),
        **(extra or {}),
        "status": [f"**{s}** — {r}" for s, r in zip(frame["status"], frame["reason"], strict=True)],
    }
    counts = frame["status"].value_counts()
    tally = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
    return pd.DataFrame(columns, index=frame.index).rename_axis("claim"), tally
