"""Every condition of every multi-condition claim is shown to matter (analysis.claims).

The claims of the four catalogues — Chapter 3 (``analysis.chapter3.claims``), Chapter 4, Chapter 5
and ESMBO (``analysis.esmbo.report``) — are enumerated from the catalogues themselves. For each
claim with more than one condition there are inputs where every condition holds (the claim is
"reproduced") and, for each condition, inputs where that condition alone fails (the claim is
"not reproduced", the reason naming that condition and no other). A meta-test checks that the
claims with several conditions, and their conditions, are exactly those that have cases: a new
multi-condition claim, or a new condition (an always-true one included), fails the suite with a
message naming it; a condition made always true fails its own case.

Inputs are written as differences from a claim's holding inputs, which are differences from a
catalogue's defaults. Score tables come from :class:`Col`: a method at an error *level* added to a
common base column (datasets of increasing error), optionally at another level on a slice of the
datasets. Two levels apart on every dataset = a significant Wilcoxon difference (30 of 30); a
difference of ``TINY`` on 3 datasets = a difference Wilcoxon cannot call significant (p = 0.11)
but one that moves the average rank.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import ascii_id
from scipy import stats as scipy_stats

from analysis.chapter3 import claims as ch3
from analysis.chapter4 import claims as ch4
from analysis.chapter4.data import THESIS_METHODS
from analysis.chapter4.thesis import SKLEARN, SVM
from analysis.chapter5 import claims as ch5
from analysis.chapter5.thesis import METHODS as CH5_METHODS
from analysis.claims import NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED, Claim, Outcome, run_claim
from analysis.esmbo import report as esmbo
from analysis.esmbo.data import PAPER_ORDER, SPACES

TINY = 0.01
N_DATASETS = 30
FIRST3 = (0, 3)  # datasets [start, stop)
FIRST10 = (0, 10)


# ------------------------------------------------------------------------------- score columns


@dataclass(frozen=True)
class Col:
    """A method's scores: ``base + level`` on every dataset, ``base + other`` on ``on``."""

    level: float
    other: float | None = None
    on: tuple[int, int] = FIRST3

    def values(self, n: int) -> np.ndarray:
        base = np.linspace(5.0, 35.0, n)
        values = base + self.level
        if self.other is not None:
            on = slice(*self.on)
            values[on] = base[on] + self.other
        return values


def near(level: float, by: float = TINY) -> Col:
    """``level``, worse by ``by`` (better if negative) on 3 datasets: a rank nudge that no
    Wilcoxon test calls significant."""
    return Col(level, level + by)


def upset(crowd: float, top: bool = True) -> tuple[Col, Col]:
    """(winner, loser): the winner is significantly better (count +10, large wins, tiny losses)
    yet ranks no better, because on its 10 losses every method at level ``crowd`` sits between
    the two. ``top``: both rank above the crowd elsewhere (else below it)."""
    shift = -1.0 if top else 1.0
    winner = Col(crowd + 2 * shift, crowd + TINY, FIRST10)
    loser = Col(crowd + (3 if not top else 1) * shift, crowd - TINY, FIRST10)
    return winner, loser


Spec = Mapping[str, float | Col]


def scores(spec: Spec, n: int = N_DATASETS) -> pd.DataFrame:
    """Datasets × methods from ``{method: level or Col}``."""
    columns = {m: (c if isinstance(c, Col) else Col(c)).values(n) for m, c in spec.items()}
    return pd.DataFrame(columns, index=[f"d{i:02d}" for i in range(n)])


def merged(*layers: Mapping[Any, Any]) -> dict[Any, Any]:
    """Layers merged key by key, recursively (a dict value is updated, not replaced)."""
    out: dict[Any, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                out[key] = merged(out[key], value)
            else:
                out[key] = value
    return out


@dataclass(frozen=True)
class Cases:
    """A claim's holding layer and, per condition name, the layer that makes it fail alone."""

    holding: Mapping[str, Any]
    failing: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Catalogue:
    """One claim catalogue: its claims, default inputs (every claim evaluable), how a layered
    description becomes the claims' inputs, and the cases."""

    name: str
    claims: tuple[Claim[Any], ...]
    defaults: Mapping[str, Any]
    build: Callable[[dict[str, Any]], Any]
    cases: Mapping[str, Cases] = field(default_factory=dict)
    # claims whose function a factory builds once, at import: rebuilt here when a test asks for
    # the claim, so that the tests run the factory's code as it is then
    rebuilt: Mapping[str, Callable[[], Callable[[Any], Outcome]]] = field(default_factory=dict)

    def claim(self, claim_id: str) -> Claim[Any]:
        claim = self.listed(claim_id)
        if claim_id in self.rebuilt:
            return replace(claim, evaluate=self.rebuilt[claim_id]())
        return claim

    def listed(self, claim_id: str) -> Claim[Any]:
        """The claim as the catalogue holds it (its function built at import)."""
        return next(c for c in self.claims if c.id == claim_id)

    def inputs(self, claim_id: str, condition: str | None = None) -> Any:
        case = self.cases[claim_id]
        failing = case.failing[condition] if condition else {}
        return self.build(merged(self.defaults, case.holding, failing))


# ----------------------------------------------------------------------------------- Chapter 3

MAIN_HO, MAIN_CV = (ch3.HOLDOUT, ch3.MAIN), (ch3.CV5, ch3.MAIN)
PM_HO, PM_CV = (ch3.HOLDOUT, ch3.PM), (ch3.CV5, ch3.PM)
CH3_KEYS = {"main_ho": MAIN_HO, "main_cv": MAIN_CV, "pm_ho": PM_HO, "pm_cv": PM_CV}
SIZES = np.repeat([100.0, 1_000.0, 10_000.0], N_DATASETS // 3)  # smallest bin = first 10
LARGEST = (20, 30)


def ch3_build(layers: dict[str, Any]) -> ch3.Inputs:
    tables = {key: scores(layers[name]) for name, key in CH3_KEYS.items()}
    index = tables[MAIN_HO].index
    slope = layers["gap"]
    curves = pd.DataFrame(
        [(d, t, 20.0 + slope(t), 20.0) for d in ("a", "b") for t in range(1, 101)],
        columns=list(ch3.CURVE_COLUMNS),
    )
    return ch3.Inputs(tables, pd.Series(SIZES, index=index), curves, alpha=0.05)


def ho(**spec: float | Col) -> dict[str, Spec]:
    return {"main_ho": _hyphens(spec)}


def cv(**spec: float | Col) -> dict[str, Spec]:
    return {"main_cv": _hyphens(spec)}


def pm_ho(**spec: float | Col) -> dict[str, Spec]:
    return {"pm_ho": _hyphens(spec)}


def pm_cv(**spec: float | Col) -> dict[str, Spec]:
    return {"pm_cv": _hyphens(spec)}


def _hyphens(spec: Mapping[str, float | Col]) -> dict[str, float | Col]:
    return {name.replace("_", "-"): value for name, value in spec.items()}


def both(**spec: float | Col) -> dict[str, Spec]:
    return {**ho(**spec), **cv(**spec)}


def pm_both(**spec: float | Col) -> dict[str, Spec]:
    return {**pm_ho(**spec), **pm_cv(**spec)}


def _reshuffling(where: Callable[..., dict[str, Spec]], label: str) -> Cases:
    winner, loser = upset(crowd=2)
    return Cases(
        where(gp_r=0, gp=1),
        {
            f"R(gp-r) < R(gp) [main/{label}]": where(gp_r=winner, gp=loser),
            "gp-r significantly better than gp": where(gp_r=near(1, -TINY), gp=1),
        },
    )


ALL_BETTER = {"grid": True, "rs": True, "gp": True, "gp-pm": True}


def _significance_pattern(method: str, expected: dict[str, dict[str, bool]]) -> Cases:
    holding: dict[str, Any] = {}
    failing: dict[str, Any] = {}
    for label, opponents in expected.items():
        key = pm_ho if label == "HO" else pm_cv
        spec = {method: 0} | {o: 1 if better else near(0) for o, better in opponents.items()}
        holding |= key(**{m.replace("-", "_"): v for m, v in spec.items()})
        for o, better in opponents.items():
            name = f"{method} {'' if better else 'not '}significantly better than {o} [pm/{label}]"
            failing[name] = key(**{o.replace("-", "_"): near(0) if better else 1})
    return Cases(holding, failing)


def _winner_by_median() -> Col:
    """Better than a method at level 0 on the 10 largest-error datasets by 10 points, worse by
    TINY elsewhere: a worse average rank, a lower median."""
    return Col(TINY, -10.0, LARGEST)


def _rank_winner_median_loser() -> Col:
    """Better than a method at level 0 by TINY on 20 datasets, worse by 1.5 on the 10 middle
    ones (still better than the crowd at level 2): a better average rank, a higher median."""
    return Col(-TINY, 1.5, (10, 20))


CH3_CASES = {
    "C3.1": _reshuffling(ho, "HO"),
    "C3.2": _reshuffling(cv, "5F"),
    "C3.3": Cases(
        both(gp_r=0),
        {
            "gp-r lowest R, highest win rate [main/HO]": ho(rs=_rank_winner_median_loser()),
            "gp-r lowest R, highest win rate [main/5F]": cv(rs=_rank_winner_median_loser()),
            "gp-r lowest hold-out median": ho(rs=_winner_by_median()),
        },
    ),
    "C3.6": Cases(
        merged(ho(gp_r=0, cma_r=near(1, -TINY), cma=1), cv(gp_r=0, cma_r=1, cma=1.5)),
        {
            "R(cma-r) < R(cma) [main/HO]": ho(gp_r=1.5, cma=0, cma_r=near(0)),
            "cma-r has the 2nd-best R [main/HO]": ho(grid=0.5),
            "R(cma-r) < R(cma) [main/5F]": cv(
                gp_r=2, **dict(zip(("cma_r", "cma"), upset(crowd=2), strict=True))
            ),
            "cma-r has the 2nd-best R [main/5F]": cv(grid=0.5),
            "cma-r significantly better than cma [5F]": cv(cma=near(1)),
            "cma-r vs cma not significant [HO]": ho(cma=1.5),
        },
    ),
    "C3.7": Cases(
        both(gp=1, cma=near(1)),
        {
            "gp vs cma not significant [main/HO]": ho(cma=1.5),
            "gp vs cma not significant [main/5F]": cv(cma=1.5),
        },
    ),
    "C3.8": Cases(
        merged(
            ho(cma=1, cma_r=1, cma_pv=1.5, cma_bw=1.5, cma_gv=1.5),
            ho(cma_pv_r=1.5, cma_bw_r=1.5, cma_gv_r=1.5),
            cv(cma=1, cma_r=1, cma_pv=3, cma_bw=3, cma_gv=3),
            cv(cma_pv_r=3, cma_bw_r=3, cma_gv_r=3),
        ),
        {
            "each selection variant ranks worse than its base [main/HO]": ho(cma_pv=0.5),
            "each selection variant ranks worse than its base [main/5F]": cv(cma_bw_r=0.5),
            "mean rank gap larger with 5F than HO": merged(
                cv(cma_pv=1.5, cma_bw=1.5, cma_gv=1.5),
                cv(cma_pv_r=1.5, cma_bw_r=1.5, cma_gv_r=1.5),
            ),
        },
    ),
    "C3.9": Cases(  # near copies: identical columns would leave the test no pair (underpowered)
        both(gp=1, gp_r=1, gp_sel=near(1), gp_sel_r=near(1)),
        {
            f"{sel} not significantly better than {base} [main/{label}]": where(
                **{sel.replace("-", "_"): 0.5}
            )
            for label, where in (("HO", ho), ("5F", cv))
            for sel, base in (("gp-sel", "gp"), ("gp-sel-r", "gp-r"))
        },
    ),
    "C3.11": Cases(
        {},
        {
            "medians within 2 points [main/HO]": ho(grid=5),
            "medians within 2 points [main/5F]": cv(grid=5),
        },
    ),
    "C3.13": Cases(
        both(gp_r=Col(3, 1, LARGEST), cma_r=Col(1, 3, LARGEST)),
        {
            f"{m} ranks {word} on the largest bin than the smallest [main/{label}]": where(
                **{m.replace("-", "_"): pattern}
            )
            for label, where in (("HO", ho), ("5F", cv))
            for m, word, pattern in (
                ("gp-r", "better", Col(1, 3, LARGEST)),  # cma-r's pattern
                ("cma-r", "worse", Col(3, 1, LARGEST)),  # gp-r's pattern
            )
        },
    ),
    "C3.14": Cases(
        {"gap": lambda t: 0.01 * t},
        {
            "gap at the last iteration > gap at the first": {
                "gap": lambda t: -0.5 if t == 100 else 0.01 * t
            },
            "gap increases with iterations (Spearman ρ > 0, p < alpha)": {
                "gap": lambda t: 0.5 if t == 100 else -0.01 * t
            },
        },
    ),
    "C3.15": Cases(
        pm_both(gp_pm_r=0),
        {
            "gp-pm-r lowest R, highest win rate [pm/HO]": pm_ho(gp_pm_r=3),
            "gp-pm-r lowest R, highest win rate [pm/5F]": pm_cv(gp_pm_r=3),
        },
    ),
    "C3.16": Cases(
        merged(pm_ho(gp_r=1, gp_pm_r=near(1, -TINY)), pm_cv(gp_r=1, gp_pm_r=0)),
        {
            "count(gp-pm-r, gp-r) > 0 [HO]": pm_ho(gp_pm_r=near(1)),
            "gp-pm-r vs gp-r not significant [HO]": pm_ho(gp_pm_r=0),
            "gp-pm-r significantly better than gp-r [5F]": pm_cv(gp_pm_r=near(1, -TINY)),
        },
    ),
    "C3.17": Cases(
        pm_both(gp=1, gp_pm=near(1)),
        {
            "gp-pm vs gp not significant [pm/HO]": pm_ho(gp_pm=0),
            "gp-pm vs gp not significant [pm/5F]": pm_cv(gp_pm=0),
        },
    ),
    "C3.18": _significance_pattern("gp-pm-r", {"HO": ALL_BETTER, "5F": ALL_BETTER}),
    "C3.19": _significance_pattern(
        "gp-r",
        {"HO": ALL_BETTER, "5F": {"grid": False, "rs": False, "gp": True, "gp-pm": False}},
    ),
}

CH3 = Catalogue(
    "chapter3",
    ch3.CLAIMS,
    {
        "main_ho": {m: 2 for m in ch3.MAIN_METHODS},
        "main_cv": {m: 2 for m in ch3.MAIN_METHODS},
        "pm_ho": {m: 2 for m in ch3.PM_METHODS},
        "pm_cv": {m: 2 for m in ch3.PM_METHODS},
        "gap": lambda t: 0.01 * t,
    },
    ch3_build,
    CH3_CASES,
    {
        "C3.1": lambda: ch3._reshuffling_helps_gp(ch3.HOLDOUT),
        "C3.2": lambda: ch3._reshuffling_helps_gp(ch3.CV5),
        "C3.4": lambda: ch3._gp_r_beats_all_but(ch3.HOLDOUT, set()),
        "C3.5": lambda: ch3._gp_r_beats_all_but(ch3.CV5, {"rs", "cma-r"}),
        "C3.7": lambda: ch3._not_significant_in_both(ch3.MAIN, "gp", "cma"),
        "C3.17": lambda: ch3._not_significant_in_both(ch3.PM, "gp-pm", "gp"),
        "C3.18": lambda: ch3._significance_pattern(
            "gp-pm-r", {ch3.HOLDOUT: ch3._ALL_BETTER, ch3.CV5: ch3._ALL_BETTER}
        ),
        "C3.19": lambda: ch3._significance_pattern(
            "gp-r",
            {
                ch3.HOLDOUT: ch3._ALL_BETTER,
                ch3.CV5: {"grid": False, "rs": False, "gp": True, "gp-pm": False},
            },
        ),
    },
)


# ----------------------------------------------------------------------------------- Chapter 4


def ch4_build(layers: dict[str, Any]) -> ch4.Inputs:
    n = layers["n"]
    return ch4.Inputs({SVM: scores(layers[SVM], n), SKLEARN: scores(layers[SKLEARN], n)}, 0.05)


def svm(**spec: float | Col) -> dict[str, Spec]:
    return {SVM: _hyphens(spec)}


def sk(**spec: float | Col) -> dict[str, Spec]:
    return {SKLEARN: _hyphens(spec)}


def _better_pairs(where: Callable[..., dict[str, Spec]], winner: str, losers: tuple[str, ...]):
    """``winner`` significantly better than each loser: holding, and one failing layer each."""
    under = winner.replace("-", "_")
    holding = where(**{under: 0}, **{m.replace("-", "_"): 1 for m in losers})
    return Cases(
        holding,
        {
            f"{winner} significantly better than {m}": where(**{m.replace("-", "_"): near(0)})
            for m in losers
        },
    )


def _nemenyi_eo_vs(eo: str, other: str) -> dict[str, Any]:
    """C4.14 with ``eo`` within the CD of ``other`` only: ranks 1.5 (the other EO variants),
    3 (eo), 4 (BO-post), 5 (other), 6.5, 8 (the remaining one of RS-best/CMA); CD 3.03."""
    rest = "CMA" if other == "RS-best" else "RS-best"
    return {SKLEARN: {eo: 1, "BO-post": 1.5, other: 1.8, rest: 3}}


def _eo_variants_same(
    c: tuple[int, int], sqm: tuple[int, int], sig: tuple[int, int], better_sig: bool = False
) -> dict:
    """C4.12: each EO variant worse by TINY on its slice (EO-sig better, with ``better_sig``)."""
    return sk(
        EO_C=Col(0, TINY, c),
        EO_sqm=Col(0, TINY, sqm),
        EO_sig=Col(0, -TINY if better_sig else TINY, sig),
    )


EMPTY = (0, 0)
CH4_CASES = {
    "C4.1": Cases(
        svm(EO=0, EO_post=1, BO_post=2, BO_best=3),
        {
            "R(EO) < R(BO-post)": svm(EO=2.5),
            "R(EO-post) < R(BO-post)": svm(EO_post=2.5),
            "R(BO-post) < R(BO-best)": svm(BO_best=1.5),
        },
    ),
    "C4.3": _better_pairs(svm, "EO", ("BO-best", "BO-post")),
    "C4.4": _better_pairs(svm, "EO-post", ("BO-best", "BO-post")),
    "C4.5": Cases(
        svm(EO=0, EO_post=near(0), BO_post=1, BO_best=near(1)),
        {
            "EO vs EO-post not significant": svm(EO_post=1),
            "BO-post vs BO-best not significant": svm(BO_best=2),
        },
    ),
    "C4.6": Cases(  # N = 6, k = 4: CD = 1.915; ranks 1.5, 1.5, 3, 4
        merged({"n": 6}, svm(EO=0, EO_post=0, BO_post=1, BO_best=2)),
        {
            "|R(EO) − R(BO-best)| > CD": svm(EO=1),
            "|R(EO-post) − R(BO-best)| > CD": svm(EO_post=1),
            "|R(BO-post) − R(BO-best)| ≤ CD": svm(BO_post=0),
            "|R(BO-post) − R(EO-post)| ≤ CD": svm(EO_post=-1),
            "|R(BO-post) − R(EO)| ≤ CD": svm(EO=-1),
        },
    ),
    "C4.7": Cases(
        svm(EO=0, BO_best=1),
        {
            "EO has the largest count": svm(EO_post=-1),
            "BO-best's count ≤ 1": svm(BO_best=Col(1, -1, (0, 2))),
        },
    ),
    "C4.8": Cases(
        sk(EO_sig=0, EO_sqm=1, EO_C=2, BO_post=3, BO_best=4, RS_post=5, RS_best=6, CMA=7),
        {
            "every EO variant ranks before BO-post": sk(EO_C=3.5),
            "BO-post ranks before BO-best": sk(BO_best=2.5),
            "BO-best ranks before RS-post, RS-best and CMA": sk(RS_post=3.5),
        },
    ),
    "C4.10": Cases(
        sk(EO_sqm=0, EO_C=0, EO_sig=0, BO_best=1, RS_post=1, RS_best=1, CMA=1),
        {
            f"{eo} significantly better than {m}": {SKLEARN: {eo: 0.5, m: near(0.5)}}
            for eo in ch4.EO_VARIANTS
            for m in ("BO-best", "RS-post", "RS-best", "CMA")
        },
    ),
    "C4.11": Cases(
        sk(EO_sqm=0, EO_sig=0, BO_post=1, EO_C=near(1, -TINY)),
        {
            "EO-sqm significantly better than BO-post": sk(EO_sqm=near(1, -TINY)),
            "EO-sig significantly better than BO-post": sk(EO_sig=near(1, -TINY)),
            "EO-C vs BO-post not significant": sk(EO_C=0),
        },
    ),
    "C4.12": Cases(  # 3 differences: never significant; 6 of one sign: significant
        _eo_variants_same(EMPTY, (0, 3), (3, 6)),
        {
            "EO-C vs EO-sqm not significant": _eo_variants_same(EMPTY, (0, 6), (3, 6)),
            "EO-C vs EO-sig not significant": _eo_variants_same(EMPTY, (0, 3), (0, 6)),
            "EO-sqm vs EO-sig not significant": _eo_variants_same(
                EMPTY, (0, 3), (3, 6), better_sig=True
            ),
        },
    ),
    "C4.13": Cases(
        sk(BO_post=0, BO_best=1, RS_post=near(2)),
        {
            "BO-post significantly better than BO-best": sk(BO_best=near(0)),
            "RS-post vs RS-best not significant": sk(RS_post=1),
        },
    ),
    "C4.14": Cases(  # N = 12, k = 8: CD = 3.03; ranks 2 (EO variants), 4, 7.5 (RS-best, CMA)
        merged({"n": 12}, sk(EO_sqm=0, EO_C=0, EO_sig=0, RS_best=3, CMA=3)),
        {
            f"R({other}) − R({eo}) > CD": _nemenyi_eo_vs(eo, other)
            for eo in ch4.EO_VARIANTS
            for other in ("RS-best", "CMA")
        },
    ),
}

CH4 = Catalogue(
    "chapter4",
    ch4.CLAIMS,
    {"n": N_DATASETS, **{space: {m: 2 for m in THESIS_METHODS[space]} for space in (SVM, SKLEARN)}},
    ch4_build,
    CH4_CASES,
)


# ----------------------------------------------------------------------------------- Chapter 5

BEST = ch5.BEST
CLASSIFIER_COUNTS = {"random_forest": 5, "svm_rbf": 4, "knn": 1}


def ch5_build(layers: dict[str, Any]) -> ch5.Inputs:
    table = scores(layers["scores"], layers["n"])
    marks = pd.DataFrame(
        {m: np.arange(len(table)) < layers["marks"].get(m, 0) for m in table.columns},
        index=table.index,
    )
    choices = pd.DataFrame({c: [n] for c, n in CLASSIFIER_COUNTS.items()}, index=["d00"])
    ranks = pd.DataFrame(layers["ranks"], index=list(ch5.rank_points(200)))
    return ch5.Inputs(
        table, 0.05, marks, repetitions=10, choices=choices, test_ranks=ranks, budget=200
    )


def s5(**spec: float | Col) -> dict[str, Spec]:
    return {"scores": _hyphens(spec)}


def _spearmint_not_worst() -> dict[str, Any]:
    """RS significantly better than Spearmint, yet Spearmint is best on 10 datasets (every
    other method significantly better still: large wins, tiny losses) and not worst."""
    winner, loser = upset(crowd=2, top=False)
    return {"scores": {"RS": winner, "Spearmint": loser}}


CH5_CASES = {
    "C5.1": Cases(
        s5(GP_cond_ls=0, GP_matern_ls=1),
        {
            f"{BEST} has the best rank": s5(GP_matern_ls=-1),
            f"GP-matern-ls ranks better than every method but {BEST}": s5(GP_matern_ls=3),
        },
    ),
    "C5.2": Cases(
        s5(GP_cond_ls=0, GP_matern_ls=near(0)),
        {
            **{
                f"{BEST} significantly better than {m}": {"scores": {m: near(0)}}
                for m in ch5.OTHERS
                if m != "GP-matern-ls"
            },
            f"{BEST} vs GP-matern-ls not significant": s5(GP_matern_ls=1),
        },
    ),
    "C5.3": Cases(
        s5(Spearmint=3),
        {
            "Spearmint has the worst rank": _spearmint_not_worst(),
            **{
                f"{m} significantly better than Spearmint": {"scores": {m: near(3, -TINY)}}
                for m in CH5_METHODS
                if m != "Spearmint"
            },
        },
    ),
    "C5.5": Cases(
        s5(
            GP_cond_ls=0,
            GP_cond=1,
            GP_laplace_ls=0,
            GP_laplace=1,
            GP_matern=1,
            GP_matern_ls=near(1, -TINY),
        ),
        {
            "R(GP-matern-ls) < R(GP-matern)": s5(GP_matern_ls=near(1)),
            "R(GP-cond-ls) < R(GP-cond)": s5(
                **dict(zip(("GP_cond_ls", "GP_cond"), upset(crowd=2), strict=True))
            ),
            "R(GP-laplace-ls) < R(GP-laplace)": s5(
                **dict(zip(("GP_laplace_ls", "GP_laplace"), upset(crowd=2), strict=True))
            ),
            "GP-cond-ls significantly better than GP-cond": s5(GP_cond=near(0)),
            "GP-laplace-ls significantly better than GP-laplace": s5(GP_laplace=near(0)),
            "GP-matern-ls vs GP-matern not significant": s5(GP_matern_ls=0),
        },
    ),
    "C5.7": Cases(  # N = 6, k = 11: CD = 6.16; ranks 1 (GP-cond-ls), 6 (the others), 11 (RS)
        merged({"n": 6}, s5(GP_cond_ls=0, RS=3)),
        {
            f"R(RS) − R({BEST}) > CD": s5(GP_cond_ls=2),
            **{
                f"R(RS) − R({m}) ≤ CD": {"scores": {m: -1}}
                for m in CH5_METHODS
                if m not in ("RS", BEST)
            },
        },
    ),
    "C5.8": Cases(
        s5(SMAC=0, RS=1, CMA=1, GP_matern=near(0), GP_cond=near(0)),
        {
            "SMAC significantly better than RS": s5(RS=near(0)),
            "SMAC significantly better than CMA": s5(CMA=near(0)),
            "SMAC vs GP-matern not significant": s5(GP_matern=1),
            "SMAC vs GP-cond not significant": s5(GP_cond=1),
        },
    ),
    "C5.9": Cases(
        {},
        {
            f"{BEST} never significantly worse than a dataset's best": {"marks": {BEST: 1}},
            "Spearmint significantly worse than the best on the most datasets": {
                "marks": {"SMAC": 5}
            },
        },
    ),
    "C5.11": Cases(
        {},
        {
            "RS's rank at t = 200 not better than at t = 50": {"ranks": {"RS": (6, 5)}},
            f"{BEST}'s rank at t = 200 better than at t = 50": {"ranks": {BEST: (2, 3)}},
        },
    ),
}

CH5 = Catalogue(
    "chapter5",
    ch5.CLAIMS,
    {
        "n": N_DATASETS,
        "scores": {m: 2 for m in CH5_METHODS},
        "marks": {"Spearmint": 5, "SMAC": 2},
        "ranks": {m: (5, 5) for m in CH5_METHODS} | {"RS": (5, 6), BEST: (3, 2)},
    },
    ch5_build,
    CH5_CASES,
)


# -------------------------------------------------------------------------------------- ESMBO

ITERATIONS = 30  # "the first 10 %" = iterations 1-3


@dataclass
class GivenStatistics(esmbo.SpaceResult):
    """A space's result with its statistics given (the claims' inputs), not computed."""

    given_table: pd.DataFrame | None = None
    given_pb: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        self.table, self.pb_curves = self.given_table, self.given_pb
        self.rank_curves = pd.DataFrame()


def esmbo_build(layers: dict[str, Any]) -> dict[str, esmbo.SpaceResult]:
    """Per space: methods in ``order`` (expected ranks 1-4), ``cells`` {(a, b): (Pr(a ≻ b),
    sign p)} (the reverse cell 1 - Pr, p = 1; other cells 0.5, 0.5), Pr(ESMBO ≻ SMBO) 0.95 from
    iteration ``first`` on and ``end`` at the last iteration."""
    results = {}
    for part in SPACES:
        space = layers[part]
        cells = {}
        for (a, b), (pb, p) in space["cells"].items():
            cells[(a, b)], cells[(b, a)] = (pb, p), (1 - pb, 1.0)
        rows = [
            {
                "row": a,
                "column": b,
                "rho": 0.5,
                "pb": cells.get((a, b), (0.5, 0.5))[0],
                "sign_p": cells.get((a, b), (0.5, 0.5))[1],
                "row_expected_rank": rank,
            }
            for rank, a in enumerate(space["order"], start=1)
            for b in space["order"]
        ]
        t = np.arange(1, ITERATIONS + 1)
        curve = np.where(t >= space["first"], 0.95, 0.5)
        curve[-1] = space["end"]
        n = layers["n"]
        results[part] = GivenStatistics(
            part,
            risks=pd.DataFrame({"dataset": [f"d{i}" for i in range(n)]}),
            losses=pd.DataFrame(),  # present: the PB test's input exists
            last=15,
            given_table=pd.DataFrame(rows),
            given_pb=pd.DataFrame({"ESMBO ≻ SMBO": curve}, index=t),
        )
    return results


HARD_OPPONENTS = {"svr": ("ERS", "RS", "SMBO"), "mlp": ("ERS", "RS")}
BEATEN = (0.95, 0.01)  # Pr 0.95 and sign p 0.01: significant by both tests

ESMBO_CASES = {
    "U1": Cases(
        {},
        {
            f"{part}: nothing beats ESMBO (beaten by [])": {
                part: {"cells": {("RS", "ESMBO"): BEATEN}}
            }
            for part in SPACES
        },
    ),
    "U2": Cases(
        {},
        {
            f"{part}: ESMBO first or second behind ERS": {
                part: {"order": ("ERS", "SMBO", "ESMBO", "RS")}
            }
            for part in SPACES
        },
    ),
    "U3": Cases(
        {},
        {
            f"{part}: no significant ESMBO-ERS difference": {
                part: {"cells": {("ESMBO", "ERS"): BEATEN}}
            }
            for part in esmbo.EASY_SPACES
        },
    ),
    "U4": Cases(
        {},
        {  # significant by the PB test only
            f"{part}: ESMBO significantly beats {other} (both tests)": {
                part: {"cells": {("ESMBO", other): (0.95, 0.5)}}
            }
            for part, others in HARD_OPPONENTS.items()
            for other in others
        },
    ),
    "U5": Cases(
        {},
        {
            (
                "mlp: ESMBO ≻ SMBO significant at the end"
                if part == "mlp"
                else f"{part}: significant within the first 10 % of iterations"
            ): {part: {"end": 0.5} if part == "mlp" else {"first": 10}}
            for part in SPACES
        },
    ),
}

ESMBO = Catalogue(
    "esmbo",
    tuple(esmbo.CLAIMS),
    {
        "n": 10,
        **{
            part: {
                "order": PAPER_ORDER,
                "cells": {("ESMBO", o): BEATEN for o in HARD_OPPONENTS.get(part, ())},
                "first": 1,
                "end": 0.95,
            }
            for part in SPACES
        },
    },
    esmbo_build,
    ESMBO_CASES,
)


# -------------------------------------------------------------------------------------- tests

CATALOGUES = {c.name: c for c in (CH3, CH4, CH5, ESMBO)}
HOLDING = [(c.name, claim) for c in CATALOGUES.values() for claim in c.cases]
FAILING = [
    (c.name, claim, condition)
    for c in CATALOGUES.values()
    for claim, cases in c.cases.items()
    for condition in cases.failing
]


def _outcome(catalogue: Catalogue, claim_id: str, inputs: Any) -> Outcome:
    return catalogue.claim(claim_id).evaluate(inputs)


@cache
def _holding_names(name: str, claim_id: str) -> tuple[str, ...]:
    """The condition names of a claim on its holding inputs (in the claim's order)."""
    catalogue = CATALOGUES[name]
    conditions = _outcome(catalogue, claim_id, catalogue.inputs(claim_id)).conditions
    return tuple(n for n, _ in conditions)


@pytest.mark.parametrize("name", list(CATALOGUES))
def test_every_multi_condition_claim_and_every_condition_has_a_case(name: str) -> None:
    catalogue = CATALOGUES[name]
    defaults = catalogue.build(merged(catalogue.defaults))
    counts = {c.id: len(c.evaluate(defaults).conditions) for c in catalogue.claims}
    multi = {claim for claim, n in counts.items() if n > 1}
    assert not multi - set(catalogue.cases), (
        f"{name}: multi-condition claims without cases in {__name__}: "
        f"{sorted(multi - set(catalogue.cases))}"
    )
    assert not set(catalogue.cases) - multi, (
        f"{name}: cases for claims that are not multi-condition: "
        f"{sorted(set(catalogue.cases) - multi)}"
    )
    for claim_id, cases in catalogue.cases.items():
        names = _holding_names(name, claim_id)
        assert len(set(names)) == len(names), f"{claim_id}: condition names repeat: {names}"
        uncovered, stale = set(names) - set(cases.failing), set(cases.failing) - set(names)
        assert not uncovered, f"{claim_id}: conditions without a failing case: {sorted(uncovered)}"
        assert not stale, f"{claim_id}: failing cases for no condition: {sorted(stale)}"


@pytest.mark.parametrize(("name", "claim_id"), HOLDING, ids=[c for _, c in HOLDING])
def test_claim_is_reproduced_when_every_condition_holds(name: str, claim_id: str) -> None:
    catalogue = CATALOGUES[name]
    inputs = catalogue.inputs(claim_id)
    conditions = _outcome(catalogue, claim_id, inputs).conditions
    assert [n for n, holds in conditions if holds is None or not holds] == []
    record = run_claim(catalogue.claim(claim_id), inputs)
    assert (record.status, record.reason) == (REPRODUCED, "all conditions hold")


@pytest.mark.parametrize(
    ("name", "claim_id", "condition"),
    FAILING,
    ids=[ascii_id(f"{c}: {n}") for _, c, n in FAILING],
)
def test_each_condition_alone_makes_the_claim_not_reproduced(
    name: str, claim_id: str, condition: str
) -> None:
    catalogue = CATALOGUES[name]
    holding = _holding_names(name, claim_id)
    index = holding.index(condition)
    inputs = catalogue.inputs(claim_id, condition)
    conditions = _outcome(catalogue, claim_id, inputs).conditions
    assert len(conditions) == len(holding)
    not_holding = [(i, n, h) for i, (n, h) in enumerate(conditions) if h is None or not h]
    assert not_holding == [(index, conditions[index][0], False)]  # decided: False, not None
    record = run_claim(catalogue.claim(claim_id), inputs)
    assert (record.status, record.reason) == (NOT_REPRODUCED, f"fails: {conditions[index][0]}")


# ------------------------------------------------------------- Chapter 3: inputs a claim lacks


def test_a_pattern_claim_whose_table_lacks_an_opponent_is_not_evaluated() -> None:
    # C3.19: gp-r against grid, rs, gp and gp-pm in the posterior-mean experiment; no gp-pm here
    pm = scores({"gp-r": 0, "grid": 1, "rs": 1, "gp": 1})
    row = ch3.claims_table({PM_HO: pm, PM_CV: pm}).loc["C3.19"]
    assert row["status"] == NOT_EVALUATED and "gp-pm" in row["reason"]


def test_our_value_states_ranks_and_the_signed_count_with_its_p_value() -> None:
    table = scores({"gp": 1, "gp-r": 0})
    row = ch3.claims_table({MAIN_HO: table}).loc["C3.1"]
    # the two-sided Wilcoxon of the 30 differences, scipy's normal approximation
    differences = table["gp-r"] - table["gp"]
    p = scipy_stats.wilcoxon(differences, correction=False, method="approx").pvalue
    assert row["our_value"] == f"R 1.00 vs 2.00; gp-r vs gp +30* (p={p:.3g})"


def test_size_bin_claim_without_a_datasets_size_is_not_evaluated() -> None:
    every = scores({m: 2 for m in ch3.MAIN_METHODS})
    tables = {MAIN_HO: every, MAIN_CV: every}
    sizes = pd.Series(np.linspace(50, 3000, N_DATASETS), index=every.index)
    first = every.index[0]
    for unsized in (sizes.drop(first), sizes.where(sizes.index != first)):  # absent, NaN
        row = ch3.claims_table(tables, dataset_sizes=unsized).loc["C3.13"]
        assert row["status"] == NOT_EVALUATED and "no |D_TVS| for 1 datasets" in row["reason"]


# ------------------------------------------- Chapter 3: the factories' claims, worked by hand

REBUILT = [(c.name, claim_id) for c in CATALOGUES.values() for claim_id in c.rebuilt]


def _ch3_inputs(*layers: Mapping[str, Any]) -> ch3.Inputs:
    """Chapter 3's inputs: every method at level 2 but where ``layers`` say otherwise."""
    return CH3.build(merged(CH3.defaults, *layers))


def _two_sided_p(first: pd.Series, second: pd.Series) -> float:
    """scipy's two-sided Wilcoxon p (normal approximation) of the nonzero differences."""
    differences = (first - second).to_numpy()
    differences = differences[differences != 0]
    return float(scipy_stats.wilcoxon(differences, correction=False, method="approx").pvalue)


@pytest.mark.parametrize(("name", "claim_id"), REBUILT, ids=[c for _, c in REBUILT])
def test_a_rebuilt_claim_is_the_catalogue_s_claim(name: str, claim_id: str) -> None:
    catalogue = CATALOGUES[name]
    case = catalogue.cases.get(claim_id, Cases({}, {}))
    for layer in (case.holding, *case.failing.values()):
        inputs = catalogue.build(merged(catalogue.defaults, case.holding, layer))
        listed = run_claim(catalogue.listed(claim_id), inputs)
        rebuilt = run_claim(catalogue.claim(claim_id), inputs)
        assert (rebuilt.status, rebuilt.reason, rebuilt.our_value) == (
            listed.status, listed.reason, listed.our_value,
        )  # fmt: skip


def test_gp_r_better_than_all_thirteen_reproduces_c3_4_and_fails_c3_5_unless_rs_and_cma_r_tie(
) -> None:  # fmt: skip
    everywhere_best = _ch3_inputs(both(gp_r=0))
    assert run_claim(CH3.claim("C3.4"), everywhere_best).status == REPRODUCED
    assert run_claim(CH3.claim("C3.5"), everywhere_best).status == NOT_REPRODUCED
    # rs and cma-r worse than gp-r by TINY on 3 datasets only: count +3, not significant
    close = _ch3_inputs(both(gp_r=0), cv(rs=near(0), cma_r=near(0)))
    assert run_claim(CH3.claim("C3.5"), close).status == REPRODUCED
    assert run_claim(CH3.claim("C3.4"), _ch3_inputs(both(gp_r=0), ho(rs=near(0)))).status == (
        NOT_REPRODUCED
    )


def test_c3_4_counts_a_significant_pair_with_a_zero_count_as_not_beaten() -> None:
    # grid wins by TINY on the first 15 datasets, gp-r by 1 on the other 15: count 15 − 15 = 0,
    # yet the large wins make the Wilcoxon test significant
    inputs = _ch3_inputs(both(gp_r=0), ho(grid=Col(1, -TINY, (0, 15))))
    table = inputs.tables[MAIN_HO]
    p = _two_sided_p(table["gp-r"], table["grid"])
    assert p < 0.05
    record = run_claim(CH3.claim("C3.4"), inputs)
    assert record.our_value == (
        f"gp-r sig. better than 12/13; not vs: gp-r vs grid +0* (p={p:.3g})"
    )
    assert record.status == NOT_REPRODUCED


def test_c3_7_our_value_is_each_setting_s_count_and_p() -> None:
    # cma worse than gp by TINY on 3 datasets: gp vs cma +3 in each setting
    inputs = _ch3_inputs(both(gp=1, cma=near(1)))
    expected = []
    for key, label in ((MAIN_HO, "main/HO"), (MAIN_CV, "main/5F")):
        table = inputs.tables[key]
        p = _two_sided_p(table["gp"], table["cma"])
        expected.append(f"{label} gp vs cma +3 (p={p:.3g})")
    record = run_claim(CH3.claim("C3.7"), inputs)
    assert (record.status, record.our_value) == (REPRODUCED, "; ".join(expected))


def test_c3_8_our_value_gives_each_setting_s_mean_rank_gap_by_hand() -> None:
    # hold-out: cma and cma-r at 1 (ranks 1, 2: 1.5 each), the six variants at 1.5 (ranks 3-8:
    # 5.5), the other six at 2 (9-14): every gap 4.0. 5-fold: the variants at 3 (ranks 9-14:
    # 11.5), the other six at 2 (3-8): every gap 10.0. Each variant is worse on all 30 datasets:
    # 6 of 6 significant degradations.
    inputs = _ch3_inputs(CH3_CASES["C3.8"].holding)
    record = run_claim(CH3.claim("C3.8"), inputs)
    assert record.our_value == (
        "main/HO mean rank gap 4.00, significant degradations 6/6, not worse: none; "
        "main/5F mean rank gap 10.00, significant degradations 6/6, not worse: none"
    )
    assert record.statistic == pytest.approx(10.0 - 4.0)


def test_c3_9_without_gp_r_and_gp_sel_names_both_as_missing() -> None:
    every = scores({m: 2 for m in ch3.MAIN_METHODS if m not in ("gp-r", "gp-sel")})
    row = ch3.claims_table({MAIN_HO: every, MAIN_CV: every}).loc["C3.9"]
    assert row["status"] == NOT_EVALUATED
    assert "['gp-r', 'gp-sel']" in row["reason"]


def test_a_method_ranking_first_in_every_size_bin_does_not_rank_better_on_the_largest() -> None:
    # gp-r best everywhere: rank 1 on the smallest and on the largest bin, no improvement
    inputs = _ch3_inputs(both(gp_r=0, cma_r=Col(1, 3, LARGEST)))
    conditions = dict(CH3.claim("C3.13").evaluate(inputs).conditions)
    for label in ("HO", "5F"):
        gp_r = f"gp-r ranks better on the largest bin than the smallest [main/{label}]"
        cma_r = f"cma-r ranks worse on the largest bin than the smallest [main/{label}]"
        assert (bool(conditions[gp_r]), bool(conditions[cma_r])) == (False, True)


# ------------------------------------------------------ Chapter 5: edge cases worked by hand


def _ch5_inputs(*layers: Mapping[str, Any]) -> ch5.Inputs:
    return CH5.build(merged(CH5.defaults, *layers))


def test_c5_11_a_rank_that_stays_the_same_is_not_better() -> None:
    # GP-cond-ls ranks 3 at t = 50 and at t = 200: no improvement
    conditions = dict(ch5._c5_11(_ch5_inputs({"ranks": {BEST: (3, 3)}})).conditions)
    assert conditions[f"{BEST}'s rank at t = 200 better than at t = 50"] is False


def test_c5_2_counts_a_significant_win_by_one_dataset_as_beaten() -> None:
    # 29 datasets; SMAC wins by TINY on the first 14, GP-cond-ls by 1 on the other 15: count
    # +1, and the Wilcoxon test (losses' ranks 1-14) significant; every other method at 2
    inputs = _ch5_inputs({"n": 29}, s5(GP_cond_ls=0, SMAC=Col(1, -TINY, (0, 14))))
    table = inputs.scores
    assert _two_sided_p(table[BEST], table["SMAC"]) < 0.05
    others = [m for m in ch5.OTHERS if m != "GP-matern-ls"]
    outcome = ch5._c5_2(inputs)
    assert outcome.our_value.startswith(f"significantly better than {len(others)}/{len(others)};")


def test_c5_7_without_rs_and_gp_cond_ls_names_both_as_missing() -> None:
    every = scores({m: 2 for m in CH5_METHODS if m not in ("RS", BEST)})
    row = ch5.claims_table(ch5.Inputs(every)).loc["C5.7"]
    assert row["status"] == NOT_EVALUATED
    assert "'RS'" in row["reason"] and f"'{BEST}'" in row["reason"]


def test_c5_10_reports_each_classifier_s_runs_and_share() -> None:
    # CLASSIFIER_COUNTS: 5 random forests, 4 RBF SVMs, 1 k-NN of 10 runs
    outcome = ch5._c5_10(_ch5_inputs())
    assert outcome.our_value == "10 runs: random_forest 5 (50%), svm_rbf 4 (40%), knn 1 (10%)"
