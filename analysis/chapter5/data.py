"""Chapter-5 inputs built on the engine's loaders: outcome rows in the thesis's method names,
per-repetition final errors, score tables, the thesis's dataset columns (with substitutes and
datasets not run), per-dataset significance, rank-vs-iteration curves and the classifiers chosen.

Method names: the results spell the eleven methods of Table 5.2 as the thesis does, except
Chapter 3's ``rs`` and ``cma``, shown as RS and CMA (:data:`DISPLAY_NAMES`); Table 5.3's
"GP-matern-noimp." is GP-matern-noimpute.

Datasets: Table 5.2's 24 columns are the 18 UCI datasets (``hpo.data.catalog.CHAPTER45_UCI``) and
the
OpenML ids 46, 184, 389, 772, 917, 1049 (named ``openml:<id>`` in the runs). Offline, the sweep runs
OpenML 46 and 184 on UCI-121 substitutes under the substitute's name (and records a note, see
``analysis.report.dataset_notes``); :data:`SUBSTITUTES` maps them to their column [decide]. A
column without results is shown "not run", never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from analysis import load
from analysis.chapter5 import thesis
from analysis.thesis_comparison import significantly_worse_than_best

DISPLAY_NAMES = {"rs": "RS", "cma": "CMA", "GP-matern-noimp.": "GP-matern-noimpute"}
# The UCI-121 dataset a Table 5.2 column is run on when its OpenML copy is not available offline
# (``hpo.data.catalog.OPENML_SUBSTITUTES``: openml:46 -> molec-biol-splice, openml:184 ->
# chess-krvk). chess-krvk is also the ``ches`` column: its runs then fill both columns and count
# once in every statistic (one dataset, one row of the score table).
SUBSTITUTES = {"molec-biol-splice": "46", "chess-krvk": "184"}
CHOICE_METHOD = "GP-cond-ls"  # Figs 5.8-5.9: the classifiers chosen by this method


def prepare(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Outcome rows with the thesis's method names (:data:`DISPLAY_NAMES`)."""
    return outcomes.assign(method=outcomes["method"].replace(DISPLAY_NAMES))


def repetition_errors(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Final test error in % per (dataset, method, repetition): each run's last iteration
    (``analysis.load.final_outcomes``), averaged if a repetition appears twice."""
    final = load.final_outcomes(outcomes).assign(error=lambda f: 100.0 * f["test_error"])
    return final.groupby(["dataset", "method", "repetition"])["error"].mean().reset_index()


def method_order(methods: list[str] | pd.Index) -> list[str]:
    """Table 5.2's methods in the thesis's order, then any other alphabetically."""
    known = [m for m in thesis.METHODS if m in set(methods)]
    return known + sorted(set(methods) - set(thesis.METHODS))


def score_table(repetitions: pd.DataFrame) -> pd.DataFrame:
    """Datasets × methods mean test error in % (NaN where a method has no run)."""
    if repetitions.empty:
        return pd.DataFrame()
    table = repetitions.groupby(["dataset", "method"])["error"].mean().unstack("method")
    return table[method_order(table.columns)].rename_axis(index="dataset", columns=None)


def thesis_scores(scores: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The thesis's methods present in ``scores`` on the datasets where all have results; and
    the datasets dropped because one of them lacks a run there."""
    methods = [m for m in thesis.METHODS if m in scores.columns]
    if len(methods) < 2:
        return pd.DataFrame(), []
    return load.complete(scores[methods])


# --------------------------------------------------------------------------- dataset columns


@dataclass(frozen=True)
class Column:
    """One column of our Table 5.2: the thesis's column, the dataset of ours that fills it (None:
    not run) and the header shown."""

    thesis_column: str | None  # None: a dataset of ours that is not one of the thesis's 24
    dataset: str | None
    header: str


def dataset_columns(datasets: list[str] | pd.Index) -> list[Column]:
    """Table 5.2's 24 columns in the thesis's order, each filled by the dataset of that name,
    else by its substitute ("(substitute)" in the header), else "not run"; then our other
    datasets under their own names."""
    present = set(datasets)
    by_column: dict[str, str] = {}
    for name, column in thesis.column_of_dataset().items():
        if name in present:
            by_column[column] = name
    columns, used = [], set()
    for column in thesis.thesis_errors()[0].columns:
        if column in by_column:
            name = by_column[column]
            columns.append(Column(column, name, column))
        else:
            substitute = next(
                (s for s, c in SUBSTITUTES.items() if c == column and s in present), None
            )
            if substitute is not None:
                name = substitute
                columns.append(Column(column, name, f"{column} (substitute: {name})"))
            else:
                columns.append(Column(column, None, f"{column} (not run)"))
                continue
        used.add(name)
    for name in sorted(present - used):
        columns.append(Column(None, name, name))
    return columns


# ------------------------------------------------------------------ per-dataset significance


def significantly_worse(
    repetitions: pd.DataFrame, methods: list[str], alpha: float = 0.05
) -> pd.DataFrame:
    """Per dataset × method: True where the method is significantly worse than the dataset's
    best (lowest mean) method — two-sided Wilcoxon signed-rank over the repetitions paired by
    repetition number, p < ``alpha`` (the thesis's per-dataset test of §5.5.1). Datasets where
    fewer than two methods share two repetitions are left out."""
    return significantly_worse_than_best(repetitions, methods, alpha)


def paired_repetitions(repetitions: pd.DataFrame, methods: list[str]) -> int:
    """The fewest repetitions any dataset has for all of ``methods`` (0 when none)."""
    rows = repetitions[repetitions["method"].isin(methods)]
    counts = [
        len(block.pivot_table(index="repetition", columns="method", values="error").dropna())
        for _, block in rows.groupby("dataset")
    ]
    return min(counts, default=0)


# ----------------------------------------------------------------------------------- Fig 5.7

CURVE_COLUMNS = {"validation": "incumbent_valid_loss", "test": "test_error"}


def rank_curves(
    outcomes: pd.DataFrame, scores: pd.DataFrame, which: str, budget: int | None = None
) -> pd.DataFrame:
    """Fig 5.7: average rank (iteration × method) of the incumbent's ``which`` error
    (``"validation"`` or ``"test"``) at every iteration 1..budget.

    Per dataset, the error is averaged over repetitions at each iteration and carried forward
    (a method keeps its incumbent until it has a new one; CMA-ES has incumbents at generation
    ends only); ranks are among the methods of ``scores`` (the complete Table 5.2 set) on its
    datasets; an iteration where a method has no incumbent yet on a dataset leaves that
    dataset out at that iteration.
    """
    column = CURVE_COLUMNS[which]
    methods = list(scores.columns)
    if not methods or column not in outcomes.columns:
        return pd.DataFrame()
    rows = outcomes[outcomes["method"].isin(methods) & outcomes["dataset"].isin(scores.index)]
    if rows.empty:
        return pd.DataFrame()
    budget = int(budget or rows["iteration"].max())
    means = rows.groupby(["dataset", "iteration", "method"])[column].mean().unstack("method")
    means = means.reindex(columns=methods)
    iterations = np.arange(1, budget + 1)
    ranked = []
    for _, block in means.groupby(level="dataset"):
        block = block.droplevel("dataset")
        grid = block.reindex(sorted({*block.index, *iterations})).ffill().reindex(iterations)
        complete = grid.dropna()
        if complete.empty:
            continue
        ranks = scipy_stats.rankdata(complete.to_numpy(), method="average", axis=1)
        ranked.append(pd.DataFrame(ranks, index=complete.index, columns=methods))
    if not ranked:
        return pd.DataFrame()
    return pd.concat(ranked).groupby(level=0).mean().rename_axis("iteration")


def budget_of(outcomes: pd.DataFrame) -> int:
    """The runs' budget (largest ``budget``, else the largest iteration)."""
    if "budget" in outcomes.columns and outcomes["budget"].notna().any():
        return int(outcomes["budget"].max())
    return int(outcomes["iteration"].max())


# ------------------------------------------------------------------------------- Figs 5.8-5.9


def classifier_choices(outcomes: pd.DataFrame, method: str = CHOICE_METHOD) -> pd.DataFrame:
    """Figs 5.8-5.9: per dataset (rows) the number of runs of ``method`` whose final model is
    each classifier (columns: the ``learner`` values, by overall frequency). Empty when the
    results have no ``learner`` column or no run of ``method``."""
    if "learner" not in outcomes.columns:
        return pd.DataFrame()
    final = load.final_outcomes(outcomes[outcomes["method"] == method])
    if final.empty:
        return pd.DataFrame()
    learners = final["learner"].astype(object).fillna("unknown")
    table = pd.crosstab(final["dataset"], learners).rename_axis(index="dataset", columns=None)
    order = table.sum().sort_values(ascending=False, kind="stable").index
    return table[order]
