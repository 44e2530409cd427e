"""The claims engine: declared claims, their conditions, the status each gets, and the one power
rule every report applies.

A chapter plug-in declares its claims (:class:`Claim`: id, statement, the thesis's value, and a
function of the chapter's inputs returning an :class:`Outcome` — our value and named conditions).
:func:`run_claim` gives each a status:

* ``reproduced`` — every condition holds on our results;
* ``not reproduced`` — some condition fails (the reason names them);
* ``not evaluated`` — an input is missing (:class:`MissingInput`: a table, a method, a curve), or
  no condition fails but one cannot be decided: *underpowered* (:class:`Underpowered`: its test
  cannot reach its level with the data at hand, whatever the data; the reason says the smallest
  attainable p) or otherwise undecided (``None``).

The power rule (:mod:`analysis.power`: :func:`~analysis.power.smallest_attainable_p`,
:func:`~analysis.power.power`, re-exported here): a condition that rests on a test —
"significantly better" as much as "no significant difference" — is decided only when the most
extreme data the test could see at this n give p < alpha. Below that, "not significant" holds
whatever the methods do and "significant" fails whatever they do, so either verdict would be an
artefact of n. The Wilcoxon p-values and Friedman's p here are approximations
(:mod:`analysis.stats`), so their conditions ask the rule with ``method="asymptotic"``.

:class:`ScoreSetting` wraps one score table (datasets × methods, test error in %) with the
statistics claims read: average ranks, win rates, medians, win/loss counts, Wilcoxon p-values.
"Significantly better" = positive win/loss count and two-sided Wilcoxon p < alpha.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Generic, TypeVar

import pandas as pd

from analysis import stats
from analysis.power import TESTS as TESTS  # the power rule, re-exported for the engines
from analysis.power import Underpowered as Underpowered
from analysis.power import power as power
from analysis.power import smallest_attainable_p as smallest_attainable_p

REPRODUCED, NOT_REPRODUCED, NOT_EVALUATED = "reproduced", "not reproduced", "not evaluated"
STATUSES = (REPRODUCED, NOT_REPRODUCED, NOT_EVALUATED)
UNDERPOWERED = "underpowered"  # the reason's first word when a test cannot reach its level
UNDECIDED_NOTE = "the results cannot decide it"
# what a report says of the status, next to its tally
UNDERPOWERED_NOTE = (
    "*Not evaluated: underpowered* = a condition rests on a test that cannot reach its level "
    "with the data at hand, whatever the data (the reason gives the smallest attainable p)."
)
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


Condition = bool | Underpowered | None  # None: undecided for another reason (said by the claim)


def decided(check: Underpowered | None, holds: bool) -> bool | Underpowered:
    """``holds`` when the test can decide, else the :class:`Underpowered` that says why not."""
    return check if check is not None else bool(holds)


def all_hold(conditions: Iterable[Condition]) -> Condition:
    """Three-valued AND: False if any fails, else the first underpowered or undecided one,
    else True."""
    values = list(conditions)
    if any(_fails(v) for v in values):
        return False
    open_ones = [v for v in values if v is None or isinstance(v, Underpowered)]
    if not open_ones:
        return True
    return next((v for v in open_ones if isinstance(v, Underpowered)), None)


def _fails(holds: Condition) -> bool:
    """A decided condition that does not hold (numpy's booleans included)."""
    return holds is not None and not isinstance(holds, Underpowered) and not holds


def no_significant_difference(p_value: float, n_pairs: int, alpha: float) -> bool | Underpowered:
    """``p >= alpha`` of a two-sided Wilcoxon over ``n_pairs`` non-zero paired differences, when
    the test could have rejected; else :class:`Underpowered` (also when every difference is
    zero: n = 0, p undefined). ``p_value`` is the normal approximation's
    (:func:`analysis.stats.wilcoxon_pvalue`)."""
    return decided(power("wilcoxon", n_pairs, alpha, method="asymptotic"), not p_value < alpha)


@dataclass
class Outcome:
    """What a claim found: named conditions (all must hold), our numbers, optional statistic."""

    our_value: str
    conditions: list[tuple[str, Condition]] = field(default_factory=list)
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
        """p < alpha: the tables' mark, whatever the test's power (see :meth:`power`)."""
        return bool(self.pvalue(first, second) < self.alpha)

    def n_pairs(self, first: str, second: str) -> int:
        """The Wilcoxon test's n for the power rule: the datasets compared, 0 when the two
        methods are equal on every one (no p). The test discards zero differences, so with some
        its exact floor is higher than this n says; the rule counts the datasets, as the thesis's
        "no significant difference" between methods equal on most datasets is read."""
        self.require(first, second)
        return len(self.scores) if (self.scores[first] != self.scores[second]).any() else 0

    def power(self, first: str, second: str) -> Underpowered | None:
        """Whether the Wilcoxon test of the pair can reach alpha (:func:`power`)."""
        return power("wilcoxon", self.n_pairs(first, second), self.alpha, method="asymptotic")

    def significantly_better(self, first: str, second: str) -> bool | Underpowered:
        """Positive win/loss count and p < alpha; :class:`Underpowered` if the test cannot
        reach alpha on this table."""
        return decided(
            self.power(first, second),
            self.count(first, second) > 0 and self.significant(first, second),
        )

    def not_significantly_better(self, first: str, second: str) -> bool | Underpowered:
        """The negation of :meth:`significantly_better`, underpowered where it is."""
        better = self.significantly_better(first, second)
        return better if isinstance(better, Underpowered) else not better

    def not_significant(self, first: str, second: str) -> bool | Underpowered:
        """No significant difference (:func:`no_significant_difference`)."""
        return no_significant_difference(
            self.pvalue(first, second), self.n_pairs(first, second), self.alpha
        )

    def friedman(self) -> Outcome:
        """A claim that the Friedman test rejects equal ranks over the table's methods."""
        result = stats.friedman(self.scores)
        n, k = self.scores.shape
        return Outcome(
            f"χ² = {result.statistic:.2f} (k = {k}, N = {n}), p = {result.pvalue:.3g}",
            [
                (
                    f"Friedman p < {self.alpha}",
                    decided(
                        power("friedman", n, self.alpha, k, method="asymptotic"),
                        result.pvalue < self.alpha,
                    ),
                )
            ],
            statistic=result.statistic,
            p_value=result.pvalue,
        )

    def nemenyi(self) -> tuple[float, Underpowered | None]:
        """The Nemenyi critical difference of the table's k methods over its N datasets, and
        whether any difference of average ranks (at most k − 1) could exceed it."""
        n, k = self.scores.shape
        cd = stats.nemenyi_critical_difference(k, n, self.alpha)
        return cd, power("nemenyi", n, self.alpha, k)

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
        conditions: list[tuple[str, Condition]] = [
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
    undecided_note: str = UNDECIDED_NOTE  # why an undecided (None) condition leaves it open


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
    conditions: list[tuple[str, Condition]], undecided_note: str = UNDECIDED_NOTE
) -> tuple[str, str]:
    """A failed condition decides (not reproduced); else an underpowered or undecided one leaves
    the claim open (not evaluated: underpowered names each test's smallest attainable p)."""
    failed = [name for name, holds in conditions if _fails(holds)]
    weak: dict[str, list[str]] = {}
    for name, holds in conditions:
        if isinstance(holds, Underpowered):
            weak.setdefault(str(holds), []).append(name)
    undecided = [name for name, holds in conditions if holds is None]
    if failed:
        return NOT_REPRODUCED, "fails: " + "; ".join(failed)
    if weak:
        return NOT_EVALUATED, "; ".join(
            f"{UNDERPOWERED} ({why}): {', '.join(names)}" for why, names in weak.items()
        ) + (f"; cannot decide: {'; '.join(undecided)} ({undecided_note})" if undecided else "")
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
        "status": [
            f"**{s}**{': ' if r.startswith(UNDERPOWERED) else ' — '}{r}"
            for s, r in zip(frame["status"], frame["reason"], strict=True)
        ],
    }
    counts = frame["status"].value_counts()
    tally = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
    return pd.DataFrame(columns, index=frame.index).rename_axis("claim"), tally
