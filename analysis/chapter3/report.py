"""The Chapter-3 report sections: ``report.md``, ``tables/`` (CSV + LaTeX) and ``figures/``.

Owns what a reviewer reads: the summary (our Table 3.1/3.5 metrics next to the thesis's), the
claims checklist (``analysis.claims``), Tables 3.2–3.4 side by side, Friedman + Nemenyi, the
per-dataset "mean (std)" tables in the style of the thesis's Appendix B, and the figures
(``analysis.figures``, ``analysis.cd_diagram``). Every number from the thesis is labelled as the
thesis's, with its table. Methods or protocols absent from the results show as "missing".

Entry point: :func:`sections`, called by the engine (``analysis.report.write_report``) through
the plug-in ``analysis.chapter3.PLUGIN``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis import cd_diagram, load, render, stats
from analysis.chapter3 import claims, data, thesis
from analysis.claims import UNDERPOWERED_NOTE, claims_display
from analysis.plugins import ReportContext
from analysis.render import format_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

EXPERIMENTS = {"main": "3.1", "pm": "3.5"}  # experiment -> thesis summary table
WINLOSS_TABLES = {
    ("holdout", "main"): "3.2",
    ("cv5", "main"): "3.3",
    ("holdout", "pm"): "3.4a",
    ("cv5", "pm"): "3.4b",
}
THESIS_PROTOCOL = {"holdout": "holdout", "cv5": "fivefold"}  # column prefixes of thesis TSVs
THESIS_SCALE = (
    "118 datasets, 20 repetitions (10 for the posterior-mean experiment), 100 evaluations"
)
# Default dataset of Fig 3.1: the first dataset of the chapter3 experiment's smoke profile
# (conf/experiment/chapter3.yaml); a constant here because analysis/ reads no experiment config.
SMOKE_FIRST_DATASET = "glass"
SIZE_BIN_LABELS = ("1–133", "133–455", "455–1403", "1403–1e5")


# ------------------------------------------------------------------------------ data assembly


@dataclass
class Inputs:
    """Everything the report reads, computed once from the outcome rows."""

    source: Path
    outcomes: pd.DataFrame
    errors: pd.DataFrame = field(init=False)
    tables: dict[load.ScoreKey, pd.DataFrame] = field(init=False)
    experiments: dict[load.ScoreKey, pd.DataFrame] = field(init=False)
    dropped: dict[load.ScoreKey, list[str]] = field(init=False)
    sizes: pd.Series = field(init=False)
    gp_curves: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.errors = load.per_dataset_errors(self.outcomes)
        self.tables = load.score_tables(self.errors)
        self.experiments, self.dropped = {}, {}
        for key, scores in data.thesis_experiment_tables(self.tables).items():
            kept, self.dropped[key] = load.complete(scores)
            if len(kept) and kept.shape[1] >= 2:
                self.experiments[key] = kept
        self.sizes = load.dataset_sizes(sorted(self.outcomes["dataset"].unique()))
        self.gp_curves = data.gp_holdout_curves(self.outcomes)


# ------------------------------------------------------------------------------ table output


# ---------------------------------------------------------------------------------- summary


def _our_summary(scores: pd.DataFrame | None) -> pd.DataFrame:
    if scores is None:
        return pd.DataFrame(columns=["median", "q3_minus_q1", "winrate", "rank"])
    return stats.summary_table(scores)


def summary_numbers(inputs: Inputs, experiment: str, protocol: str) -> pd.DataFrame:
    """Ours and the thesis's median, Q3−Q1, win rate, rank per method, in the thesis's rows."""
    table = EXPERIMENTS[experiment]
    theirs = thesis.thesis_summary(table)
    prefix = THESIS_PROTOCOL[protocol]
    ours = _our_summary(inputs.experiments.get((protocol, experiment))).reindex(theirs.index)
    columns = {}
    for metric in ("median", "q3_minus_q1", "winrate", "rank"):
        columns[f"ours_{metric}"] = ours[metric]
        columns[f"thesis_{metric}"] = theirs[f"{prefix}_{metric}"]
    return pd.DataFrame(columns).rename_axis("method")


def _summary_display(numbers: pd.DataFrame, table: str) -> pd.DataFrame:
    def median_iqr(who: str) -> pd.Series:
        return pd.Series(
            [
                render.MISSING if pd.isna(m) else f"{m:.2f} ({q:.2f})"
                for m, q in zip(
                    numbers[f"{who}_median"], numbers[f"{who}_q3_minus_q1"], strict=True
                )
            ],
            index=numbers.index,
        )

    return pd.DataFrame(
        {
            "ours: median (Q3−Q1)": median_iqr("ours"),
            f"thesis (Table {table}): median (Q3−Q1)": median_iqr("thesis"),
            "ours: win rate": numbers["ours_winrate"].map(format_number),
            f"thesis (Table {table}): win rate": numbers["thesis_winrate"].map(format_number),
            "ours: rank": numbers["ours_rank"].map(format_number),
            f"thesis (Table {table}): rank": numbers["thesis_rank"].map(format_number),
        }
    )


def summary_section(inputs: Inputs, write: render.TableWriter) -> str:
    parts = ["## 1. Summary: our metrics next to the thesis's\n"]
    parts.append(
        "Test error in % of the final model, averaged over repetitions per dataset; median and "
        "Q3−Q1 over datasets; win rate (Eq. 3.11) and average rank (1 = best) among the methods "
        "of the table. Rows in the thesis's order. Columns marked *thesis* are the thesis's "
        "published numbers; columns marked *ours* are computed from these results. Our ranks "
        "are among the methods present here (a missing method changes the scale).\n"
    )
    note = data.budget_note(inputs.outcomes)
    if note:
        parts.append(note + "\n")
    for experiment, table in EXPERIMENTS.items():
        for protocol in load.PROTOCOLS:
            numbers = summary_numbers(inputs, experiment, protocol)
            name = f"summary_{experiment}_{protocol}"
            caption = (
                f"{load.PROTOCOL_LABELS[protocol]}, {_experiment_label(experiment)}: "
                f"ours vs the thesis's Table {table}{_source_note(inputs, (protocol, experiment))}"
            )
            parts.append(f"### {caption}\n")
            parts.append(write(_summary_display(numbers, table), name, caption, data=numbers))
    return "\n".join(parts)


def _experiment_label(experiment: str) -> str:
    return {"main": "main experiment", "pm": "posterior-mean experiment"}[experiment]


def _source_note(inputs: Inputs, key: load.ScoreKey) -> str:
    """Says when the posterior-mean experiment's table comes from part ``main``."""
    if key[1] == "pm" and key in inputs.experiments and key not in inputs.tables:
        return " (ours from part main: these results have no separate pm part)"
    return ""


# ----------------------------------------------------------------------------------- claims


def claims_frame(inputs: Inputs) -> pd.DataFrame:
    """``analysis.claims.claims_table`` on our tables, sizes and gp hold-out curves."""
    curves = inputs.gp_curves if not inputs.gp_curves.empty else None
    return claims.claims_table(inputs.experiments, inputs.sizes, curves)


def _statistic_cell(statistic: float, p_value: float) -> str:
    cells = []
    if not pd.isna(statistic):
        cells.append(f"{statistic:.3g}")
    if not pd.isna(p_value):
        cells.append(f"p = {p_value:.3g}")
    return ", ".join(cells) or "–"


def claims_section(inputs: Inputs, write: render.TableWriter) -> str:
    frame = claims_frame(inputs)
    statistic = [
        _statistic_cell(s, p) for s, p in zip(frame["statistic"], frame["p_value"], strict=True)
    ]
    display, tally = claims_display(frame, {"statistic / p": statistic})
    return (
        "## 2. Claims checklist (thesis §3.3.2, §3.4.2)\n\n"
        f"{len(frame)} claims: {tally}. *Reproduced* = every condition of the proposition holds "
        "on our results (significance: two-sided Wilcoxon p < 0.05 across datasets, as the "
        "thesis's bold+underlined cells); the thesis column quotes the thesis and its table. "
        f"{UNDERPOWERED_NOTE}\n\n"
        + write(display, "claims", "Chapter-3 claims: thesis vs ours", data=frame)
    )


# ------------------------------------------------------------------------------- win / loss


def _count_cells(counts: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """``+12*``-style cells; ``–`` where the count is missing, ``·`` on the diagonal."""
    text = counts.map(lambda c: "–" if pd.isna(c) else f"{int(c):+d}")
    cells = text + marks.astype(bool).map({True: "*", False: ""}.get).where(counts.notna(), "")
    return cells.mask(np.eye(len(cells), dtype=bool), "·")


def _agreement(
    counts: pd.DataFrame, marks: pd.DataFrame, their_counts: pd.DataFrame, their_marks: pd.DataFrame
) -> str:
    upper = np.triu(np.ones(counts.shape, dtype=bool), k=1) & counts.notna().to_numpy()
    signs = np.sign(counts.to_numpy(dtype=float)) == np.sign(their_counts.to_numpy())
    same_marks = marks.to_numpy(dtype=bool) == their_marks.to_numpy(dtype=bool)
    return (
        f"Of {upper.sum()} method pairs present, the sign of our count agrees with the thesis's "
        f"in {(signs & upper).sum()} and the significance mark in {(same_marks & upper).sum()}."
    )


def winloss_tables(scores: pd.DataFrame, table: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Cells ``ours (thesis)``, our cells alone (for the CSV), and an agreement sentence.

    Rows and columns are the thesis's Table ``table``; methods we lack show ``–``.
    """
    their_counts, their_marks = thesis.thesis_winloss(table)
    methods = list(their_counts.index)
    counts = stats.winloss_counts(scores).reindex(index=methods, columns=methods)
    marks = stats.significance_marks(scores).reindex(
        index=methods, columns=methods, fill_value=False
    )
    ours = _count_cells(counts, marks)
    both = (ours + " (" + _count_cells(their_counts, their_marks) + ")").mask(
        np.eye(len(methods), dtype=bool), "·"
    )
    agreement = _agreement(counts, marks, their_counts, their_marks)
    return both.rename_axis("method"), ours.rename_axis("method"), agreement


def winloss_section(inputs: Inputs, write: render.TableWriter) -> str:
    parts = [
        "## 3. Win/loss counts: Tables 3.2–3.4, ours (thesis)\n",
        "Cell (row i, column j) = #datasets where i has the lower error − #datasets where it has "
        "the higher; `*` = two-sided Wilcoxon signed-rank p < 0.05 across datasets (the thesis's "
        "bold+underline, marks restored where one side lost them, "
        "see `analysis/chapter3/thesis_tables/README.md`). Each cell reads "
        "**ours (thesis)**: the number in parentheses is the thesis's; – = method missing from "
        "our results. Rows and columns in the thesis's order. Tables 3.1 and 3.5 are the "
        "summary tables of section 1.\n",
    ]
    for key, table in WINLOSS_TABLES.items():
        protocol, experiment = key
        caption = (
            f"Table {table}: {load.PROTOCOL_LABELS[protocol]}, {_experiment_label(experiment)}; "
            f"ours (thesis){_source_note(inputs, key)}"
        )
        parts.append(f"### {caption}\n")
        scores = inputs.experiments.get(key)
        if scores is None:
            parts.append(f"No {load.PROTOCOL_LABELS[protocol]} results for this experiment.\n")
            continue
        cells, ours, agreement = winloss_tables(scores, table)
        parts += [agreement + "\n", write(cells, f"table{table}_winloss_{protocol}", caption, ours)]
    return "\n".join(parts)


# ------------------------------------------------------------------------ Friedman, Nemenyi


def friedman_frame(inputs: Inputs, alpha: float = 0.05) -> pd.DataFrame:
    """Friedman χ² and Nemenyi CD per (experiment, protocol) of our results."""
    rows = {}
    for (protocol, experiment), scores in inputs.experiments.items():
        n_datasets, k = scores.shape
        result = stats.friedman(scores)
        rows[f"{experiment} / {load.PROTOCOL_LABELS[protocol]}"] = {
            "methods k": k,
            "datasets N": n_datasets,
            "Friedman χ²": f"{result.statistic:.2f}",
            "p": f"{result.pvalue:.3g}",
            f"Nemenyi CD (α = {alpha})": f"{stats.nemenyi_critical_difference(k, n_datasets):.2f}",
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("experiment / validation")


def friedman_section(inputs: Inputs, write: render.TableWriter, cd_links: list[str]) -> str:
    frame = friedman_frame(inputs)
    body = (
        write(frame, "friedman_nemenyi", "Friedman test and Nemenyi critical difference (ours)")
        if not frame.empty
        else "No complete score table: nothing to test.\n"
    )
    return (
        "## 4. Friedman test and Nemenyi critical difference (ours)\n\n"
        "Plain Friedman χ² on the per-dataset ranks (k − 1 degrees of freedom) and the Nemenyi "
        "critical difference of average ranks (Demšar 2006). The thesis reports neither for "
        "Chapter 3; these are ours only.\n\n" + body + "\n" + "\n".join(cd_links) + "\n"
    )


# ------------------------------------------------------------------------------- figures


def _curve_tables(inputs: Inputs) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Per protocol: mean test error per iteration and average ranks at t = 6k and the last t."""
    errors, ranks = {}, {}
    for protocol in load.PROTOCOLS:
        scores = inputs.experiments.get((protocol, "main"))
        if scores is None:
            continue
        per_iteration = load.iteration_errors(inputs.outcomes, protocol, "main")
        per_iteration = per_iteration.loc[
            per_iteration.index.get_level_values("dataset").isin(scores.index), scores.columns
        ]
        budget = int(per_iteration.index.get_level_values("iteration").max())
        errors[protocol] = per_iteration.groupby(level="iteration").mean()
        ranks[protocol] = load.rank_curves(per_iteration, budget)
    return errors, ranks


def _size_bin_tables(inputs: Inputs) -> tuple[dict[str, pd.DataFrame], pd.Series]:
    bin_ranks = {}
    counts = pd.Series(0, index=list(SIZE_BIN_LABELS))
    for protocol in load.PROTOCOLS:
        scores = inputs.experiments.get((protocol, "main"))
        if scores is not None:
            by_bin, n = data.ranks_by_size_bin(scores, inputs.sizes, SIZE_BIN_LABELS)
            bin_ranks[protocol], counts = by_bin, n
    return bin_ranks, counts


def fig31_dataset(inputs: Inputs, requested: str | None) -> str | None:
    """The Fig 3.1 dataset: ``requested``, else the smoke profile's first dataset, else the
    first dataset (alphabetically) with gp hold-out results."""
    available = sorted(inputs.gp_curves["dataset"].unique())
    if requested is not None:
        return requested
    if SMOKE_FIRST_DATASET in available:
        return SMOKE_FIRST_DATASET
    return available[0] if available else None


def _drawn(name: str, *args: object) -> Callable[[], Figure]:
    """``analysis.chapter3.figures.<name>(*args)``, called by :class:`render.FigureSet` only when
    figures are drawn: that module imports matplotlib and the GP (``--no-figures`` skips both)."""

    def draw() -> Figure:
        from analysis.chapter3 import figures

        return getattr(figures, name)(*args)

    return draw


def figures_section(inputs: Inputs, out_dir: Path, requested_dataset: str | None) -> str:
    figure_set = render.FigureSet(out_dir)
    errors, ranks = _curve_tables(inputs)
    n_datasets = max((len(s) for (_, e), s in inputs.experiments.items() if e == "main"), default=0)
    note = data.budget_note(inputs.outcomes)
    figure_set.add(
        _drawn("figure_3_3", errors, ranks, n_datasets, note),
        "fig3_3_convergence",
        "Fig 3.3 (ours): mean test error (top) and average rank (bottom) vs function evaluations; "
        "ranks among all the Table 3.1 methods present (the axis says how many), of which the "
        "six series of the thesis's figure are drawn, at t = 6k and the last t (thesis §3.3.1; "
        "[decide], docs/deviations.md). "
        "Colour = base optimiser, dashed = reshuffled (-r)." + (f" {note}" if note else ""),
        {
            **{f"error_{p}": e for p, e in errors.items()},
            **{f"rank_{p}": r for p, r in ranks.items()},
        },
    )
    bin_ranks, counts = _size_bin_tables(inputs)
    figure_set.add(
        _drawn("figure_3_4", bin_ranks, counts),
        "fig3_4_rank_by_size",
        "Fig 3.4 (ours): average rank (among all the Table 3.1 methods present, six drawn) per "
        "|D_TVS| bin "
        "(thesis bins 1–133–455–1403–1e5).",
        bin_ranks,
    )
    _add_figure_3_1(figure_set, inputs, fig31_dataset(inputs, requested_dataset))
    figure_set.add(
        _drawn("figure_3_5"),
        "fig3_5_posterior_mean",
        "Fig 3.5 (ours, synthetic, [decide], docs/deviations.md): f(x) = sin(3x) + 0.3x², "
        "20 points with noise "
        "sd 0.1 (seed 0), GP of `hpo.optimizers.bayes.GPEIOptimizer`; × = argmin of the "
        "observations (green), of the integrated posterior mean (orange), true minimum (grey).",
    )
    return (
        "## 5. Figures\n\n"
        + "\n".join(figure_set.markdown)
        + "\n**Not produced: scatter of our per-dataset errors vs the thesis's.** The thesis "
        "prints per-dataset Chapter-3 errors only in its Appendix B, which our copy of the "
        "thesis lacks; the transcribed tables (`analysis/chapter3/thesis_tables/`) hold "
        "per-dataset values only for Chapters 4–5 "
        "(Tables 4.4, 4.6, 5.2: other experiments, protocols and datasets), so there is nothing "
        "to compare ours with dataset by dataset.\n"
    )


def _add_figure_3_1(figure_set: render.FigureSet, inputs: Inputs, dataset: str | None) -> None:
    if dataset is None:
        return
    curve = inputs.gp_curves[inputs.gp_curves["dataset"] == dataset]
    key = ("holdout", "main", dataset, "gp")
    reps = int(inputs.errors["repetitions"].get(key, 0))
    figure_set.add(
        _drawn("figure_3_1", curve, dataset, reps),
        "fig3_1_overfitting",
        f"Fig 3.1 (ours): gp with hold-out on **{dataset}** (the thesis does not name its "
        "dataset, [decide], docs/deviations.md): validation error of the incumbent and test "
        "error of the "
        f"incumbent retrained on D_TVS, mean over {reps} repetitions.",
    )


def cd_diagrams(inputs: Inputs, out_dir: Path) -> list[str]:
    """Nemenyi and Wilcoxon–Holm CD diagrams per (experiment, protocol); markdown links."""
    links = []
    for (protocol, experiment), scores in inputs.experiments.items():
        name = f"{experiment}_{protocol}"
        if len(scores) < 2:
            links.append(f"* {name}: CD diagrams need at least 2 datasets (have {len(scores)}).")
            continue
        diagrams = cd_diagram.save_and_link(scores, out_dir, name)
        links.append(f"* {experiment} / {load.PROTOCOL_LABELS[protocol]}: {diagrams}")
    return links


# ------------------------------------------------------------------------- Appendix B tables


def appendix_b_frame(inputs: Inputs, key: load.ScoreKey) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ "mean (std)" per dataset × method (bold = lowest mean), with |D_TVS|, and the numbers
    it shows (``analysis.render.mean_std_cells``: a method's mean and its ``std`` column)."""
    means = inputs.tables[key]
    errors = inputs.errors
    cells, numbers = render.mean_std_cells(
        means,
        load.score_tables(errors, "std")[key],
        load.score_tables(errors, "repetitions")[key],
        digits=1,
        missing="–",
    )
    sizes = inputs.sizes.reindex(means.index)
    cells.insert(0, "size of D_TVS", sizes.map(_format_size))
    numbers.insert(0, "size of D_TVS", sizes)
    return cells.rename_axis("dataset"), numbers.rename_axis("dataset")


def _format_size(size: float) -> str:
    return "?" if pd.isna(size) else f"{int(size)}"


def appendix_b_section(inputs: Inputs, write: render.TableWriter) -> str:
    parts = [
        "## 6. Per-dataset test error, mean (std) over repetitions (Appendix-B style, ours)\n",
        "Test error in % of the final model; std over repetitions (ddof = 0; n/a: one "
        "repetition); **bold** = lowest mean on the dataset; – = no finished run. All methods of "
        "each part are shown. The thesis's Appendix B is not available to us, so there is no "
        "thesis column here.\n",
    ]
    for protocol, part in _table_keys(inputs):
        caption = f"Per-dataset test error (%), {load.PROTOCOL_LABELS[protocol]}, part {part}"
        parts.append(f"### {caption}\n")
        cells, numbers = appendix_b_frame(inputs, (protocol, part))
        parts.append(write(cells, f"appendix_b_{part}_{protocol}", caption, numbers))
    return "\n".join(parts)


# ----------------------------------------------------------------------------- provenance


def _scale_sentence(outcomes: pd.DataFrame) -> str:
    budgets = sorted(outcomes["budget"].unique())
    reps = outcomes.groupby("part")["repetition"].nunique()
    rep_text = ", ".join(f"{n} in part {part}" for part, n in reps.items())
    return (
        f"{outcomes['dataset'].nunique()} datasets, repetitions: {rep_text}, "
        f"budget {', '.join(map(str, budgets))} evaluations"
    )


def _table_keys(inputs: Inputs) -> list[load.ScoreKey]:
    """(protocol, part) of every score table: hold-out first, parts alphabetically."""
    return sorted(inputs.tables, key=lambda key: (load.PROTOCOLS.index(key[0]), key[1]))


def _methods_line(inputs: Inputs) -> Iterable[str]:
    for protocol, part in _table_keys(inputs):
        methods = ", ".join(inputs.tables[(protocol, part)].columns)
        yield f"* {load.PROTOCOL_LABELS[protocol]}, part {part}: {methods}"


def title_section(inputs: Inputs) -> str:
    note = data.budget_note(inputs.outcomes)
    return (
        "# Chapter 3 reproduction report\n\n"
        f"Results: `{inputs.source}` — {_scale_sentence(inputs.outcomes)}; the thesis: "
        f"{THESIS_SCALE}. With few datasets the ranks, win rates and Wilcoxon tests below have "
        "little power: read them as a check of the pipeline unless the results cover the 118 "
        "datasets. Details of the data in section 7." + (f" {note}" if note else "") + "\n"
    )


def data_section(inputs: Inputs) -> str:
    dropped = [
        f"* {experiment} / {load.PROTOCOL_LABELS[protocol]}: left out {', '.join(names)} "
        "(a method has no finished run there)"
        for (protocol, experiment), names in inputs.dropped.items()
        if names
    ]
    hits = inputs.outcomes.get("test_fit_limit_hit")
    hit_text = (
        f"{int(hits.fillna(False).sum())} of {len(hits)} outcome rows"
        if hits is not None
        else "not recorded"
    )
    repetitions = inputs.errors["repetitions"]
    return "\n".join(
        [
            "## 7. About these results\n",
            "Methods found (per validation type and part of the sweep):",
            *_methods_line(inputs),
            "",
            f"Repetitions per (dataset, method): {repetitions.min()} to {repetitions.max()}. "
            f"Final retrainings that hit the libsvm iteration limit: {hit_text}.",
            *(["", "Datasets left out of the statistics:", *dropped] if dropped else []),
            "",
            "Per-dataset means, stds and repetition counts of every method: "
            "[tables/per_dataset_errors.csv](tables/per_dataset_errors.csv).",
            "",
            f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by `python -m analysis`.",
            "",
        ]
    )


# ------------------------------------------------------------------------------------ driver


def sections(context: ReportContext) -> list[str]:
    """The Chapter-3 sections, title first (the engine adds overtuning and provenance)."""
    inputs = Inputs(context.source, context.outcomes)
    write, out_dir = context.write, context.out_dir
    inputs.errors.to_csv(render.tables_dir(out_dir) / "per_dataset_errors.csv")
    return [
        title_section(inputs),
        summary_section(inputs, write),
        claims_section(inputs, write),
        winloss_section(inputs, write),
        friedman_section(inputs, write, cd_diagrams(inputs, out_dir)),
        figures_section(inputs, out_dir, context.options.get("fig31_dataset")),
        appendix_b_section(inputs, write),
        data_section(inputs),
    ]
