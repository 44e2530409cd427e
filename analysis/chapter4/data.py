"""Chapter-4 inputs built on the engine's loaders: outcome rows per search space, score tables
in the thesis's method names, per-repetition errors and the chosen ensembles' sizes.

The engine (``analysis.load``) reads the outcome columns, ``space``, ``n_members``, ``members``
and ``learner`` included. Results without a ``space`` column (written before it existed) get the
space inferred from the methods [decide]: a results set holding EO-sqm, EO-C, EO-sig or cma is
the scikit-learn space, any other the SVM space.

Method names are the thesis's (§4.4; ``hpo``'s method names already are) except ``cma``, which
Table 4.5 prints ``CMA``: :data:`DISPLAY_NAMES` renames it everywhere in this plug-in.
"""

from __future__ import annotations

import pandas as pd

from analysis import load
from analysis.chapter4.thesis import SKLEARN, SVM
from analysis.thesis_comparison import significantly_worse_than_best

DISPLAY_NAMES = {"cma": "CMA"}
# The thesis's methods per space, in the order of its Tables 4.4 and 4.6.
THESIS_METHODS = {
    SVM: ("BO-best", "BO-post", "EO-post", "EO"),
    SKLEARN: ("CMA", "RS-best", "RS-post", "BO-best", "BO-post", "EO-C", "EO-sqm", "EO-sig"),
}
# Methods this chapter's runs may produce besides the thesis's (shown in the all-methods tables).
OTHER_METHODS = {SVM: ("RS-best", "RS-post"), SKLEARN: ("EO-post",)}
SKLEARN_ONLY = {"EO-sqm", "EO-C", "EO-sig", "CMA"}
SPACE_LABELS = {SVM: "SVM space (§4.4.1)", SKLEARN: "scikit-learn space (§4.4.2)"}


def infer_space(methods: set[str]) -> str:
    """The space of results without a ``space`` column [decide, module docstring]."""
    return SKLEARN if methods & SKLEARN_ONLY else SVM


def prepare(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Outcome rows with display method names and a ``space`` column (inferred if absent)."""
    frame = outcomes.assign(method=outcomes["method"].replace(DISPLAY_NAMES))
    if "space" not in frame.columns or frame["space"].isna().all():
        frame["space"] = infer_space(set(frame["method"]))
    return frame


def repetition_errors(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Final test error in % per (space, dataset, method, repetition) — each run's last
    iteration (``analysis.load.final_outcomes``), averaged if a repetition appears twice."""
    final = load.final_outcomes(outcomes).assign(error=lambda f: 100.0 * f["test_error"])
    return final.groupby(["space", "dataset", "method", "repetition"])["error"].mean().reset_index()


def score_table(repetitions: pd.DataFrame, space: str) -> pd.DataFrame:
    """Datasets × methods mean test error in % of ``space`` (NaN where a method has no run);
    thesis methods first in the thesis's order, then the others alphabetically."""
    rows = repetitions[repetitions["space"] == space]
    if rows.empty:
        return pd.DataFrame()
    table = rows.groupby(["dataset", "method"])["error"].mean().unstack("method")
    known = [m for m in THESIS_METHODS[space] if m in table.columns]
    others = sorted(set(table.columns) - set(known))
    return table[known + others].rename_axis(index="dataset", columns=None)


def thesis_scores(scores: pd.DataFrame, space: str) -> tuple[pd.DataFrame, list[str]]:
    """The thesis's methods of ``space`` present in ``scores``, complete datasets only; and the
    datasets dropped because a method lacks a run there."""
    methods = [m for m in THESIS_METHODS[space] if m in scores.columns]
    if len(methods) < 2:
        return pd.DataFrame(), []
    return load.complete(scores[methods])


def lowest_error_counts(scores: pd.DataFrame) -> pd.Series:
    """Per method, the datasets where its mean test error is the lowest, a tie of k methods
    giving each 1/k (claim C4.7's "ties shared")."""
    best = scores.eq(scores.min(axis=1), axis=0)
    return best.div(best.sum(axis=1), axis=0).sum(axis=0).rename("lowest")


def significantly_worse_counts(
    repetitions: pd.DataFrame, space: str, methods: list[str], alpha: float = 0.05
) -> pd.DataFrame:
    """Per dataset × method: True where the method is significantly worse than the dataset's
    best (lowest mean) method — two-sided Wilcoxon signed-rank over the repetitions paired by
    repetition number, p < ``alpha`` (thesis's underlines of Tables 4.4/4.6, spec §4.5)."""
    rows = repetitions[repetitions["space"] == space]
    return significantly_worse_than_best(rows, methods, alpha)


def ensemble_sizes(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per (space, method): runs, mean/min/max ``n_members`` of the final choice (members with
    multiplicity) and mean number of distinct members (from ``members``)."""
    if "n_members" not in outcomes.columns:
        return pd.DataFrame()
    final = load.final_outcomes(outcomes)
    distinct = (
        final["members"].fillna("").map(lambda text: len({m for m in str(text).split(",") if m}))
        if "members" in final.columns
        else pd.Series(float("nan"), index=final.index)
    )
    final = final.assign(distinct=distinct.where(distinct > 0))
    grouped = final.groupby(["space", "method"])
    table = pd.DataFrame(
        {
            "runs": grouped.size(),
            "mean n_members": grouped["n_members"].mean(),
            "min n_members": grouped["n_members"].min(),
            "max n_members": grouped["n_members"].max(),
            "mean distinct members": grouped["distinct"].mean(),
        }
    )
    return table
