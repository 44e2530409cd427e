"""The Chapter-4 report sections: ``report.md``, ``tables/`` (CSV + LaTeX) and ``figures/``.

Owns what a reviewer reads for Chapter 4: per search space (SVM, §4.4.1; scikit-learn, §4.4.2)
Tables 4.4/4.6 (mean test error per method × dataset, ours (thesis), average ranks), Tables
4.3/4.5 (pairwise Wilcoxon p-values, ours / thesis, in the thesis's conventions), Friedman and
the Nemenyi/Wilcoxon–Holm CD diagrams (Figs 4.8–4.9); the claims checklist C4.1–C4.14; the sizes
of the chosen ensembles; the loss figures (Figs 4.5–4.7) and where Figs 4.1/4.2/4.4 come from.
Every number from the thesis is labelled as the thesis's, with its table; methods or datasets
absent from the results show as "–".

Entry point: :func:`sections`, called by the engine through ``analysis.chapter4.PLUGIN``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import cd_diagram, render, stats
from analysis.chapter4 import claims, data, figures, thesis
from analysis.chapter4.thesis import ERROR_TABLES, SPACES, WILCOXON_TABLES
from analysis.claims import UNDERPOWERED_NOTE, claims_display
from analysis.plugins import ReportContext
from analysis.thesis_comparison import wilcoxon_beside_thesis

ALPHA = 0.05
DASH = "–"
THESIS_SCALE = "18 UCI datasets, 10 repetitions, 5-fold CV, 200 evaluations, m = 12 (§4.4)"


@dataclass
class Inputs:
    """Everything the report reads, computed once from the outcome rows."""

    source: Path
    outcomes: pd.DataFrame
    repetitions: pd.DataFrame = field(init=False)
    scores: dict[str, pd.DataFrame] = field(init=False)  # space -> all methods, NaN allowed
    thesis_scores: dict[str, pd.DataFrame] = field(init=False)  # space -> complete, thesis methods
    dropped: dict[str, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.outcomes = data.prepare(self.outcomes)
        self.repetitions = data.repetition_errors(self.outcomes)
        self.scores, self.thesis_scores, self.dropped = {}, {}, {}
        for space in SPACES:
            scores = data.score_table(self.repetitions, space)
            if scores.empty:
                continue
            self.scores[space] = scores
            kept, self.dropped[space] = data.thesis_scores(scores, space)
            if len(kept):
                self.thesis_scores[space] = kept


def _abbrev(datasets: pd.Index) -> list[str]:
    names = thesis.abbreviations()
    return [names.get(d, d) for d in datasets]


# ------------------------------------------------------------------------ Tables 4.4 and 4.6


def error_table(inputs: Inputs, space: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cells ``ours (thesis)`` of Table 4.4/4.6 (methods × the thesis's dataset columns + rank),
    and our numbers alone (for the CSV). Our ranks: among the thesis's methods present, on the
    datasets where all of them have results."""
    theirs, their_ranks = thesis.thesis_errors(ERROR_TABLES[space])
    methods = list(theirs.index)
    ours = inputs.scores.get(space, pd.DataFrame())
    ours = ours.set_axis(_abbrev(ours.index), axis=0) if len(ours) else ours
    ours = ours.T.reindex(index=methods, columns=theirs.columns)
    complete = inputs.thesis_scores.get(space)
    our_ranks = (
        stats.average_ranks(complete).reindex(methods)
        if complete is not None and complete.shape[1] >= 2
        else pd.Series(np.nan, index=methods)
    )
    their_text = " (" + theirs.map("{:.2f}".format) + ")"
    our_text = ours.map("{:.2f}".format, na_action="ignore").astype(object).fillna(DASH)
    cells = our_text + their_text
    cells["rank"] = [
        f"{render.format_number(r) if not pd.isna(r) else DASH} ({t:.2f})"
        for r, t in zip(our_ranks, their_ranks, strict=True)
    ]
    numbers = ours.assign(rank=our_ranks)
    return cells.rename_axis("method"), numbers.rename_axis("method")


def _agreement_errors(inputs: Inputs, space: str) -> str:
    complete = inputs.thesis_scores.get(space)
    if complete is None or complete.shape[1] < 2:
        return "No complete table of the thesis's methods: no ranks."
    _, their_ranks = thesis.thesis_errors(ERROR_TABLES[space])
    ours = stats.average_ranks(complete)
    rho = ours.corr(their_ranks.reindex(ours.index), method="spearman")
    return (
        f"Ranks among the {complete.shape[1]} thesis methods present, on {len(complete)} "
        f"datasets; Spearman correlation of our average ranks with the thesis's: {rho:.2f}."
    )


# ------------------------------------------------------------------------ Tables 4.3 and 4.5


def wilcoxon_table(inputs: Inputs, space: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Cells ``ours / thesis`` of Table 4.3/4.5 in the thesis's conventions (parentheses = the
    row method has the worse average rank; bold = p < 0.05, which the thesis's copy lost), our
    p-values alone, and an agreement sentence."""
    their_p, their_worse = thesis.thesis_wilcoxon(WILCOXON_TABLES[space])
    return wilcoxon_beside_thesis(inputs.thesis_scores.get(space), their_p, their_worse, ALPHA)


# ---------------------------------------------------------------------- Friedman, Nemenyi


def friedman_frame(inputs: Inputs) -> pd.DataFrame:
    """Friedman χ² and Nemenyi CD per space (thesis's methods), ours and the thesis's p."""
    thesis_p = {thesis.SVM: "5.5e-4", thesis.SKLEARN: "1.43e-10"}
    thesis_cd = {thesis.SVM: "1.106", thesis.SKLEARN: "2.475"}
    rows = {}
    for space, scores in inputs.thesis_scores.items():
        if scores.shape[1] < 2:
            continue
        n, k = scores.shape
        result = stats.friedman(scores)
        rows[data.SPACE_LABELS[space]] = {
            "methods k": k,
            "datasets N": n,
            "Friedman χ²": f"{result.statistic:.2f}",
            "p": f"{result.pvalue:.3g}",
            "thesis p": thesis_p[space],
            f"Nemenyi CD (α = {ALPHA})": f"{stats.nemenyi_critical_difference(k, n, ALPHA):.3f}",
            "thesis CD (k = 4 / 8, N = 18)": thesis_cd[space],
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("space")


def cd_links(inputs: Inputs, out_dir: Path) -> list[str]:
    """Nemenyi and Wilcoxon–Holm CD diagrams per space (Figs 4.8, 4.9); markdown links."""
    links = []
    for space, scores in inputs.thesis_scores.items():
        name = f"fig4_{'8' if space == thesis.SVM else '9'}_{space}"
        if len(scores) < 2 or scores.shape[1] < 2:
            links.append(f"* {space}: CD diagrams need 2 datasets and 2 methods.")
            continue
        diagrams = cd_diagram.save_and_link(scores, out_dir, name)
        figure = "8" if space == thesis.SVM else "9"
        links.append(f"* {data.SPACE_LABELS[space]} (Fig 4.{figure}): {diagrams}")
    return links


# ------------------------------------------------------------------- per-dataset, all methods


def all_methods_table(inputs: Inputs, space: str) -> pd.DataFrame:
    """Every method of ``space`` (thesis's and others) × dataset: mean test error, **bold** =
    lowest mean, † = significantly worse than the dataset's best (Wilcoxon over repetitions)."""
    scores = inputs.scores[space]
    marks = data.significantly_worse_counts(
        inputs.repetitions, space, list(scores.columns), ALPHA
    ).reindex(index=scores.index, columns=scores.columns)
    text = scores.map("{:.2f}".format, na_action="ignore").astype(object).fillna(DASH)
    text = text.where(~marks.fillna(False).astype(bool), text + "†")
    best = scores.eq(scores.min(axis=1), axis=0)
    text = text.where(~best, "**" + text + "**")
    text.index = _abbrev(scores.index)
    text = text.T
    complete, _ = data.load.complete(scores)
    ranks = (
        stats.average_ranks(complete)
        if len(complete) and complete.shape[1] >= 2
        else pd.Series(dtype=float)
    )
    text["rank (all methods)"] = [render.format_number(ranks.get(m, np.nan)) for m in text.index]
    text["lowest mean on"] = [
        f"{v:g}"
        for v in data.lowest_error_counts(scores.dropna()).reindex(text.index, fill_value=0)
    ]
    text["sig. worse than best on"] = [int(marks[m].fillna(False).sum()) for m in text.index]
    return text.rename_axis("method")


# --------------------------------------------------------------------------------- sections


def title_section(inputs: Inputs) -> str:
    frame = inputs.outcomes
    reps = frame.groupby("space")["repetition"].nunique().to_dict()
    budgets = sorted(frame["budget"].unique()) if "budget" in frame else []
    spaces = ", ".join(f"{data.SPACE_LABELS.get(s, s)}: {n} repetitions" for s, n in reps.items())
    return (
        "# Chapter 4 reproduction report\n\n"
        f"Results: `{inputs.source}` — {frame['dataset'].nunique()} datasets; {spaces}; budget "
        f"{', '.join(map(str, budgets))} evaluations. The thesis: {THESIS_SCALE}. With few "
        "datasets the ranks and tests below have little power: read them as a check of the "
        "pipeline unless the results cover the 18 datasets.\n"
    )


def claims_section(inputs: Inputs, write: render.TableWriter) -> str:
    frame = claims.claims_table(inputs.thesis_scores, ALPHA)
    display, tally = claims_display(frame)
    return (
        "## 1. Claims checklist (thesis §4.4.1–4.4.2)\n\n"
        f"{len(frame)} claims: {tally}. *Reproduced* = every condition holds on our results "
        "(significance: two-sided Wilcoxon p < 0.05 across datasets with a positive win/loss "
        "count; ranks, Friedman and Nemenyi among the thesis's methods of the table); the "
        f"thesis column quotes the thesis and its table. {UNDERPOWERED_NOTE}\n\n"
        + write(display, "claims", "Chapter-4 claims: thesis vs ours", data=frame)
    )


def space_section(inputs: Inputs, space: str, write: render.TableWriter, number: int) -> str:
    label = data.SPACE_LABELS[space]
    errors_table, wilcoxon = ERROR_TABLES[space], WILCOXON_TABLES[space]
    parts = [f"## {number}. {label}\n"]
    if space not in inputs.scores:
        return parts[0] + f"\nNo results in this space (`space = {space}`).\n"
    dropped = inputs.dropped.get(space) or []
    if dropped:
        parts.append(
            f"Left out of the thesis-method statistics (a method has no run there): "
            f"{', '.join(dropped)}.\n"
        )
    cells, numbers = error_table(inputs, space)
    caption = f"Table {errors_table}: mean test error (%) over repetitions, ours (thesis)"
    parts += [
        f"### {caption}\n",
        "Each cell reads **ours (thesis)**: the number in parentheses is the thesis's Table "
        f"{errors_table}; – = no result of ours. Rows and columns in the thesis's order "
        "(column abbreviations as the thesis's). " + _agreement_errors(inputs, space) + "\n",
        write(cells, f"table{errors_table}_{space}", caption, data=numbers),
    ]
    cells, ours, sentence = wilcoxon_table(inputs, space)
    caption = f"Table {wilcoxon}: pairwise Wilcoxon p-values across datasets, ours / thesis"
    parts += [
        f"### {caption}\n",
        "Two-sided Wilcoxon signed-rank test on the per-dataset mean errors, zero differences "
        "discarded, normal approximation (`analysis.stats`). As the thesis: parentheses = the "
        "row method has the worse average rank; **bold** = p < 0.05 (the thesis's bold was lost "
        f"in our copy, so it is re-derived from its p). {sentence}\n",
        write(cells, f"table{wilcoxon}_{space}", caption, data=ours),
    ]
    caption = f"All methods in the {label}: mean test error (%) per dataset (ours)"
    parts += [
        f"### {caption}\n",
        "Including methods the thesis does not show in this space. **bold** = lowest mean on "
        "the dataset; † = significantly worse than the dataset's best method (two-sided "
        "Wilcoxon over the repetitions, paired by repetition, p < 0.05: the thesis's "
        "underlines). Ranks among all methods here, on complete datasets.\n",
        write(all_methods_table(inputs, space), f"all_methods_{space}", caption),
    ]
    return "\n".join(parts)


def friedman_section(inputs: Inputs, write: render.TableWriter, out_dir: Path, number: int) -> str:
    frame = friedman_frame(inputs)
    body = (
        write(frame, "friedman_nemenyi", "Friedman test and Nemenyi CD, ours and the thesis's")
        if not frame.empty
        else "No complete score table: nothing to test.\n"
    )
    return (
        f"## {number}. Friedman test and critical-difference diagrams (Figs 4.8–4.9)\n\n"
        "Plain Friedman χ² on the per-dataset ranks (k − 1 degrees of freedom) and the Nemenyi "
        "critical difference (Demšar 2006) among the thesis's methods of each space; diagrams "
        "of `analysis.cd_diagram` (Nemenyi, as the thesis, and Wilcoxon–Holm).\n\n"
        + body
        + "\n"
        + "\n".join(cd_links(inputs, out_dir))
        + "\n"
    )


def ensemble_section(inputs: Inputs, write: render.TableWriter, number: int) -> str:
    table = data.ensemble_sizes(inputs.outcomes)
    head = f"## {number}. Sizes of the chosen ensembles\n\n"
    if table.empty:
        return head + "The results have no `n_members` column.\n"
    shown = table.copy()
    for column in shown.columns.drop("runs"):
        shown[column] = shown[column].map(lambda v: render.format_number(v, 1))
    shown.index = [f"{data.SPACE_LABELS.get(s, s)} / {m}" for s, m in shown.index]
    return (
        head + "`n_members` of each run's final choice (members counted with multiplicity: the "
        "post-hoc ensembles select with replacement) and the number of distinct members "
        "(from `members`). Single-model methods have 1; EO has at most m = 12 distinct.\n\n"
        + write(shown.rename_axis("space / method"), "ensemble_sizes", "Ensemble sizes", table)
    )


def figures_section(out_dir: Path, number: int) -> str:
    figure_set = render.FigureSet(out_dir)
    figure_set.add(
        figures.figure_4_5,
        "fig4_5_sqm_cbound",
        "Fig 4.5 (ours, from `hpo.ensembles`): squared-margin and adapted C-bound losses over "
        "the first margin moment μ1 and the disagreement dis = (1 − μ2)/2; infeasible pairs "
        "(μ1² > μ2) blank; iso-loss lines.",
    )
    figure_set.add(
        figures.figure_4_6,
        "fig4_6_sigmoid",
        "Fig 4.6 (ours): zero-one loss and 1 − s(M, 10); dots = the values an ensemble of m = 7 "
        "can take.",
    )
    figure_set.add(
        figures.figure_4_7,
        "fig4_7_losses",
        "Fig 4.7 (ours): zero-one, margin, squared-margin and sigmoid losses vs the margin; "
        "sigmoid with a = a(m) of `hpo.ensembles.sigmoid_scale` for several m [decide]; the "
        "C-bound is dataset-level and omitted, as in the thesis.",
    )
    return (
        f"## {number}. Figures\n\n"
        + "\n".join(figure_set.markdown)
        + "\n**Figs 4.1, 4.2 and 4.4 need one run's predictions** (a run with its "
        "`<run>.predictions.parquet` sidecar): `python -m analysis.chapter4.figures RUN_FILE "
        "--out DIR` draws them (see `docs/chapter4-analysis.md`). Fig 4.3 is a flow diagram, "
        "Fig 4.10 and Table 4.7 are CIFAR-10 (§4.4.3), not reproduced.\n"
    )


def data_section(inputs: Inputs, number: int) -> str:
    lines = [f"## {number}. About these results\n"]
    for space, scores in inputs.scores.items():
        lines.append(
            f"* {data.SPACE_LABELS[space]}: methods {', '.join(scores.columns)}; "
            f"{len(scores)} datasets"
        )
    reps = inputs.repetitions.groupby(["space", "dataset", "method"]).size()
    if len(reps):
        lines.append(f"\nRepetitions per (space, dataset, method): {reps.min()} to {reps.max()}.")
    protocols = sorted(inputs.outcomes["protocol"].dropna().unique())
    lines.append(f"Protocols in the results: {', '.join(protocols)} (the thesis: 5-fold CV).")
    lines += ["", f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by `python -m analysis`.", ""]
    return "\n".join(lines)


def sections(context: ReportContext) -> list[str]:
    """The Chapter-4 sections, title first (the engine adds overtuning and provenance)."""
    inputs = Inputs(context.source, context.outcomes)
    write, out_dir = context.write, context.out_dir
    inputs.repetitions.to_csv(render.tables_dir(out_dir) / "repetition_errors.csv", index=False)
    return [
        title_section(inputs),
        claims_section(inputs, write),
        space_section(inputs, thesis.SVM, write, 2),
        space_section(inputs, thesis.SKLEARN, write, 3),
        friedman_section(inputs, write, out_dir, 4),
        ensemble_section(inputs, write, 5),
        figures_section(out_dir, 6),
        data_section(inputs, 7),
    ]
