"""The demo report's sections: what ran, mean test error per dataset and method (average rank
below), win/loss counts, convergence curves and critical-difference diagrams — each for the
validation types, parts and methods the results hold, nothing for what did not run.

Entry point: :func:`sections`, called by the engine (``analysis.report.write_report``) through
the plug-in ``analysis.demo.PLUGIN``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis import cd_diagram, load, render, stats
from analysis.figures import no_data, plot_series, shared_legend
from analysis.plugins import ReportContext
from analysis.power import power, smallest_attainable_p

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ScoreTables = dict[load.ScoreKey, pd.DataFrame]
ALPHA = 0.05  # the win/loss marks' level


def _label(key: load.ScoreKey, keys: list[load.ScoreKey]) -> str:
    """``hold-out``; ``hold-out, part main`` when the results have several parts."""
    protocol, part = key
    label = load.PROTOCOL_LABELS.get(protocol, protocol)
    return label if len({k[1] for k in keys}) == 1 else f"{label}, part {part}"


def _listing(values: object) -> str:
    return ", ".join(map(str, values))


def title_section(source: Path, outcomes: pd.DataFrame, tables: ScoreTables) -> str:
    keys = list(tables)
    methods = load.method_order(outcomes["method"].unique())
    evaluations = outcomes.groupby("method", observed=True)["iteration"].max()
    budgets = sorted(outcomes["budget"].unique())
    short = [
        f"{m} ({evaluations[m]})" for m in methods if evaluations[m] < min(budgets)
    ]  # grid: the largest full grid within the budget
    repetitions = outcomes.groupby("part", observed=True)["repetition"].nunique()
    lines = [
        "# Demo report\n",
        f"Results: `{source}` — {outcomes['dataset'].nunique()} datasets "
        f"({_listing(sorted(outcomes['dataset'].unique()))}), "
        f"{_listing(f'{n} repetition' + 's' * (n != 1) for n in repetitions)}, budget "
        f"{_listing(budgets)} evaluations; validation: {_listing(_label(k, keys) for k in keys)}; "
        f"methods: {_listing(methods)}.",
    ]
    if short:
        lines.append(
            f"Methods that made fewer evaluations than the budget: {_listing(short)} (grid search "
            "runs the largest full grid within the budget)."
        )
    lines.append(
        "\nA check of the pipeline end to end on small bundled datasets, not the thesis's "
        "experiment: `make reproduce-chapter3` compares methods with the thesis's tables and "
        "claims.\n"
    )
    return "\n".join(lines)


def errors_section(tables: ScoreTables, errors: pd.DataFrame, write: render.TableWriter) -> str:
    parts = [
        "## Test error per dataset\n",
        "Test error in % of the final model: mean (std) over repetitions (n/a: one "
        "repetition), **bold** = lowest on the dataset; last row: average rank over the datasets "
        "(1 = best). Only datasets where every method finished are ranked. The CSV holds the "
        "numbers: per method its mean (or average rank) and a `std` column.\n",
    ]
    stds = load.score_tables(errors, "std")
    counts = load.score_tables(errors, "repetitions")
    for key, means in tables.items():
        caption = f"Test error (%), {_label(key, list(tables))}"
        kept, dropped = load.complete(means)
        cells, numbers = render.mean_std_cells(means, stds[key], counts[key])
        if len(kept):
            ranks = stats.average_ranks(kept).reindex(means.columns)
            cells.loc["average rank"] = ranks.map(render.format_number)
            numbers.loc["average rank"] = ranks  # under each method's mean; its std empty
        parts.append(f"### {caption}\n")
        name = f"test_error_{key[0]}_{key[1]}"
        parts.append(
            write(cells.rename_axis("dataset"), name, caption, numbers.rename_axis("dataset"))
        )
        if dropped:
            parts.append(f"Not ranked (a method has no finished run): {_listing(dropped)}.\n")
    return "\n".join(parts)


def smallest_p(n_datasets: int) -> float:
    """The power rule's smallest two-sided Wilcoxon p over ``n_datasets`` paired scores
    (:func:`analysis.power.smallest_attainable_p`): the marks read the normal approximation
    (:func:`analysis.stats.wilcoxon_pvalue`), so the larger of its floor and the exact test's
    (2/2^n: 0.125 for 4 datasets, where the approximation alone would say 0.0679)."""
    return smallest_attainable_p("wilcoxon", n_datasets, method="asymptotic")


def winloss_section(tables: ScoreTables, write: render.TableWriter) -> str:
    parts = [
        "## Win/loss counts\n",
        "Cell (row i, column j) = datasets where i has the lower test error − datasets where it "
        "has the higher; `*` = two-sided Wilcoxon signed-rank p < 0.05 across datasets (none "
        "where the datasets cannot reach it: the power rule, `analysis.power`).\n",
    ]
    for key, means in tables.items():
        scores, _ = load.complete(means)
        caption = f"Win/loss counts, {_label(key, list(tables))}"
        parts.append(f"### {caption}\n")
        if len(scores) < 2 or scores.shape[1] < 2:
            parts.append("Needs 2 datasets and 2 methods with finished runs.\n")
            continue
        counts = stats.winloss_counts(scores)
        weak = power("wilcoxon", len(scores), ALPHA, method="asymptotic")
        marks = stats.significance_marks(scores, ALPHA) & (weak is None)
        cells = counts.map("{:+d}".format) + marks.map({True: "*", False: ""}.get)
        cells = cells.mask(np.eye(len(cells), dtype=bool), "·").rename_axis("method")
        if weak is not None:
            parts.append(
                f"With {len(scores)} datasets the smallest attainable p is "
                f"{weak.smallest_p:.3g}: no difference can be significant here.\n"
            )
        parts.append(write(cells, f"winloss_{key[0]}_{key[1]}", caption, counts))
    return "\n".join(parts)


def curve_tables(outcomes: pd.DataFrame, tables: ScoreTables) -> tuple[ScoreTables, ScoreTables]:
    """Per (protocol, part): mean test error per iteration (iteration × method) and average
    ranks at t = 6k and the last t, over the datasets every method finished."""
    errors, ranks = {}, {}
    for key, means in tables.items():
        scores, _ = load.complete(means)
        per_iteration = load.iteration_errors(outcomes, *key)
        per_iteration = per_iteration.loc[
            per_iteration.index.get_level_values("dataset").isin(scores.index), scores.columns
        ]
        if per_iteration.empty:
            continue
        errors[key] = per_iteration.groupby(level="iteration").mean()
        budget = int(per_iteration.index.get_level_values("iteration").max())
        curve = load.rank_curves(per_iteration, budget)
        if not curve.empty:
            ranks[key] = curve
    return errors, ranks


def convergence_figure(
    errors: Mapping[load.ScoreKey, pd.DataFrame],
    ranks: Mapping[load.ScoreKey, pd.DataFrame],
    labels: Mapping[load.ScoreKey, str],
) -> Figure:
    """One column per (protocol, part) present: mean test error (top) and average rank
    (bottom) against the number of evaluations."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5 * len(errors) + 1, 7), layout="constrained")
    axes = figure.subplots(2, len(errors), sharex="col", squeeze=False)
    for column, (key, error) in enumerate(errors.items()):
        top, bottom = axes[0, column], axes[1, column]
        top.set_title(labels[key])
        methods = tuple(error.columns)
        plot_series(top, error, marker=None, methods=methods)
        if key in ranks:
            plot_series(bottom, ranks[key], marker="o", methods=methods)
        else:
            no_data(bottom, "ranks (fewer than 2 methods)")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
        bottom.set_xlabel("number of function evaluations")
    axes[0, 0].set_ylabel("mean test error (%) over datasets")
    axes[1, 0].set_ylabel("average rank among these methods")
    shared_legend(figure, axes.ravel())
    return figure


def figures_section(outcomes: pd.DataFrame, tables: ScoreTables, out_dir: Path) -> str:
    errors, ranks = curve_tables(outcomes, tables)
    parts = ["## Figures\n"]
    if errors:
        labels = {key: _label(key, list(tables)) for key in errors}
        figure_set = render.FigureSet(out_dir)
        figure_set.add(
            partial(convergence_figure, errors, ranks, labels),
            "convergence",
            "Mean test error of the incumbent (top) and average rank (bottom, at t = 6k and the "
            "last t) against the number of evaluations; each method in its own colour, line "
            "style and marker, the same in the CD diagrams (the thesis's methods in the thesis's "
            "colours, dashed = reshuffled -r). A method that stopped early keeps its last choice "
            "in the ranks.",
            {
                **{f"error_{k[0]}_{k[1]}": e for k, e in errors.items()},
                **{f"rank_{k[0]}_{k[1]}": r for k, r in ranks.items()},
            },
        )
        parts += figure_set.markdown
    parts.append(
        "Critical-difference diagrams (average ranks; methods joined by a bar are not "
        "significantly different: Nemenyi, and pairwise Wilcoxon with Holm's correction):\n"
    )
    for key, means in tables.items():
        scores, _ = load.complete(means)
        label = _label(key, list(tables))
        if len(scores) < 2 or scores.shape[1] < 2:
            parts.append(f"* {label}: needs 2 datasets and 2 methods with finished runs.")
            continue
        parts.append(
            f"* {label}: {cd_diagram.save_and_link(scores, out_dir, f'{key[0]}_{key[1]}')}"
        )
    return "\n".join(parts) + "\n"


def error_tables(outcomes: pd.DataFrame) -> tuple[pd.DataFrame, ScoreTables]:
    """Per-dataset error statistics, and per (protocol, part) the mean test error table
    (dataset × method) of the methods that ran there."""
    errors = load.per_dataset_errors(outcomes)
    tables = {
        key: table.dropna(axis=1, how="all") for key, table in load.score_tables(errors).items()
    }
    return errors, tables


def sections(context: ReportContext) -> list[str]:
    """The demo's sections, title first (the engine adds runs, overtuning and provenance)."""
    outcomes = context.outcomes
    errors, tables = error_tables(outcomes)
    return [
        title_section(context.source, outcomes, tables),
        errors_section(tables, errors, context.write),
        winloss_section(tables, context.write),
        figures_section(outcomes, tables, context.out_dir),
    ]
