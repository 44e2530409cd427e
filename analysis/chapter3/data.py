"""Chapter-3 inputs built on the engine's loaders: the thesis's two experiments, gp's hold-out
curves (Fig 3.1, claim C3.14), ranks per |D_TVS| bin (Fig 3.4) and the methods that ran fewer
evaluations than their budget (grid search: the largest full grid within it)."""

from __future__ import annotations

import pandas as pd

from analysis import load, stats
from analysis.chapter3.claims import MAIN_METHODS, PM_METHODS, SIZE_BIN_EDGES
from analysis.load import ScoreKey


def thesis_experiment_tables(
    tables: dict[ScoreKey, pd.DataFrame],
) -> dict[ScoreKey, pd.DataFrame]:
    """Score tables of the thesis's two experiments, keyed (protocol, "main" | "pm").

    ``main``: the Table 3.1 methods of part ``main``. ``pm``: the Table 3.5 methods of part
    ``pm``, or of part ``main`` when the results have no ``pm`` part (e.g. the ``medium``
    profile runs gp-pm and gp-pm-r within ``main``). Tables with fewer than 2 methods are left out.
    """
    selected = {}
    for protocol in load.PROTOCOLS:
        for experiment, methods in (("main", MAIN_METHODS), ("pm", PM_METHODS)):
            source = tables.get((protocol, experiment))
            if source is None and experiment == "pm":
                source = tables.get((protocol, "main"))
            if source is None:
                continue
            columns = [m for m in methods if m in source.columns]
            if len(columns) >= 2:
                selected[(protocol, experiment)] = source[columns]
    return selected


def gp_holdout_curves(outcomes: pd.DataFrame, part: str = "main") -> pd.DataFrame:
    """``gp`` with hold-out: mean over repetitions of the incumbent's errors in %.

    Columns: dataset, iteration, test_error, valid_error (the input of claim C3.14 and Fig 3.1).
    """
    rows = outcomes[
        (outcomes["method"] == "gp")
        & (outcomes["protocol"] == "holdout")
        & (outcomes["part"] == part)
    ]
    means = rows.groupby(["dataset", "iteration"])[["test_error", "incumbent_valid_loss"]].mean()
    return means.mul(100.0).rename(columns={"incumbent_valid_loss": "valid_error"}).reset_index()


def ranks_by_size_bin(
    scores: pd.DataFrame, sizes: pd.Series, labels: tuple[str, ...]
) -> tuple[pd.DataFrame, pd.Series]:
    """Average per-dataset rank (among all methods of ``scores``) per Fig 3.4 |D_TVS| bin.

    Returns (bins × methods, datasets per bin); bins are ``analysis.claims.SIZE_BIN_EDGES``
    (right-closed) named by ``labels``. Datasets of unknown size are left out.
    """
    bins = pd.cut(sizes.reindex(scores.index), SIZE_BIN_EDGES, right=True, labels=list(labels))
    grouped = stats.per_dataset_ranks(scores).groupby(bins, observed=False)
    return grouped.mean(), grouped.size()


def short_of_budget(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Methods whose runs evaluated fewer points than their budget: per (method, budget) the
    most evaluations any of its runs made (its last iteration), only where that is below the
    budget. Grid search evaluates the largest full grid within the budget,
    ``floor(budget^(1/d))^d`` points for d hyperparameters (16 of 24 for C and gamma)."""
    last = outcomes.groupby(["method", "budget"], observed=True)["iteration"].max()
    short = last[last < last.index.get_level_values("budget")]
    return short.rename("evaluations").reset_index()


def budget_note(outcomes: pd.DataFrame) -> str:
    """One sentence per method of :func:`short_of_budget` ("" when every method used its budget),
    for the report and the figures that show those methods beside the others."""
    notes = [
        f"{row.method} ran {row.evaluations} evaluations, fewer than its budget of {row.budget}"
        + (" (the largest full grid within the budget, floor(budget^(1/d))^d points for d "
           "hyperparameters)" if row.method == "grid" else "")
        for row in short_of_budget(outcomes).itertuples()
    ]  # fmt: skip
    return ("Note: " + "; ".join(notes) + ".") if notes else ""
