"""The Chapter-5 report sections: ``report.md``, ``tables/`` (CSV + LaTeX) and ``figures/``.

Owns what a reviewer reads for Chapter 5 (thesis §5.5): the claims checklist C5.1–C5.11; Table 5.2
(mean test error per method × dataset, ours (thesis), average ranks, per-dataset Wilcoxon marks);
Table 5.3 (pairwise Wilcoxon p-values across datasets, ours / thesis); Friedman and the Nemenyi
CD diagram (Fig 5.6); rank vs iteration (Fig 5.7); the classifiers chosen by GP-cond-ls (Figs
5.8–5.9 and a table); the kernel illustrations (Figs 5.2, 5.3, 5.5), which need no results.
Every number from the thesis is labelled as the thesis's, with its table; datasets of the
thesis without results show "not run", substitutes "(substitute: …)".

Entry point: :func:`sections`, called by the engine through ``analysis.chapter5.PLUGIN``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import cd_diagram, render, stats
from analysis.chapter5 import claims, data, figures, thesis
from analysis.claims import UNDERPOWERED_NOTE, claims_display
from analysis.figures import NOT_DRAWN
from analysis.plugins import ReportContext
from analysis.thesis_comparison import wilcoxon_beside_thesis

ALPHA = 0.05
DASH = "–"
THESIS_SCALE = (
    "24 datasets (18 UCI + 6 OpenML), 10 repetitions, 5-fold CV, 200 evaluations, 11 methods (§5.5)"
)


@dataclass
class Inputs:
    """Everything the report reads, computed once from the outcome rows."""

    source: Path
    outcomes: pd.DataFrame
    notes: dict[str, str] = field(default_factory=dict)  # dataset notes of the sweep
    repetitions: pd.DataFrame = field(init=False)
    scores: pd.DataFrame = field(init=False)  # all methods, NaN allowed
    complete: pd.DataFrame = field(init=False)  # thesis methods, complete datasets
    dropped: list[str] = field(init=False)
    marks: pd.DataFrame = field(init=False)  # dataset × method: significantly worse than best
    budget: int = field(init=False)
    curves: dict[str, pd.DataFrame] = field(init=False)
    choices: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.outcomes = data.prepare(self.outcomes)
        self.repetitions = data.repetition_errors(self.outcomes)
        self.scores = data.score_table(self.repetitions)
        self.complete, self.dropped = data.thesis_scores(self.scores)
        methods = list(self.scores.columns)
        self.marks = data.significantly_worse(self.repetitions, methods, ALPHA)
        self.budget = data.budget_of(self.outcomes)
        self.curves = {
            which: data.rank_curves(self.outcomes, self.complete, which, self.budget)
            for which in data.CURVE_COLUMNS
        }
        self.choices = data.classifier_choices(self.outcomes)

    def claim_inputs(self) -> claims.Inputs:
        methods = list(self.complete.columns)
        marks = self.marks.reindex(index=self.complete.index, columns=methods)
        return claims.Inputs(
            scores=self.complete,
            alpha=ALPHA,
            worse_marks=marks if len(self.complete) else None,
            repetitions=data.paired_repetitions(
                self.repetitions[self.repetitions["dataset"].isin(self.complete.index)], methods
            ),
            choices=self.choices,
            test_ranks=self.curves["test"],
            budget=self.budget,
        )


def _number(value: float) -> str:
    return DASH if pd.isna(value) else f"{value:.2f}"


# -------------------------------------------------------------------------------- Table 5.2


def error_table(inputs: Inputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5.2 cells ``ours (thesis)`` (methods × the thesis's 24 columns, then our other
    datasets, the average rank and the per-dataset significance count), and our numbers alone.

    † = significantly worse than the dataset's best (Wilcoxon over repetitions); our ranks are
    among the thesis's methods present, on the datasets where all have results.
    """
    theirs, their_ranks = thesis.thesis_errors()
    methods = list(theirs.index) + [m for m in inputs.scores.columns if m not in theirs.index]
    columns = data.dataset_columns(list(inputs.scores.index))
    marks = inputs.marks.fillna(False).astype(bool)
    cells, numbers = {}, {}
    for column in columns:
        ours = (
            inputs.scores.loc[column.dataset].reindex(methods)
            if column.dataset is not None
            else pd.Series(np.nan, index=methods)
        )
        flags = (
            marks.loc[column.dataset].reindex(methods, fill_value=False)
            if column.dataset in marks.index
            else pd.Series(False, index=methods)
        )
        text = [_number(v) + ("†" if f else "") for v, f in zip(ours, flags, strict=True)]
        if column.thesis_column is not None:
            their = theirs[column.thesis_column].reindex(methods)
            text = [f"{t} ({_number(v)})" for t, v in zip(text, their, strict=True)]
        cells[column.header] = text
        numbers[column.header] = ours.to_numpy()
    ranks = (
        stats.average_ranks(inputs.complete).reindex(methods)
        if inputs.complete.shape[1] >= 2
        else pd.Series(np.nan, index=methods)
    )
    cells["rank"] = [
        f"{_number(r)} ({_number(t)})"
        for r, t in zip(ranks, their_ranks.reindex(methods), strict=True)
    ]
    counts = marks.reindex(columns=methods, fill_value=False).sum()
    cells["sig. worse than best on"] = [
        f"{int(counts[m])} ({thesis.SIGNIFICANTLY_WORSE.get(m, '?')})" for m in methods
    ]
    numbers["rank"], numbers["sig_worse_count"] = ranks.to_numpy(), counts.to_numpy()
    display = pd.DataFrame(cells, index=methods).rename_axis("method")
    return display, pd.DataFrame(numbers, index=methods).rename_axis("method")


def _rank_agreement(inputs: Inputs) -> str:
    if inputs.complete.shape[1] < 2:
        return "No complete table of the thesis's methods: no ranks."
    _, their_ranks = thesis.thesis_errors()
    ours = stats.average_ranks(inputs.complete)
    rho = ours.corr(their_ranks.reindex(ours.index), method="spearman")
    return (
        f"Our ranks are among the {inputs.complete.shape[1]} thesis methods present, on "
        f"{len(inputs.complete)} datasets; Spearman correlation of our average ranks with the "
        f"thesis's: {rho:.2f}."
    )


def table_5_2_section(inputs: Inputs, write: render.TableWriter) -> str:
    cells, numbers = error_table(inputs)
    caption = "Table 5.2: mean test error (%) over repetitions, ours (thesis)"
    not_run = [c.header for c in data.dataset_columns(list(inputs.scores.index)) if not c.dataset]
    dropped = (
        f" Left out of ranks and tests (a thesis method has no run there): "
        f"{', '.join(inputs.dropped)}."
        if inputs.dropped
        else ""
    )
    return "\n".join(
        [
            "## 2. Table 5.2: test error per dataset (thesis §5.5.1)\n",
            "Each cell reads **ours (thesis)**: the number in parentheses is the thesis's Table "
            "5.2; – = no result of ours. Rows and columns in the thesis's order (its column "
            "labels; `thesis_tables/datasets-ch4-ch5.csv`). † = significantly worse than the "
            "dataset's best method (two-sided Wilcoxon signed-rank over the repetitions, paired "
            "by repetition, p < 0.05; the thesis's per-dataset test). Last columns: average "
            "rank, ours (thesis), and the number of datasets where the method is significantly "
            "worse than the best, ours (thesis's text: GP-matern-ls 1, SMAC 10, Spearmint 14, "
            "GP-cond-ls 0; ? = not stated). A column *(substitute: name)* is run on a UCI-121 "
            "copy of the OpenML dataset (`analysis.chapter5.data.SUBSTITUTES`); chess-krvk then "
            "fills both `ches` and `184` and counts once in ranks and tests. "
            f"Thesis datasets not run: {', '.join(not_run) or 'none'}. "
            + _rank_agreement(inputs)
            + dropped
            + "\n",
            write(cells, "table5.2_test_error", caption, data=numbers),
        ]
    )


# -------------------------------------------------------------------------------- Table 5.3


def wilcoxon_table(inputs: Inputs) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Table 5.3 cells ``ours / thesis`` (parentheses = the row method has the worse average
    rank; **bold** = p < 0.05), our p-values alone, and an agreement sentence."""
    their_p, their_worse = thesis.thesis_wilcoxon()
    return wilcoxon_beside_thesis(inputs.complete, their_p, their_worse, ALPHA)


def table_5_3_section(inputs: Inputs, write: render.TableWriter) -> str:
    cells, ours, sentence = wilcoxon_table(inputs)
    caption = "Table 5.3: pairwise Wilcoxon p-values across datasets, ours / thesis (repaired)"
    return "\n".join(
        [
            "## 3. Table 5.3: pairwise Wilcoxon tests (thesis §5.5.1)\n",
            "Two-sided Wilcoxon signed-rank test on the per-dataset mean errors, zero "
            "differences discarded, normal approximation (`analysis.stats`). Each cell reads "
            "**ours / thesis**; as the thesis: parentheses = the row method has the worse "
            "average rank; **bold** = p < 0.05 (re-derived from the printed p for the thesis's "
            "side). The thesis's rows 10–11 were rebuilt from a scattered conversion "
            f"(`thesis_tables/README.md`). {sentence}\n",
            write(cells, "table5.3_wilcoxon", caption, data=ours),
        ]
    )


# ---------------------------------------------------------------------- Friedman, Fig 5.6


def friedman_frame(inputs: Inputs) -> pd.DataFrame:
    """Friedman χ² and Nemenyi CD (ours) beside the thesis's p and CD."""
    if inputs.complete.shape[1] < 2 or inputs.complete.empty:
        return pd.DataFrame()
    n, k = inputs.complete.shape
    result = stats.friedman(inputs.complete)
    row = {
        "methods k": k,
        "datasets N": n,
        "Friedman χ²": f"{result.statistic:.2f}",
        "p": f"{result.pvalue:.3g}",
        "thesis p": thesis.FRIEDMAN_P,
        f"Nemenyi CD (α = {ALPHA})": f"{stats.nemenyi_critical_difference(k, n, ALPHA):.3f}",
        "thesis CD (k = 11, N = 24)": f"{thesis.NEMENYI_CD:.3f}",
    }
    return pd.DataFrame([row], index=["Table 5.2 methods"]).rename_axis("")


def friedman_section(inputs: Inputs, write: render.TableWriter, out_dir: Path) -> str:
    frame = friedman_frame(inputs)
    if frame.empty:
        return "## 4. Friedman test and Fig 5.6\n\nNo complete score table: nothing to test.\n"
    body = write(frame, "friedman_nemenyi", "Friedman test and Nemenyi CD, ours and the thesis's")
    if len(inputs.complete) >= 2:
        written = cd_diagram.save_cd_diagrams(inputs.complete, out_dir / "figures", "fig5_6")
        first_pdf = next((path.name for path in written if path.suffix == ".pdf"), None)
        pdf_link = f"[PDF](figures/{first_pdf}), " if first_pdf else ""
        diagram = (
            (
                "![Fig 5.6 Nemenyi](figures/fig5_6_cd_nemenyi.png)\n\n*Fig 5.6 (ours): Nemenyi "
                f"CD diagram of the Table 5.2 methods* ({pdf_link}"
                "[Wilcoxon–Holm variant](figures/fig5_6_cd_wilcoxon_holm.png))\n"
            )
            if written
            else f"Fig 5.6: {NOT_DRAWN}\n"
        )
    else:
        diagram = "The CD diagram needs at least 2 datasets.\n"
    return (
        "## 4. Friedman test and Fig 5.6 (Nemenyi critical difference)\n\n"
        "Plain Friedman χ² on the per-dataset ranks (k − 1 degrees of freedom) and the Nemenyi "
        "critical difference (Demšar 2006) among the thesis's methods, beside the thesis's "
        "p (§5.5.1) and CD (Fig 5.6).\n\n" + body + "\n" + diagram
    )


# ------------------------------------------------------------------------- Figs 5.7-5.9


def curves_section(inputs: Inputs, out_dir: Path) -> str:
    figure_set = render.FigureSet(out_dir)
    figure_set.add(
        partial(figures.figure_5_7, inputs.curves, len(inputs.complete)),
        "fig5_7_rank_vs_iteration",
        "Fig 5.7 (ours): average rank vs iteration, on the incumbent's validation (CV) error "
        "(left) and test error (right); per dataset errors averaged over repetitions and carried "
        "forward, ranks among all the Table 5.2 methods present (a subset drawn; the CSVs hold "
        "all).",
        {w: c for w, c in inputs.curves.items() if not c.empty},
    )
    return (
        "## 5. Fig 5.7: rank vs iteration\n\n"
        f"Iterations 1 to {inputs.budget} (the thesis: 1 to 200). An iteration where a method "
        "has no incumbent yet (CMA-ES before its first generation ends) leaves the dataset out "
        "at that iteration.\n\n" + "\n".join(figure_set.markdown)
    )


def choices_section(inputs: Inputs, write: render.TableWriter, out_dir: Path) -> str:
    head = "## 6. Figs 5.8–5.9: classifiers chosen by GP-cond-ls\n\n"
    if inputs.choices.empty:
        return head + "No GP-cond-ls run with a `learner` column in these results.\n"
    table = inputs.choices.copy()
    table.loc["all datasets"] = table.sum()
    table["runs"] = table.sum(axis=1)
    columns = data.dataset_columns(list(inputs.scores.index))
    labels = {c.dataset: c.header for c in columns if c.dataset is not None}
    shown = table.rename(index=lambda d: labels.get(d, d)).rename_axis("dataset")
    figure_set = render.FigureSet(out_dir)
    figure_set.add(
        partial(figures.figure_5_8, inputs.choices),
        "fig5_8_classifier_choices",
        "Fig 5.8 (ours): the final model's classifier over all GP-cond-ls runs (thesis: 240 "
        "runs, random forest and RBF SVM dominate, the others ≈ 5–10% each).",
    )
    figure_set.add(
        partial(figures.figure_5_9, inputs.choices),
        "fig5_9_classifier_choices_per_dataset",
        "Fig 5.9 (ours): per dataset (thesis: titanic always a decision tree, OpenML 917 always "
        "a linear SVM).",
    )
    return (
        head
        + "The classifier (`learner`) of each GP-cond-ls run's final model, per dataset.\n\n"
        + write(shown, "classifier_choices", "Classifiers chosen by GP-cond-ls (runs)", table)
        + "\n"
        + "\n".join(figure_set.markdown)
    )


@cache
def _kernel_matrices() -> dict[str, np.ndarray]:
    """The dummy space's kernel matrices, computed once and only when a kernel figure is drawn."""
    return figures.kernel_matrices()


def kernels_section(out_dir: Path) -> str:
    figure_set = render.FigureSet(out_dir)
    figure_set.add(
        lambda: figures.figure_5_2(_kernel_matrices()),
        "fig5_2_se_imputation",
        "Fig 5.2 (ours): squared-exponential covariance, ℓ = 0.5, on 100 points of the dummy "
        "space (3 classifiers, one parameter each, d = 4), sorted by classifier; left: inactive "
        "dimensions at their random values; right: imputed at 0.5.",
    )
    figure_set.add(
        lambda: figures.figure_5_3(_kernel_matrices()),
        "fig5_3_conditional",
        "Fig 5.3 (ours): the conditional kernel (`hpo.gp.kernels.Conditional`, squared-"
        "exponential base, ℓ = 0.5 [decide]) on the same sample: block diagonal.",
    )
    figure_set.add(
        lambda: figures.figure_5_5(_kernel_matrices()),
        "fig5_5_laplace",
        "Fig 5.5 (ours, right panel only): the Laplace kernel (`hpo.gp.kernels.Laplace`), "
        "ℓ = 0.75 [decide: the thesis's stated value], imputed points.",
    )
    return (
        "## 7. Kernel illustrations: Figs 5.2, 5.3, 5.5 (thesis §5.4)\n\n"
        "Drawn with the GP engine's kernels on a space built by "
        "`hpo.space.search_space.space_from_config` "
        "(seed 0); they need no results. **Not drawn:** the Mondrian kernel (Fig 5.5 left, "
        "Fig 5.4) — the GP engine does not provide it (`docs/gp-chapter5.md`); Fig 5.1 is a "
        "diagram.\n\n" + "\n".join(figure_set.markdown)
    )


# --------------------------------------------------------------------------------- sections


def title_section(inputs: Inputs) -> str:
    frame = inputs.outcomes
    reps = inputs.repetitions.groupby(["dataset", "method"]).size()
    rep_text = f"{reps.min()} to {reps.max()} repetitions" if len(reps) else "no finished run"
    return (
        "# Chapter 5 reproduction report\n\n"
        f"Results: `{inputs.source}` — {frame['dataset'].nunique()} datasets, "
        f"{frame['method'].nunique()} methods, {rep_text} per (dataset, method), budget "
        f"{inputs.budget} evaluations. The thesis: {THESIS_SCALE}. With few datasets the ranks "
        "and tests below have little power: read them as a check of the pipeline unless the "
        "results cover the 24 datasets.\n"
    )


def claims_section(inputs: Inputs, write: render.TableWriter) -> str:
    frame = claims.claims_table(inputs.claim_inputs())
    display, tally = claims_display(frame)
    return (
        "## 1. Claims checklist (thesis §5.5)\n\n"
        f"{len(frame)} claims: {tally}. *Reproduced* = every condition holds on our results "
        "(significance: two-sided Wilcoxon p < 0.05 across datasets with a positive win/loss "
        "count; ranks, Friedman and Nemenyi among the thesis's methods); *not evaluated* = an "
        "input is missing or a condition cannot be decided. The thesis column quotes the thesis "
        f"and its table. {UNDERPOWERED_NOTE}\n\n"
        + write(display, "claims", "Chapter-5 claims: thesis vs ours", data=frame)
    )


def data_section(inputs: Inputs) -> str:
    lines = ["## 8. About these results\n"]
    lines.append(f"Methods: {', '.join(inputs.scores.columns) or 'none'}.")
    missing = [m for m in thesis.METHODS if m not in inputs.scores.columns]
    if missing:
        lines.append(f"Thesis methods without results: {', '.join(missing)}.")
    lines.append(f"Datasets: {', '.join(inputs.scores.index) or 'none'}.")
    if inputs.notes:
        lines += ["", "Datasets of the experiment not run as named (the sweep's notes):"]
        lines += [f"* `{name}`: {note}" for name, note in sorted(inputs.notes.items())]
    protocols = sorted(inputs.outcomes["protocol"].dropna().unique())
    lines.append(f"\nProtocols in the results: {', '.join(protocols)} (the thesis: 5-fold CV).")
    lines += [
        "",
        "Every final test error per (dataset, method, repetition): "
        "[tables/repetition_errors.csv](tables/repetition_errors.csv).",
        "",
        f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by `python -m analysis`.",
        "",
    ]
    return "\n".join(lines)


def sections(context: ReportContext) -> list[str]:
    """The Chapter-5 sections, title first (the engine adds overtuning and provenance)."""
    notes = context.options.get("dataset_notes") or {}
    inputs = Inputs(context.source, context.outcomes, dict(notes))
    write, out_dir = context.write, context.out_dir
    inputs.repetitions.to_csv(render.tables_dir(out_dir) / "repetition_errors.csv", index=False)
    return [
        title_section(inputs),
        claims_section(inputs, write),
        table_5_2_section(inputs, write),
        table_5_3_section(inputs, write),
        friedman_section(inputs, write, out_dir),
        curves_section(inputs, out_dir),
        choices_section(inputs, write, out_dir),
        kernels_section(out_dir),
        data_section(inputs),
    ]
