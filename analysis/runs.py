"""Run health per method, in every report: how many runs each method has, how many
never left a plateau, and how many final retrainings reached libsvm's iteration limit.

A run is *stuck* when its whole trace holds one distinct validation loss
(``distinct_valid_losses == 1``, a run-level column of the results): every configuration it tried
predicted one class (C tiny or γ huge in Chapter 3's space), so the losses gave the optimizer no
direction. CMA-ES started from a random corner did this in 12 % of its runs on the thesis's
datasets (docs/deviations.md, "CMA-ES's start"); a plateau must never be silent. Results written
before the column existed count as "not recorded".
"""

from __future__ import annotations

import pandas as pd

from analysis.render import TableWriter

STUCK_COLUMN = "distinct_valid_losses"
RETRAIN_HIT_COLUMN = "test_fit_limit_hit"


def run_health(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per method: ``runs``, ``stuck runs`` (NA where not recorded) and ``runs whose final
    retraining hit the limit`` (any reported incumbent's retraining)."""
    per_run = outcomes.groupby(["method", "run_id"], observed=True)
    table = pd.DataFrame({"runs": per_run.size().groupby(level="method", observed=True).size()})
    if STUCK_COLUMN in outcomes:
        distinct = per_run[STUCK_COLUMN].first()
        stuck = (distinct == 1).where(distinct.notna())
        table["stuck runs"] = stuck.groupby(level="method", observed=True).sum(min_count=1)
    else:
        table["stuck runs"] = pd.NA
    if RETRAIN_HIT_COLUMN in outcomes:
        hit = outcomes[RETRAIN_HIT_COLUMN].fillna(False).astype(bool).to_numpy()
        hit_runs = outcomes.loc[hit, ["method", "run_id"]].drop_duplicates()
        counts = hit_runs.groupby("method", observed=True).size()
        table["retraining hit the limit"] = counts.reindex(table.index, fill_value=0)
    table = table.astype("Int64")
    table.index.name = "method"
    return table


def section(outcomes: pd.DataFrame, write: TableWriter) -> str:
    """The report's "Runs" section: :func:`run_health` and one sentence per stuck method."""
    table = run_health(outcomes)
    stuck = table["stuck runs"].dropna()
    stuck = stuck[stuck > 0]
    lines = [
        "## Runs\n",
        "Per method: finished runs; runs stuck on a plateau (one distinct validation loss over "
        "the whole run: every configuration tried predicted one class, so the optimizer had no "
        "direction; blank where the results predate this count); runs whose chosen model's "
        "retraining on D_TVS reached libsvm's iteration limit (kept, not scored 1.0: "
        "`fit_guard.retrain_on_limit`).",
        "",
    ]
    if not stuck.empty:
        named = ", ".join(f"{method} ({int(count)})" for method, count in stuck.items())
        lines += [f"> **Runs stuck on a plateau:** {named}.", ""]
    lines.append(write(table, "run_health", "Runs per method"))
    return "\n".join(lines)
