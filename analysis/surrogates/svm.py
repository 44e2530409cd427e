"""Beyond the study: Hyperband and BOHB (model-based Hyperband, Falkner et al.
2018) with the training-set fraction as their resource beside random search and GP-EI on the
thesis's RBF-SVM (Chapter 3), the part ``svm`` of the ``surrogates`` experiment.

What a reader asks is whether Hyperband or BOHB reaches the others' test error for fewer SVM
fits: the
figure draws, per dataset, the median over repetitions of the incumbent's test error against the
run's cumulative SVM-fit seconds (the trace's ``fit_seconds``: every fit of the search, partial
ones on a share of the rows included; the final retraining is not counted); the table gives the
final test error and the total fit seconds per method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.figures import method_styles
from analysis.render import format_number

PART = "svm"
METHODS = ("rs", "gp", "hyperband", "bohb")
MAX_PANELS = 9


def curves(outcomes: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """``dataset, method, run_id, iteration, seconds, test``: each evaluation's cumulative fit
    seconds and the incumbent's test error (%) after it."""
    rows = outcomes[(outcomes["part"] == PART) & outcomes["method"].isin(METHODS)]
    trace = traces[traces["part"] == PART].sort_values(["run_id", "iteration"])
    seconds = trace.assign(seconds=trace.groupby("run_id")["fit_seconds"].cumsum())
    merged = rows[["dataset", "method", "run_id", "iteration", "test_error"]].merge(
        seconds[["run_id", "iteration", "seconds"]], on=["run_id", "iteration"]
    )
    merged["test"] = 100 * merged.pop("test_error").astype(float)
    return merged.sort_values(["run_id", "iteration"]).reset_index(drop=True)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method): mean final test error (%), median total fit seconds, runs."""
    final = frame.groupby("run_id").tail(1)
    grouped = final.groupby(["dataset", "method"])
    table = pd.DataFrame(
        {
            "test error mean": grouped["test"].mean(),
            "fit seconds median": grouped["seconds"].median(),
            "runs": grouped.size(),
        }
    )
    return table


def _step_median(runs: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    values = []
    for _, run in runs.groupby("run_id"):
        at = np.searchsorted(run["seconds"].to_numpy(), grid, side="right") - 1
        values.append(np.where(at >= 0, run["test"].to_numpy()[np.maximum(at, 0)], np.nan))
    stacked = np.vstack(values)
    complete = ~np.isnan(stacked).any(axis=0)
    median = np.full(len(grid), np.nan)
    median[complete] = np.median(stacked[:, complete], axis=0)
    return median


def figure(frame: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    """Test error against cumulative SVM-fit seconds, one panel per dataset (the first
    :data:`MAX_PANELS`), and the plotted medians."""
    datasets = sorted(frame["dataset"].unique())[:MAX_PANELS]
    columns = min(3, len(datasets))
    rows = -(-len(datasets) // columns)
    fig = Figure(figsize=(4 * columns, 3 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
    plotted = []
    styles = method_styles(frame["method"].unique())
    for ax, dataset in zip(axes, datasets, strict=False):
        subset = frame[frame["dataset"] == dataset]
        positive = subset.loc[subset["seconds"] > 0, "seconds"]
        grid = np.geomspace(positive.min(), subset["seconds"].max(), 50)
        for method in [m for m in METHODS if m in set(subset["method"])]:
            median = _step_median(subset[subset["method"] == method], grid)
            ax.plot(grid, median, label=method, **styles[method].line(False))
            plotted.append(pd.DataFrame({"dataset": dataset, "method": method, "seconds": grid,
                                         "median test error": median}))  # fmt: skip
        ax.set_xscale("log")
        ax.set_title(dataset, fontsize=9)
        ax.grid(alpha=0.3, which="both")
    for ax in axes[len(datasets) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    fig.supxlabel("cumulative SVM-fit seconds of the search")
    fig.supylabel("test error of the incumbent (%)")
    return fig, pd.concat(plotted, ignore_index=True) if plotted else pd.DataFrame()


def shown(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["test error mean"] = table["test error mean"].map(format_number)
    out["fit seconds median"] = table["fit seconds median"].map(lambda v: format_number(v, 2))
    out["runs"] = table["runs"].astype(int).astype(str)
    labels = [f"{dataset} / {method}" for dataset, method in table.index]
    return out.set_axis(pd.Index(labels, name="dataset / method"))
