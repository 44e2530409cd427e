"""The Chapter-3 claims (thesis §3.3.2, §3.4.2; C3.1–C3.20) evaluated on our own score tables.

Input: ``{(validation, experiment): scores}`` with validation ``"holdout"`` or ``"cv5"`` and
experiment ``"main"`` (the 14 methods of Table 3.1, 20 repetitions) or ``"pm"`` (grid, rs, gp,
gp-pm, gp-r, gp-pm-r; 10 repetitions). Scores: datasets × methods, test error in % averaged over
repetitions (see ``analysis.stats``). C3.13 also needs |D_TVS| per dataset, and C3.14 the
per-iteration incumbent errors of ``gp`` with hold-out.

Each claim becomes one record: the thesis's value (with the table it comes from), ours, a statistic
or p-value where one applies, and a status — "reproduced" when every condition of the proposition
holds, "not reproduced" otherwise (the reason names the failing conditions), "not evaluated" when an
input is missing or a test cannot reach alpha with the datasets at hand ("underpowered", the
engine's rule, ``analysis.power.power``: e.g. no two-sided Wilcoxon on 5 datasets). "Significantly
better" means a positive win/loss count and a two-sided Wilcoxon p < alpha across datasets, as the
bold+underlined cells of Tables 3.2–3.4.

Readings of the propositions where the specification leaves room (each stated in the record):
C3.5 asks for exactly {rs, cma-r} as the methods gp-r does not significantly beat; C3.13 asks for
the size trend in both settings (Fig 3.4 has one panel each), ranks among all methods of the table;
C3.14 asks that the mean test − validation gap be larger at the last iteration than at the first
and increase with the iteration (Spearman ρ > 0, p < alpha). "Lowest rank" is strict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from analysis import stats
from analysis.claims import (
    Claim,
    ClaimRecord,
    MissingInput,
    Outcome,
    ScoreSetting,
    all_hold,
    decided,
    no_significant_difference,
    power,
    records_frame,
    run_claim,
)

HOLDOUT, CV5 = "holdout", "cv5"
MAIN, PM = "main", "pm"
SETTING_LABELS = {HOLDOUT: "HO", CV5: "5F"}

# Table 3.1 methods (thesis §3.3) and the posterior-mean experiment's six (Table 3.5).
MAIN_METHODS = (
    "grid", "rs", "gp", "gp-sel", "gp-r", "gp-sel-r", "cma", "cma-pv", "cma-bw", "cma-gv",
    "cma-r", "cma-pv-r", "cma-bw-r", "cma-gv-r",
)  # fmt: skip
PM_METHODS = ("grid", "rs", "gp", "gp-pm", "gp-r", "gp-pm-r")
# Fig 3.4 size bins of |D_TVS| (thesis §3.3.4: "[1 - 133 - 455 - 1403 - 1e5]"), right-closed; the
# last edge is open-ended so that no dataset falls outside (the largest of the 118 is ≈ 86 700).
SIZE_BIN_EDGES = (0, 133, 455, 1403, np.inf)
CURVE_COLUMNS = ("dataset", "iteration", "test_error", "valid_error")

ScoreTables = Mapping[tuple[str, str], pd.DataFrame]


class Inputs:
    """All inputs of the claims, checked lazily so that a claim only fails on what it needs."""

    def __init__(
        self,
        tables: ScoreTables,
        dataset_sizes: pd.Series | None,
        gp_holdout_curves: pd.DataFrame | None,
        alpha: float,
    ) -> None:
        self.tables, self.alpha = tables, alpha
        self.dataset_sizes, self.gp_holdout_curves = dataset_sizes, gp_holdout_curves
        self._settings: dict[tuple[str, str], ScoreSetting] = {}

    def setting(self, validation: str, experiment: str) -> ScoreSetting:
        key = (validation, experiment)
        if key not in self.tables:
            raise MissingInput(f"no score table for {key}")
        if key not in self._settings:
            label = f"{experiment}/{SETTING_LABELS[validation]}"
            self._settings[key] = ScoreSetting(self.tables[key], label, self.alpha)
        return self._settings[key]

    def both(self, experiment: str, *methods: str) -> list[ScoreSetting]:
        """The hold-out and 5-fold settings of ``experiment``, each required to hold ``methods``."""
        settings = [self.setting(v, experiment) for v in (HOLDOUT, CV5)]
        for setting in settings:
            setting.require(*methods)
        return settings


# ---------------------------------------------------------------------- claims, one function each


def _reshuffling_helps_gp(validation: str) -> Callable[[Inputs], Outcome]:
    def evaluate(inputs: Inputs) -> Outcome:
        s = inputs.setting(validation, MAIN)
        s.require("gp", "gp-r")
        return Outcome(
            f"R {s.rank('gp-r'):.2f} vs {s.rank('gp'):.2f}; {s.pair('gp-r', 'gp')}",
            [
                (f"R(gp-r) < R(gp) [{s.label}]", s.rank("gp-r") < s.rank("gp")),
                ("gp-r significantly better than gp", s.significantly_better("gp-r", "gp")),
            ],
            statistic=s.count("gp-r", "gp"),
            p_value=s.pvalue("gp-r", "gp"),
        )

    return evaluate


def _c3_3(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.both(MAIN, *MAIN_METHODS)
    text = "; ".join(
        f"{s.label} R {s.rank('gp-r'):.2f} / {s.rates['gp-r']:.2f}" for s in (holdout, cv5)
    )
    medians = holdout.medians
    conditions = [
        (f"gp-r lowest R, highest win rate [{s.label}]", s.best_by_rank("gp-r"))
        for s in (holdout, cv5)
    ]
    conditions.append(("gp-r lowest hold-out median", medians["gp-r"] < medians.drop("gp-r").min()))
    return Outcome(
        f"{text}; HO median {medians['gp-r']:.2f} (min of others {medians.drop('gp-r').min():.2f})",
        conditions,
    )


def _gp_r_beats_all_but(validation: str, exceptions: set[str]) -> Callable[[Inputs], Outcome]:
    """Claim: gp-r is significantly better than every other main method except ``exceptions``."""

    def evaluate(inputs: Inputs) -> Outcome:
        s = inputs.setting(validation, MAIN)
        s.require(*MAIN_METHODS)
        others = [m for m in MAIN_METHODS if m != "gp-r"]
        found = [m for m in others if not s.significant("gp-r", m) or s.count("gp-r", m) <= 0]
        detail = ", ".join(s.pair("gp-r", m) for m in found) or "none"
        expected = [
            s.not_significantly_better("gp-r", m)
            if m in exceptions
            else s.significantly_better("gp-r", m)
            for m in others
        ]
        return Outcome(
            f"gp-r sig. better than {len(others) - len(found)}/{len(others)}; not vs: {detail}",
            [
                (
                    f"gp-r significantly better than every other method but "
                    f"{', '.join(sorted(exceptions)) or 'none'} [{s.label}]",
                    all_hold(expected),
                )
            ],
        )

    return evaluate


def _c3_6(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.both(MAIN, *MAIN_METHODS)
    conditions = []
    for s in (holdout, cv5):
        better_than_cma_r = int((s.ranks < s.rank("cma-r")).sum())
        conditions += [
            (f"R(cma-r) < R(cma) [{s.label}]", s.rank("cma-r") < s.rank("cma")),
            (f"cma-r has the 2nd-best R [{s.label}]", better_than_cma_r == 1),
        ]
    conditions += [
        ("cma-r significantly better than cma [5F]", cv5.significantly_better("cma-r", "cma")),
        ("cma-r vs cma not significant [HO]", holdout.not_significant("cma-r", "cma")),
    ]
    text = "; ".join(
        f"{s.label} R {s.rank('cma-r'):.2f} vs {s.rank('cma'):.2f}, {s.pair('cma-r', 'cma')}"
        for s in (holdout, cv5)
    )
    return Outcome(text, conditions)


def _not_significant_in_both(
    experiment: str, first: str, second: str
) -> Callable[[Inputs], Outcome]:
    """Claim: ``first`` vs ``second`` is not significant with hold-out nor with 5-fold."""

    def evaluate(inputs: Inputs) -> Outcome:
        settings = inputs.both(experiment, first, second)
        return Outcome(
            "; ".join(f"{s.label} {s.pair(first, second)}" for s in settings),
            [
                (
                    f"{first} vs {second} not significant [{s.label}]",
                    s.not_significant(first, second),
                )
                for s in settings
            ],
        )

    return evaluate


def _selection_pairs() -> list[tuple[str, str]]:
    """(selection-split variant, its CMA counterpart) for pv, bw, gv, fixed and reshuffled."""
    return [
        (f"cma-{rule}{suffix}", f"cma{suffix}")
        for suffix in ("", "-r")
        for rule in ("pv", "bw", "gv")
    ]


def _c3_8(inputs: Inputs) -> Outcome:
    pairs = _selection_pairs()
    settings = inputs.both(MAIN, *{method for pair in pairs for method in pair})
    conditions, texts, gaps = [], [], []
    for s in settings:
        not_worse = [v for v, base in pairs if s.rank(v) <= s.rank(base)]
        conditions.append(
            (f"each selection variant ranks worse than its base [{s.label}]", not not_worse)
        )
        gaps.append(float(np.mean([s.rank(v) - s.rank(base) for v, base in pairs])))
        degraded = sum(s.significant(base, v) and s.count(base, v) > 0 for v, base in pairs)
        texts.append(
            f"{s.label} mean rank gap {gaps[-1]:.2f}, significant degradations {degraded}/6, "
            f"not worse: {not_worse or 'none'}"
        )
    conditions.append(("mean rank gap larger with 5F than HO", gaps[1] > gaps[0]))
    return Outcome("; ".join(texts), conditions, statistic=gaps[1] - gaps[0])


def _c3_9(inputs: Inputs) -> Outcome:
    pairs = [("gp-sel", "gp"), ("gp-sel-r", "gp-r")]
    settings = inputs.both(MAIN, "gp", "gp-r", "gp-sel", "gp-sel-r")
    return Outcome(
        "; ".join(f"{s.label} {s.pair(sel, base)}" for s in settings for sel, base in pairs),
        [
            (
                f"{sel} not significantly better than {base} [{s.label}]",
                s.not_significantly_better(sel, base),
            )
            for s in settings
            for sel, base in pairs
        ],
    )


def _c3_10(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.both(MAIN, "gp", "gp-r")
    gap_holdout, gap_cv5 = (s.rank("gp") - s.rank("gp-r") for s in (holdout, cv5))
    return Outcome(
        f"R(gp) − R(gp-r): HO {gap_holdout:.2f}, 5F {gap_cv5:.2f}; "
        f"counts {holdout.count('gp-r', 'gp'):+d} vs {cv5.count('gp-r', 'gp'):+d}",
        [("R(gp) − R(gp-r) larger with HO than 5F", gap_holdout > gap_cv5)],
        statistic=gap_holdout - gap_cv5,
    )


def _c3_11(inputs: Inputs) -> Outcome:
    settings = inputs.both(MAIN, *MAIN_METHODS)
    spans = {s.label: (s.medians.min(), s.medians.max()) for s in settings}
    return Outcome(
        "; ".join(f"{label} {low:.2f}–{high:.2f}" for label, (low, high) in spans.items()),
        [
            (f"medians within 2 points [{label}]", high - low <= 2.0)
            for label, (low, high) in spans.items()
        ],
        statistic=max(high - low for low, high in spans.values()),
    )


def _c3_12(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.setting(HOLDOUT, MAIN), inputs.setting(CV5, MAIN)
    holdout.require("gp-r")
    cv5.require("gp")
    difference = holdout.medians["gp-r"] - cv5.medians["gp"]
    paired = _paired_pvalue(holdout.scores["gp-r"], cv5.scores["gp"])
    return Outcome(
        f"median gp-r HO {holdout.medians['gp-r']:.2f} vs gp 5F {cv5.medians['gp']:.2f} "
        f"(paired Wilcoxon p={paired:.3g}, not part of the claim)",
        [("|median(gp-r, HO) − median(gp, 5F)| ≤ 0.3", abs(difference) <= 0.3)],
        statistic=difference,
    )


def _paired_pvalue(first: pd.Series, second: pd.Series) -> float:
    """Wilcoxon p of two methods from different tables, on the datasets both tables hold."""
    common = first.index.intersection(second.index)
    if common.empty:
        raise MissingInput("the two tables share no dataset")
    return stats.wilcoxon_pvalue(first[common], second[common])


def _ranks_by_size_bin(s: ScoreSetting, sizes: pd.Series) -> pd.DataFrame:
    """Average per-dataset rank (among all methods of the table) within each Fig 3.4 size bin."""
    unsized = s.scores.index.difference(sizes.dropna().index)
    if not unsized.empty:
        raise MissingInput(f"no |D_TVS| for {len(unsized)} datasets, e.g. {list(unsized[:3])}")
    bins = pd.cut(sizes[s.scores.index], SIZE_BIN_EDGES, right=True)
    by_bin = stats.per_dataset_ranks(s.scores).groupby(bins, observed=False).mean()
    if by_bin.iloc[[0, -1]].isna().any().any():
        raise MissingInput(f"the smallest or largest size bin is empty in {s.label}")
    return by_bin


def _c3_13(inputs: Inputs) -> Outcome:
    if inputs.dataset_sizes is None:
        raise MissingInput("per-dataset sizes |D_TVS| not given")
    conditions, texts = [], []
    for s in inputs.both(MAIN, *MAIN_METHODS):
        by_bin = _ranks_by_size_bin(s, inputs.dataset_sizes)
        smallest, largest = by_bin.iloc[0], by_bin.iloc[-1]
        conditions += [
            (
                f"gp-r ranks better on the largest bin than the smallest [{s.label}]",
                largest["gp-r"] < smallest["gp-r"],
            ),
            (
                f"cma-r ranks worse on the largest bin than the smallest [{s.label}]",
                largest["cma-r"] > smallest["cma-r"],
            ),
        ]
        texts += [
            f"{s.label} {m} " + "/".join(f"{r:.2f}" for r in by_bin[m]) for m in ("gp-r", "cma-r")
        ]
    return Outcome("ranks per size bin: " + "; ".join(texts), conditions)


def _c3_14(inputs: Inputs) -> Outcome:
    curves = inputs.gp_holdout_curves
    if curves is None:
        raise MissingInput("per-iteration curves of gp with hold-out not given")
    absent = [c for c in CURVE_COLUMNS if c not in curves.columns]
    if absent:
        raise MissingInput(f"curves lack columns {absent}")
    gap = (curves["test_error"] - curves["valid_error"]).groupby(curves["iteration"]).mean()
    correlation = scipy_stats.spearmanr(gap.index, gap.to_numpy())
    return Outcome(
        f"mean test−valid gap {gap.iloc[0]:.2f} at t={gap.index[0]} → {gap.iloc[-1]:.2f} at "
        f"t={gap.index[-1]}; Spearman ρ={correlation.statistic:.2f}",
        [
            ("gap at the last iteration > gap at the first", gap.iloc[-1] > gap.iloc[0]),
            (
                "gap increases with iterations (Spearman ρ > 0, p < alpha)",
                decided(
                    power("spearman", len(gap), inputs.alpha),
                    correlation.statistic > 0 and correlation.pvalue < inputs.alpha,
                ),
            ),
        ],
        statistic=float(correlation.statistic),
        p_value=float(correlation.pvalue),
    )


def _c3_15(inputs: Inputs) -> Outcome:
    settings = inputs.both(PM, *PM_METHODS)
    return Outcome(
        "; ".join(
            f"{s.label} R {s.rank('gp-pm-r'):.2f} / {s.rates['gp-pm-r']:.2f}" for s in settings
        ),
        [
            (f"gp-pm-r lowest R, highest win rate [{s.label}]", s.best_by_rank("gp-pm-r"))
            for s in settings
        ],
    )


def _c3_16(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.both(PM, "gp-pm-r", "gp-r")
    return Outcome(
        f"HO {holdout.pair('gp-pm-r', 'gp-r')}; 5F {cv5.pair('gp-pm-r', 'gp-r')}",
        [
            ("count(gp-pm-r, gp-r) > 0 [HO]", holdout.count("gp-pm-r", "gp-r") > 0),
            ("gp-pm-r vs gp-r not significant [HO]", holdout.not_significant("gp-pm-r", "gp-r")),
            (
                "gp-pm-r significantly better than gp-r [5F]",
                cv5.significantly_better("gp-pm-r", "gp-r"),
            ),
        ],
    )


def _significance_pattern(
    method: str, expected: Mapping[str, Mapping[str, bool]]
) -> Callable[[Inputs], Outcome]:
    """Claim: ``method`` is significantly better than each opponent exactly where expected is True.

    ``expected`` maps a validation ("holdout"/"cv5") to ``{opponent: significantly better?}``.
    """

    def evaluate(inputs: Inputs) -> Outcome:
        texts, conditions = [], []
        for validation, opponents in expected.items():
            s = inputs.setting(validation, PM)
            s.require(method, *opponents)
            texts.append(s.label + " " + ", ".join(s.pair(method, o) for o in opponents))
            conditions += [
                (
                    f"{method} {'' if better else 'not '}significantly better than {o} [{s.label}]",
                    s.significantly_better(method, o) if better else s.not_significant(method, o),
                )
                for o, better in opponents.items()
            ]
        return Outcome("; ".join(texts), conditions)

    return evaluate


def _c3_20(inputs: Inputs) -> Outcome:
    holdout, cv5 = inputs.setting(HOLDOUT, PM), inputs.setting(CV5, PM)
    holdout.require("gp-pm-r")
    cv5.require("gp")
    p = _paired_pvalue(holdout.scores["gp-pm-r"], cv5.scores["gp"])
    shared = holdout.scores.index.intersection(cv5.scores.index)
    differ = (holdout.scores.loc[shared, "gp-pm-r"] != cv5.scores.loc[shared, "gp"]).any()
    return Outcome(
        f"p={p:.3g}; medians {holdout.medians['gp-pm-r']:.2f} vs {cv5.medians['gp']:.2f}",
        [
            (
                "gp-pm-r (HO) vs gp (5F) not significant",
                no_significant_difference(p, len(shared) if differ else 0, inputs.alpha),
            )
        ],
        p_value=p,
    )


# ----------------------------------------------------------------------------------- registry

_ALL_BETTER = {"grid": True, "rs": True, "gp": True, "gp-pm": True}


CLAIMS = (
    Claim(
        "C3.1",
        "Reshuffling helps GP with hold-out: R(gp-r) < R(gp), gp-r significantly better than gp",
        "thesis: R 5.58 vs 7.52 (Table 3.1); count +36* (Table 3.2); App. B p = 0.0001",
        _reshuffling_helps_gp(HOLDOUT),
    ),
    Claim(
        "C3.2",
        "Reshuffling helps GP with 5-fold: R(gp-r) < R(gp), gp-r significantly better than gp",
        "thesis: R 5.61 vs 6.40 (Table 3.1); count +23* (Table 3.3); App. B p = 0.034",
        _reshuffling_helps_gp(CV5),
    ),
    Claim(
        "C3.3",
        "gp-r has the lowest rank and highest win rate of the 14 methods in both settings, "
        "and the lowest hold-out median",
        "thesis: HO R 5.58 / win rate 63.71; 5F 5.61 / 63.50; HO median 15.82 (Table 3.1)",
        _c3_3,
    ),
    Claim(
        "C3.4",
        "Hold-out: gp-r is significantly better than each of the 13 other methods",
        "thesis: counts +16 … +48, all 13 marked (Table 3.2)",
        _gp_r_beats_all_but(HOLDOUT, set()),
    ),
    Claim(
        "C3.5",
        "5-fold: gp-r is significantly better than 11 of 13, not vs rs and cma-r",
        "thesis: 11/13 marked; unmarked rs (+18) and cma-r (+2) (Table 3.3)",
        _gp_r_beats_all_but(CV5, {"rs", "cma-r"}),
    ),
    Claim(
        "C3.6",
        "Reshuffling helps CMA: R(cma-r) < R(cma) and cma-r 2nd-best in both settings; "
        "significant with 5-fold only",
        "thesis: R 6.89 < 7.00 (HO), 5.83 < 6.81 (5F) (Table 3.1); count +9 ns (HO, Table 3.2), "
        "+22* (5F, Table 3.3)",
        _c3_6,
    ),
    Claim(
        "C3.7",
        "CMA-ES ≈ GP: gp vs cma not significant in either setting",
        "thesis: count(gp, cma) −8 (HO, Table 3.2), +4 (5F, Table 3.3), both unmarked",
        _not_significant_in_both(MAIN, "gp", "cma"),
    ),
    Claim(
        "C3.8",
        "A selection split hurts CMA: cma-pv/bw/gv rank worse than cma and cma-pv/bw/gv-r worse "
        "than cma-r in both settings (12 inequalities), more so with 5-fold",
        "thesis: HO 7.78/8.61/7.91 vs 7.00, 7.31/8.43/8.25 vs 6.89; 5F 7.69/7.41/9.23 vs 6.81, "
        "8.47/8.49/9.20 vs 5.83; mean gap HO 1.10, 5F 2.10 (Table 3.1)",
        _c3_8,
    ),
    Claim(
        "C3.9",
        "A selection split does not help GP: no gp-sel(-r) is significantly better than its "
        "counterpart",
        "thesis: HO gp-sel vs gp +3, gp-sel-r vs gp-r −26*; 5F −48*, −47* (Tables 3.2, 3.3)",
        _c3_9,
    ),
    Claim(
        "C3.10",
        "Reshuffling matters less with k-fold: R(gp) − R(gp-r) larger with hold-out than 5-fold",
        "thesis: 1.94 vs 0.79 (Table 3.1); counts +36 vs +23 (Tables 3.2, 3.3)",
        _c3_10,
    ),
    Claim(
        "C3.11",
        "Small spread: the 14 medians lie within 2 points in each setting",
        "thesis: HO 15.82–17.43, 5F 15.52–16.73 (Table 3.1)",
        _c3_11,
    ),
    Claim(
        "C3.12",
        "Hold-out + reshuffling ≈ 5-fold: median of gp-r (HO) within 0.3 of gp (5F)",
        "thesis: 15.82 vs 15.73 (Table 3.1); App. B paired test favours gp 5F, p ≈ 0.003",
        _c3_12,
    ),
    Claim(
        "C3.13",
        "Size trend (both settings): gp-r ranks better on the largest |D_TVS| bin than on the "
        "smallest, cma-r worse",
        "thesis: Fig 3.4, qualitative; bins 1–133–455–1403–1e5 (§3.3.4)",
        _c3_13,
    ),
    Claim(
        "C3.14",
        "Overfitting exists: for gp with hold-out, the mean (test − validation error) of the "
        "incumbent grows with the number of evaluations",
        "thesis: Figs 3.1, 2.4, 2.5, qualitative",
        _c3_14,
    ),
    Claim(
        "C3.15",
        "gp-pm-r has the lowest rank and highest win rate of the six in both settings",
        "thesis: R 2.64 (HO), 2.96 (5F); win rate 64.27, 59.04 (Table 3.5)",
        _c3_15,
    ),
    Claim(
        "C3.16",
        "gp-pm-r beats gp-r in both settings, significantly with 5-fold only",
        "thesis: +20 ns (HO), +15* (5F) (Table 3.4)",
        _c3_16,
    ),
    Claim(
        "C3.17",
        "gp-pm vs gp: no significant difference in either setting",
        "thesis: −4 (HO), +8 (5F), unmarked (Table 3.4)",
        _not_significant_in_both(PM, "gp-pm", "gp"),
    ),
    Claim(
        "C3.18",
        "gp-pm-r is significantly better than grid, rs, gp, gp-pm in both settings",
        "thesis: HO +54*, +31*, +43*, +54*; 5F +27*, +33*, +28*, +25* (Table 3.4)",
        _significance_pattern("gp-pm-r", {HOLDOUT: _ALL_BETTER, CV5: _ALL_BETTER}),
    ),
    Claim(
        "C3.19",
        "gp-r is significantly better than grid, rs, gp, gp-pm with hold-out; with 5-fold only "
        "than gp",
        "thesis: HO +15*, +17*, +31*, +34*; 5F +25* vs gp, +11, +21, +26 ns vs grid, rs, gp-pm "
        "(Table 3.4)",
        _significance_pattern(
            "gp-r",
            {HOLDOUT: _ALL_BETTER, CV5: {"grid": False, "rs": False, "gp": True, "gp-pm": False}},
        ),
    ),
    Claim(
        "C3.20",
        "Cheap ≈ expensive: gp-pm-r with hold-out vs gp with 5-fold is not significant",
        "thesis: p = 0.573; medians 16.04 vs 15.76 (§3.4.2, Table 3.5)",
        _c3_20,
    ),
)


def evaluate_claims(
    tables: ScoreTables,
    dataset_sizes: pd.Series | None = None,
    gp_holdout_curves: pd.DataFrame | None = None,
    alpha: float = 0.05,
) -> list[ClaimRecord]:
    """Evaluate C3.1–C3.20 on ``tables`` (see the module docstring for the inputs).

    ``dataset_sizes``: |D_TVS| per dataset (index = dataset), for C3.13. ``gp_holdout_curves``:
    columns dataset, iteration, test_error, valid_error of the gp hold-out incumbent, for C3.14.
    Missing tables, methods or inputs give "not evaluated", never an exception.
    """
    inputs = Inputs(tables, dataset_sizes, gp_holdout_curves, alpha)
    return [run_claim(claim, inputs) for claim in CLAIMS]


def claims_table(
    tables: ScoreTables,
    dataset_sizes: pd.Series | None = None,
    gp_holdout_curves: pd.DataFrame | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """``evaluate_claims`` as a DataFrame, one row per claim, indexed by claim id."""
    return records_frame(evaluate_claims(tables, dataset_sizes, gp_holdout_curves, alpha))
