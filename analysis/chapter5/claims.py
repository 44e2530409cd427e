"""The Chapter-5 claims (thesis §5.5.1, Tables 5.2–5.3, Figs 5.6–5.9; C5.1–C5.11 of the claims
specification) on the claims engine (``analysis.claims``).

Inputs (:class:`Inputs`): the complete score table of the thesis's methods (datasets × methods,
test error in % averaged over repetitions, ``analysis.chapter5.data.thesis_scores``); for C5.9
the per-dataset marks "significantly worse than the dataset's best" (Wilcoxon over repetitions)
and the number of paired repetitions; for C5.10 the classifiers GP-cond-ls chose; for C5.11 the
average-rank-vs-iteration curve on test error (Fig 5.7, right). Ranks, Friedman and Nemenyi are
among the thesis's methods of the table, as in the thesis.

Statuses as Chapter 3's: *reproduced* when every condition holds, *not reproduced* naming the
failing ones, *not evaluated* when an input or method is missing or a test cannot reach alpha
with the data at hand (*underpowered*, the engine's rule ``analysis.power.power``: the datasets
of a Wilcoxon, Friedman or Nemenyi test, the repetitions of C5.9's per-dataset Wilcoxon tests).
"Significantly better" = a positive win/loss count and a two-sided
Wilcoxon p < alpha across datasets (``analysis.claims.ScoreSetting``).

Readings where the claim leaves room (each visible in the record's conditions): "best",
"second", "worst", "most" are strict; C5.7 compares differences of average ranks with the
Nemenyi CD of the table's k methods and N datasets ("by more than the CD" = strictly greater);
C5.10 asks that random forest and RBF SVM be the two most frequent choices, the third strictly
less frequent; C5.11 compares ranks at a quarter of the budget and at the budget (iterations 50
and 200 in the thesis) [decide], RS "does not improve" = its rank at the budget is not lower.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from analysis.claims import (
    Claim,
    ClaimRecord,
    Condition,
    MissingInput,
    Outcome,
    ScoreSetting,
    decided,
    power,
    records_frame,
    run_claim,
)

BEST = "GP-cond-ls"
OTHERS = (
    "RS", "Spearmint", "SMAC", "CMA", "GP-matern-noimpute", "GP-matern", "GP-cond",
    "GP-laplace", "GP-matern-ls", "GP-laplace-ls",
)  # fmt: skip
TOP_CLASSIFIERS = ("random_forest", "svm_rbf")


@dataclass
class Inputs:
    """The claims' inputs; each claim raises MissingInput for what it needs and lacks."""

    scores: pd.DataFrame | None
    alpha: float = 0.05
    worse_marks: pd.DataFrame | None = None  # dataset × method, per-dataset Wilcoxon
    repetitions: int = 0  # fewest paired repetitions behind ``worse_marks``
    choices: pd.DataFrame | None = None  # dataset × classifier counts of GP-cond-ls
    test_ranks: pd.DataFrame | None = None  # iteration × method average rank (Fig 5.7 right)
    budget: int | None = None

    def __post_init__(self) -> None:
        self._setting: ScoreSetting | None = None

    def setting(self, *methods: str) -> ScoreSetting:
        if self.scores is None or self.scores.empty:
            raise MissingInput("no complete score table of the thesis's methods")
        if self._setting is None:
            self._setting = ScoreSetting(self.scores, "Table 5.2", self.alpha)
        self._setting.require(*methods)
        return self._setting


def _ranks_text(s: ScoreSetting, methods: tuple[str, ...]) -> str:
    return ", ".join(f"{m} {s.rank(m):.2f}" for m in methods)


def _c5_1(inputs: Inputs) -> Outcome:
    s = inputs.setting(BEST, "GP-matern-ls")
    order = list(s.ranks.sort_values(kind="stable").index)
    return Outcome(
        _ranks_text(s, (BEST, "GP-matern-ls")) + f"; order {', '.join(order[:3])}, …",
        [
            (f"{BEST} has the best rank", s.best_by_rank(BEST)),
            (
                f"GP-matern-ls ranks better than every method but {BEST}",
                s.rank("GP-matern-ls") < s.ranks.drop([BEST, "GP-matern-ls"]).min(),
            ),
        ],
    )


def _c5_2(inputs: Inputs) -> Outcome:
    s = inputs.setting(BEST, *OTHERS)
    others = [m for m in OTHERS if m != "GP-matern-ls"]
    conditions: list[tuple[str, Condition]] = [
        (f"{BEST} significantly better than {m}", s.significantly_better(BEST, m)) for m in others
    ]
    conditions.append(
        (f"{BEST} vs GP-matern-ls not significant", s.not_significant(BEST, "GP-matern-ls"))
    )
    beaten = sum(s.significant(BEST, m) and s.count(BEST, m) > 0 for m in others)
    return Outcome(
        f"significantly better than {beaten}/{len(others)}; {s.pair(BEST, 'GP-matern-ls')}",
        conditions,
        p_value=s.pvalue(BEST, "GP-matern-ls"),
    )


def _c5_3(inputs: Inputs) -> Outcome:
    others = [m for m in OTHERS if m != "Spearmint"] + [BEST]
    s = inputs.setting("Spearmint", *others)
    conditions: list[tuple[str, Condition]] = [
        (
            "Spearmint has the worst rank",
            bool(s.rank("Spearmint") > s.ranks.drop("Spearmint").max()),
        )
    ]
    conditions += [
        (f"{m} significantly better than Spearmint", s.significantly_better(m, "Spearmint"))
        for m in others
    ]
    return Outcome(
        f"R(Spearmint) {s.rank('Spearmint'):.2f}; {s.pair('RS', 'Spearmint')}; "
        f"{s.pair('CMA', 'Spearmint')}",
        conditions,
    )


def _pairwise(
    better: tuple[tuple[str, str], ...] = (), same: tuple[tuple[str, str], ...] = ()
) -> Callable[[Inputs], Outcome]:
    """Claim: each ``better`` pair (a, b) has a significantly better than b; each ``same`` pair
    is not significantly different."""

    def evaluate(inputs: Inputs) -> Outcome:
        return inputs.setting(*{m for pair in (*better, *same) for m in pair}).pairwise(
            better, same
        )

    return evaluate


def _c5_5(inputs: Inputs) -> Outcome:
    bases = ("GP-matern", "GP-cond", "GP-laplace")
    s = inputs.setting(*bases, *(f"{b}-ls" for b in bases))
    conditions: list[tuple[str, Condition]] = [
        (f"R({b}-ls) < R({b})", s.rank(f"{b}-ls") < s.rank(b)) for b in bases
    ]
    conditions += [
        (f"{b}-ls significantly better than {b}", s.significantly_better(f"{b}-ls", b))
        for b in ("GP-cond", "GP-laplace")
    ]
    conditions.append(
        (
            "GP-matern-ls vs GP-matern not significant",
            s.not_significant("GP-matern-ls", "GP-matern"),
        )
    )
    return Outcome("; ".join(s.pair(f"{b}-ls", b) for b in bases), conditions)


def _c5_6(inputs: Inputs) -> Outcome:
    return inputs.setting().friedman()


def _c5_7(inputs: Inputs) -> Outcome:
    s = inputs.setting("RS", BEST)
    n, k = s.scores.shape
    cd, weak = s.nemenyi()
    gaps = (s.rank("RS") - s.ranks).drop("RS")
    beyond = sorted(gaps[gaps > cd].index)
    conditions: list[tuple[str, Condition]] = [
        (f"R(RS) − R({BEST}) > CD", decided(weak, gaps[BEST] > cd))
    ]
    conditions += [
        (f"R(RS) − R({m}) ≤ CD", decided(weak, gaps[m] <= cd)) for m in gaps.index if m != BEST
    ]
    return Outcome(
        f"CD = {cd:.3f} (k = {k}, N = {n}); R(RS) − R({BEST}) = {gaps[BEST]:.2f}; "
        f"beyond the CD: {', '.join(beyond) or 'none'}",
        conditions,
        statistic=cd,
    )


def _c5_9(inputs: Inputs) -> Outcome:
    marks = inputs.worse_marks
    if marks is None or marks.empty:
        raise MissingInput("no per-dataset Wilcoxon marks (per-repetition errors)")
    absent = [m for m in (BEST, "Spearmint") if m not in marks.columns or marks[m].isna().all()]
    if absent:
        raise MissingInput(f"per-dataset marks lack {absent}")
    counts = marks.fillna(False).astype(bool).sum()
    # the marks read the normal approximation (analysis.stats.wilcoxon_pvalue)
    weak = power("wilcoxon", inputs.repetitions, inputs.alpha, method="asymptotic")
    none_better = decided(weak, counts[BEST] == 0)
    most = decided(weak, counts["Spearmint"] > counts.drop("Spearmint").max())
    text = ", ".join(
        f"{m} {int(c)}" for m, c in counts.sort_values(ascending=False, kind="stable").items()
    )
    return Outcome(
        f"significantly worse than the best on: {text} (of {len(marks)} datasets, "
        f"≥ {inputs.repetitions} repetitions)",
        [
            (f"{BEST} never significantly worse than a dataset's best", none_better),
            ("Spearmint significantly worse than the best on the most datasets", most),
        ],
        statistic=float(counts["Spearmint"]),
    )


def _c5_10(inputs: Inputs) -> Outcome:
    choices = inputs.choices
    if choices is None or choices.empty:
        raise MissingInput(f"no final classifiers of {BEST} (`learner` column)")
    totals = choices.sum().sort_values(ascending=False, kind="stable")
    top = list(totals.index[:2])
    third = totals.iloc[2] if len(totals) > 2 else 0
    runs = int(totals.sum())
    text = ", ".join(f"{c} {int(n)} ({100 * n / runs:.0f}%)" for c, n in totals.items())
    return Outcome(
        f"{runs} runs: {text}",
        [
            (
                "random forest and RBF SVM are the two most frequent choices",
                set(top) == set(TOP_CLASSIFIERS) and len(totals) >= 2 and totals.iloc[1] > third,
            )
        ],
    )


def rank_points(budget: int) -> tuple[int, int]:
    """C5.11's two iterations: a quarter of the budget and the budget (50 and 200 in the thesis)."""
    return max(1, round(budget / 4)), budget


def _c5_11(inputs: Inputs) -> Outcome:
    curves = inputs.test_ranks
    if curves is None or curves.empty or inputs.budget is None:
        raise MissingInput("no rank-vs-iteration curve on test error")
    absent = [m for m in ("RS", BEST) if m not in curves.columns]
    if absent:
        raise MissingInput(f"the rank curves lack {absent}")
    early, late = rank_points(inputs.budget)
    if early not in curves.index or late not in curves.index:
        raise MissingInput(
            f"the rank curves lack iteration {early} or {late} (no dataset where every method "
            "has an incumbent then; CMA-ES has none before its first generation ends)"
        )
    rs, best = curves["RS"], curves[BEST]
    return Outcome(
        f"t = {early} → {late}: RS {rs[early]:.2f} → {rs[late]:.2f}, "
        f"{BEST} {best[early]:.2f} → {best[late]:.2f}",
        [
            (
                f"RS's rank at t = {late} not better than at t = {early}",
                bool(rs[late] >= rs[early]),
            ),
            (
                f"{BEST}'s rank at t = {late} better than at t = {early}",
                bool(best[late] < best[early]),
            ),
        ],
        statistic=float(rs[late] - rs[early]),
    )


CLAIMS: tuple[Claim[Inputs], ...] = (
    Claim(
        "C5.1",
        "GP-cond-ls has the best average rank, GP-matern-ls the second",
        "2.56, 4.10 (Table 5.2)",
        _c5_1,
    ),
    Claim(
        "C5.2",
        "GP-cond-ls is significantly better than every other method except GP-matern-ls",
        "p ≤ 0.03; GP-matern-ls p = 0.10 (Table 5.3)",
        _c5_2,
    ),
    Claim(
        "C5.3",
        "Spearmint has the worst average rank and is significantly worse than each of the other "
        "ten methods, random search and CMA-ES included",
        "rank 9.15 (Table 5.2); RS p = 0.01, CMA p = 0.00 (Table 5.3)",
        _c5_3,
    ),
    Claim(
        "C5.4",
        "Imputation matters: GP-matern is significantly better than GP-matern-noimp.",
        "p = 0.01 (Table 5.3)",
        _pairwise(better=(("GP-matern", "GP-matern-noimpute"),)),
    ),
    Claim(
        "C5.5",
        "Local search helps: GP-X-ls ranks better than GP-X for X = matern, cond, laplace; "
        "significantly so for cond and laplace, not for matern",
        "p = 0.00, 0.00; matern 0.57 (Table 5.3)",
        _c5_5,
    ),
    Claim(
        "C5.6",
        "The Friedman test rejects equal ranks",
        "p = 9e-12 (§5.5.1)",
        _c5_6,
    ),
    Claim(
        "C5.7",
        "Nemenyi: GP-cond-ls is the only method whose rank is better than random search's by "
        "more than the CD",
        "k = 11, N = 24, CD = 3.082 (Fig 5.6)",
        _c5_7,
    ),
    Claim(
        "C5.8",
        "SMAC is significantly better than RS and CMA and not significantly different from "
        "GP-matern or GP-cond",
        "p = 0.02, 0.02; 0.45, 0.41 (Table 5.3)",
        _pairwise(
            better=(("SMAC", "RS"), ("SMAC", "CMA")),
            same=(("SMAC", "GP-matern"), ("SMAC", "GP-cond")),
        ),
    ),
    Claim(
        "C5.9",
        "No method is significantly better than GP-cond-ls on any single dataset (per-dataset "
        "Wilcoxon over repetitions, p < 0.05); Spearmint is significantly worse than the best "
        "method on the most datasets",
        "GP-cond-ls 0; Spearmint 14 of 24, SMAC 10, GP-matern-ls 1 (§5.5.1)",
        _c5_9,
    ),
    Claim(
        "C5.10",
        "The final classifier chosen by GP-cond-ls is most often a random forest or an RBF SVM: "
        "these two are the two most frequent choices",
        "240 runs; RF and RBF SVM dominate, others ≈ 5–10% each (Fig 5.8)",
        _c5_10,
    ),
    Claim(
        "C5.11",
        "Random search's average rank on test error does not improve from iteration 50 to 200, "
        "while GP-cond-ls's rank at 200 is better than at 50",
        "Fig 5.7, right panel",
        _c5_11,
    ),
)


def claim_records(inputs: Inputs) -> list[ClaimRecord]:
    """Every Chapter-5 claim evaluated on ``inputs``."""
    return [run_claim(claim, inputs) for claim in CLAIMS]


def claims_table(inputs: Inputs) -> pd.DataFrame:
    """:func:`claim_records` as a DataFrame indexed by claim id."""
    return records_frame(claim_records(inputs))
