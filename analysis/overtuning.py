"""Overtuning of the incumbent along each run (Schneider, Bischl & Feurer 2025, arXiv 2506.19540).

Owns the definitions and the per-method summaries every chapter's report shows. For one run of one
method, with λ*_t the incumbent after t evaluations and test(λ*_t) its test error:

* overtuning  ot_t = test(λ*_t) − min_{t' ≤ t} test(λ*_{t'})  (≥ 0; 0 while test error only
  improves; the size of the loss when a later incumbent is worse on test than an earlier one);
* relative overtuning  rot_t = ot_t / (test(reference) − min_{t' ≤ t} test(λ*_{t'})), the share
  of the test improvement over the reference that overtuning gave back; rot_t > 1 means the
  incumbent is worse on test than the reference. The reference is the first incumbent (the
  paper's default, :data:`FIRST`) or a default configuration's test error per run
  (``reference_errors``). Zero division (no test improvement over the reference yet): 0 when
  ot_t = 0, +inf when ot_t > 0 (worse than a reference that was never beaten).

Outcome rows are what the results hold: columns run_id, method, iteration, test_error (a
fraction). A method only has rows where it has an incumbent: every iteration for most, generation
ends for CMA-ES; the first incumbent is then the first row we have (t = 6 for CMA-ES), not the
very first configuration evaluated. Curves are computed on those rows only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RUN_KEYS = ["run_id", "method"]
FIRST = "first incumbent"
QUANTILES = (0.9, 0.95)


def relative_overtuning(overtuning: np.ndarray, improvement: np.ndarray) -> np.ndarray:
    """``overtuning / improvement``; 0 for 0/0 and +inf for a positive overtuning over 0."""
    overtuning = np.asarray(overtuning, dtype=float)
    improvement = np.asarray(improvement, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = overtuning / improvement
    no_improvement = improvement <= 0
    return np.where(no_improvement, np.where(overtuning > 0, np.inf, 0.0), ratio)


def overtuning_curves(
    outcomes: pd.DataFrame, reference_errors: pd.Series | None = None
) -> pd.DataFrame:
    """Per (run, method, iteration): test_error, overtuning, relative_overtuning, reference_error.

    ``outcomes``: at least run_id, method, iteration, test_error (other columns are kept).
    ``reference_errors``: test error of a default configuration per run_id; default: each run's
    first incumbent (:data:`FIRST`). Errors stay in the unit of ``test_error``.
    """
    rows = outcomes.sort_values([*RUN_KEYS, "iteration"], kind="stable").reset_index(drop=True)
    by_run = rows.groupby(RUN_KEYS, sort=False, observed=True)["test_error"]
    best_so_far = by_run.cummin()
    if reference_errors is None:
        reference = by_run.transform("first")
    else:
        reference = rows["run_id"].map(reference_errors).astype(float)
    overtuning = rows["test_error"] - best_so_far
    return rows.assign(
        overtuning=overtuning,
        relative_overtuning=relative_overtuning(overtuning, reference - best_so_far),
        reference_error=reference,
    )


def final_overtuning(curves: pd.DataFrame) -> pd.DataFrame:
    """Each (run, method)'s row at its last iteration."""
    last = curves.groupby(RUN_KEYS, sort=False, observed=True)["iteration"].transform("max")
    return curves[curves["iteration"] == last]


def summary(curves: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group of ``by``: final-iteration overtuning across runs, test errors in % points.

    Columns: runs; share_positive (runs with ot_T > 0); mean and quantiles :data:`QUANTILES` of
    ot_T; median relative overtuning; share_worse_than_reference (final test error above the
    reference's, i.e. rot_T > 1).
    """
    final = final_overtuning(curves).assign(
        points=lambda f: 100.0 * f["overtuning"],
        positive=lambda f: (f["points"] > 0).astype(float),
        worse=lambda f: f["test_error"] > f["reference_error"],
    )
    grouped = final.groupby(by, sort=True, observed=True)
    table = pd.DataFrame(
        {
            "runs": grouped.size(),
            "share_positive": grouped["positive"].mean(),
            "mean": grouped["points"].mean(),
            **{f"q{round(100 * q)}": grouped["points"].quantile(q) for q in QUANTILES},
            "median_relative": grouped["relative_overtuning"].median(),
            "share_worse_than_reference": grouped["worse"].mean(),
        }
    )
    return table


def mean_curves(curves: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Mean overtuning in % points over runs: iteration × method (each at its own iterations)."""
    keys = [*(by or []), "iteration", "method"]
    means = curves.groupby(keys, observed=True)["overtuning"].mean().mul(100.0)
    return means.unstack("method").rename_axis(columns=None)
