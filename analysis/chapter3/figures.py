"""The Chapter-3 figures (thesis Figs 3.1, 3.3–3.5), drawn from prepared tables.

Every function returns a ``matplotlib.figure.Figure`` (no pyplot state, any backend) from data the
caller prepared with ``analysis.load``; ``analysis.figures.save`` writes it as PNG and PDF.

* Fig 3.1 — overfitting example: validation error of ``gp``'s incumbent and test error of the
  retrained incumbent vs the number of evaluations, one dataset, hold-out.
* Fig 3.3 — mean test error (top) and average rank (bottom) vs evaluations, hold-out and 5-fold.
* Fig 3.4 — average rank per |D_TVS| bin, one panel per validation type.
* Fig 3.5 — posterior-mean vs argmin selection on a synthetic 1-D function, with the project's GP
  (``hpo.optimizers.bayes.GPEIOptimizer``).

Figs 3.3 and 3.4 plot the six series the thesis plots: one colour per base optimiser, dashed for
reshuffled splits (``-r``), solid for fixed splits [thesis].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.figures import CURVE_METHODS, no_data, plot_series, shared_legend
from analysis.load import PROTOCOL_LABELS
from hpo.gp.model import GPPosterior
from hpo.optimizers.base import Proposal
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Real, Space

# ------------------------------------------------------------------------------------ Fig 3.3


def rank_label(tables: Iterable[pd.DataFrame | None]) -> str:
    """The rank axis's label: among how many methods the ranks are (the columns of the rank
    tables) and how many of them are drawn (:data:`CURVE_METHODS`)."""
    ranked = {table.shape[1] for table in tables if table is not None and not table.empty}
    drawn = {
        sum(m in table.columns for m in CURVE_METHODS)
        for table in tables
        if table is not None and not table.empty
    }
    if len(ranked) != 1 or len(drawn) != 1:
        return "average rank (among each panel's methods)"
    (k,), (shown,) = ranked, drawn
    return f"average rank among {k} methods ({shown} drawn)"


def figure_3_3(
    errors: Mapping[str, pd.DataFrame],
    ranks: Mapping[str, pd.DataFrame],
    n_datasets: int,
    note: str = "",
) -> Figure:
    """Fig 3.3: columns = protocols; top = mean test error over datasets, bottom = average rank.

    ``errors[protocol]``: iteration × method mean test error in % (each method at its own
    iterations); ``ranks[protocol]``: iteration × method average rank (at t = 6k and the last)
    among all its columns, of which the :data:`CURVE_METHODS` are drawn. ``note``: a line
    printed above the panels (e.g. that grid search ran fewer evaluations than the budget).
    """
    figure = Figure(figsize=(10, 7), layout="constrained")
    axes = figure.subplots(2, 2, sharex="col", squeeze=False)
    for column, protocol in enumerate(("holdout", "cv5")):
        top, bottom = axes[0, column], axes[1, column]
        top.set_title(PROTOCOL_LABELS[protocol])
        for ax, table, what in (
            (top, errors.get(protocol), "test errors"),
            (bottom, ranks.get(protocol), "ranks"),
        ):
            if table is None or table.empty:
                no_data(ax, what)
            else:
                plot_series(ax, table, marker="o" if ax is bottom else None)
            ax.grid(alpha=0.3)
        bottom.set_xlabel("number of function evaluations")
    axes[0, 0].set_ylabel(f"mean test error (%) over {n_datasets} datasets")
    axes[1, 0].set_ylabel(rank_label(ranks.values()))
    if note:
        figure.suptitle(note, fontsize=8, wrap=True)
    shared_legend(figure, axes.ravel())
    return figure


# ------------------------------------------------------------------------------------ Fig 3.4


def figure_3_4(bin_ranks: Mapping[str, pd.DataFrame], bin_counts: pd.Series) -> Figure:
    """Fig 3.4: average rank per |D_TVS| bin (x), one panel per protocol.

    ``bin_ranks[protocol]``: bins × methods; ``bin_counts``: datasets per bin (x labels).
    """
    figure = Figure(figsize=(10, 4), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True, squeeze=False)[0]
    labels = [f"{b}\n(n = {n})" for b, n in bin_counts.items()]
    for ax, protocol in zip(axes, ("holdout", "cv5"), strict=True):
        ax.set_title(PROTOCOL_LABELS[protocol])
        table = bin_ranks.get(protocol)
        if table is None or table.empty:
            no_data(ax, "ranks")
        else:
            plot_series(ax, table.reset_index(drop=True), marker="o")
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel("|D_TVS| (training + validation data)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(rank_label(bin_ranks.values()))
    shared_legend(figure, axes)
    return figure


# ------------------------------------------------------------------------------------ Fig 3.1


def _error_limits(errors: pd.DataFrame) -> tuple[float, float]:
    """y limits holding every value of ``errors`` with a margin (not below 0)."""
    low, high = errors.stack().agg(["min", "max"])
    pad = max(0.5, 0.1 * (high - low))
    return max(0.0, low - pad), high + pad


def figure_3_1(curve: pd.DataFrame, dataset: str, repetitions: int) -> Figure:
    """Fig 3.1: ``gp``, hold-out, one dataset; columns iteration, valid_error, test_error (%).

    Every panel's y axis holds all it draws. When the first, poor incumbents would squash the
    rest (the whole range over twice that of the run after its first tenth), a second panel
    below zooms on the run after its first tenth, where the gap between validation and test
    error shows.
    """
    figure = Figure(figsize=(6, 4), layout="constrained")
    columns = ["valid_error", "test_error"]
    tail = curve[curve["iteration"] > curve["iteration"].max() / 10]
    zoom = not tail.empty and np.ptp(curve[columns].to_numpy()) > 2 * max(
        np.ptp(tail[columns].to_numpy()), 0.5
    )
    if zoom:
        figure.set_figheight(6)
    axes = figure.subplots(2 if zoom else 1, 1, squeeze=False)[:, 0]
    if curve.empty:
        no_data(axes[0], f"gp hold-out results for {dataset}")
    for ax, part in zip(axes, (curve, tail), strict=False):
        if part.empty:
            break
        ax.step(part["iteration"], part["valid_error"], where="post", label="validation error")
        ax.step(part["iteration"], part["test_error"], where="post", label="test error")
        ax.set_ylim(*_error_limits(part[columns]))
        ax.set_ylabel("error of the incumbent (%)")
        ax.grid(alpha=0.3)
    axes[0].set_title(f"gp, hold-out, {dataset} (mean over {repetitions} repetitions)")
    if not curve.empty:
        axes[0].legend()
    if zoom:
        axes[1].set_title("after the first tenth of the evaluations (zoom)", fontsize=9)
    axes[-1].set_xlabel("number of function evaluations")
    axes[0].set_ylabel("error of the incumbent (%)")
    return figure


# ------------------------------------------------------------------------------------ Fig 3.5

SYNTHETIC_BOUNDS = (-2.0, 2.0)


def synthetic_function(x: np.ndarray) -> np.ndarray:
    """``f(x) = sin(3x) + 0.3 x²`` on [−2, 2] [decide, docs/deviations.md]."""
    return np.sin(3 * x) + 0.3 * x**2


def _fit_gp(x: np.ndarray, y: np.ndarray, seed: int) -> GPEIOptimizer:
    low, high = SYNTHETIC_BOUNDS
    space = Space("synthetic", (Real("x", low, high),))
    optimizer = GPEIOptimizer(space, budget=len(x), rng=np.random.default_rng(seed))
    for i, (xi, yi) in enumerate(zip(x, y, strict=True)):
        optimizer.tell(Proposal(u=np.array([(xi - low) / (high - low)]), batch=i + 1), float(yi))
    return optimizer


def _integrated_mean(optimizer: GPEIOptimizer, u: np.ndarray, seed: int) -> np.ndarray:
    """Sample-averaged latent posterior mean at ``u (m,)`` (same chain and sample count)."""
    X, y = np.array(optimizer.X), np.array(optimizer.y)
    hypers = optimizer.chain.copy().sample(X, y, optimizer.n_samples, np.random.default_rng(seed))
    return GPPosterior(optimizer.kernel, X, y, hypers).mean(u[:, None]).mean(axis=0)


def figure_3_5(n_points: int = 20, noise_sd: float = 0.1, seed: int = 0) -> Figure:
    """Fig 3.5: noisy observations, GP posterior mean, and the three minimisers.

    ``n_points`` x uniform in [−2, 2], y = f(x) + N(0, noise_sd²), all from ``seed``. Markers:
    argmin of the observations (green), argmin of the integrated posterior mean
    (``GPEIOptimizer.posterior_mean_argmin``, orange), true minimum (grey).
    """
    rng = np.random.default_rng(seed)
    low, high = SYNTHETIC_BOUNDS
    x = rng.uniform(low, high, n_points)
    y = synthetic_function(x) + noise_sd * rng.standard_normal(n_points)
    optimizer = _fit_gp(x, y, seed)
    grid = np.linspace(low, high, 801)
    mean = _integrated_mean(optimizer, (grid - low) / (high - low), seed)
    x_pm = low + (high - low) * float(optimizer.posterior_mean_argmin("space")[0])
    x_true = grid[np.argmin(synthetic_function(grid))]
    best = int(np.argmin(y))

    figure = Figure(figsize=(9, 4), layout="constrained")
    ax = figure.add_subplot()
    ax.plot(grid, synthetic_function(grid), "--", color="grey", label="true function")
    ax.plot(x, y, "o", color="tab:green", ms=5, label="noisy observations")
    ax.plot(grid, mean, color="tab:orange", label="GP posterior mean")
    pm_value = float(np.interp(x_pm, grid, mean))
    for xm, ym, colour, label in (
        (x[best], y[best], "tab:green", "argmin of observations"),
        (x_pm, pm_value, "tab:orange", "argmin of posterior mean"),
        (x_true, synthetic_function(np.array(x_true)), "grey", "true minimum"),
    ):
        ax.plot(xm, ym, "x", color=colour, ms=12, mew=3, label=f"{label} (x = {xm:.2f})")
    ax.set_xlabel("x")
    ax.set_ylabel("f(x)")
    ax.set_title(f"f(x) = sin(3x) + 0.3x², {n_points} points, noise sd {noise_sd}, seed {seed}")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    return figure
