"""The seed-002 report sections (Jůzlová 2018, §2.2): Tables 2.2 and 2.4 beside the seed's, box
plots per method (Figs 2.1/2.2, C.2/C.3) and per Hyperband bracket (Fig 2.14), convergence
against evaluations and against epochs (Figs 2.3/2.10), Table 2.3 (ARD relevance), Tables
2.5–2.6 (layer shares) and the seed's qualitative findings as claims.

The seed's numbers come from ``seed_tables/`` (:mod:`analysis.surrogates.seed`) and are printed
in rows or columns labelled "seed"; ours in rows labelled "ours". On the offline substitutes
(``sklearn-digits``, ``digits-rot-bg``) the report says so above every table, and on ``mnist-5k``
that it is a subset of MNIST, not MNIST-basic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.claims import claims_display, records_frame, run_claim
from analysis.figures import method_styles
from analysis.plugins import ReportContext
from analysis.render import FigureSet, format_number
from analysis.surrogates import ard, claims, data, seed, svm
from analysis.surrogates.results import Results
from hpo.data.images import IMAGE_SETS, MNIST_SUBSET

SUBSTITUTE_OF = {entry.substitute: name for name, entry in IMAGE_SETS.items()}
ARD_METHOD = "RANDOM"  # Table 2.3 fits the random-search configurations
ARD_PART = "mnist"


def dataset_note(datasets: list[str]) -> str:
    """Which datasets a part ran, each substitute named as such."""
    notes = []
    for name in datasets:
        original = SUBSTITUTE_OF.get(name)
        if original:
            notes.append(
                f"`{name}` (**substitute** for {original}: not comparable with the seed's numbers)"
            )
        elif name == MNIST_SUBSET:
            notes.append(
                f"`{name}` (**a subset of MNIST**: 5,000 real MNIST digits, split here, not "
                "MNIST-basic's 10,000 / 2,000 / 50,000: comparable with the seed's numbers in kind "
                "only)"
            )
        else:
            notes.append(f"`{name}`")
    return "Dataset: " + ", ".join(notes) + "."


# ------------------------------------------------------------------------------------ tables


def errors_beside_seed(ours: pd.DataFrame, part: str) -> pd.DataFrame:
    """Table 2.2/2.4: per method, a row of ours and a row of the seed's (when it has the part)."""
    reference = seed.error_table(part)
    rows = {}
    for method in data.SEED_ORDER:
        if method in ours.index:
            rows[(method, "ours")] = ours.loc[method]
        if reference is not None and method in reference.index:
            rows[(method, "seed")] = reference.loc[method]
    table = pd.DataFrame(rows).T
    table.index = pd.Index([f"{m} ({source})" for m, source in table.index], name="method")
    shown = table.drop(columns="runs").map(format_number)
    shown["runs"] = [
        "–" if pd.isna(v) else str(int(v)) for v in table.get("runs", pd.Series(np.nan))
    ]
    return shown


def bracket_table(best: pd.DataFrame, part: str) -> pd.DataFrame:
    """Per bracket (its number of configurations): median, mean and runs of the best finished
    configuration's validation error, beside the seed's median where it gives one."""
    grouped = best.groupby("configurations")["valid"]
    table = pd.DataFrame(
        {"median": grouped.median(), "mean": grouped.mean(), "runs": grouped.size()}
    ).sort_index(ascending=False)
    reference = seed.bracket_medians(part)
    table["seed median"] = [reference.get(int(n), np.nan) for n in table.index]
    shown = table.map(format_number)
    shown["runs"] = table["runs"].astype(int).astype(str)
    return shown.rename_axis("configurations in bracket")


def ard_beside_seed(table: pd.DataFrame) -> pd.DataFrame:
    reference = seed.ard_table()
    shown = table.map(format_number)
    shown["seed median 1/ℓ"] = [format_number(reference.get(n, np.nan)) for n in table.index]
    shown["relevant (ours, 1/ℓ ≥ 1)"] = [
        "yes" if v >= ard.NOT_RELEVANT_BELOW else "no" for v in table["median 1/ℓ"]
    ]
    return shown


def shares_beside_seed(ours: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Layer shares (%): our columns, then the seed's under "seed: <column>"."""
    table = ours.map(lambda v: format_number(v, 0))
    for column in reference.columns:
        values = reference[column].reindex(ours.index)
        table[f"seed: {column}"] = values.map(lambda v: format_number(v, 0))
    labels = [f"{m}, {n} layer{'s' if n > 1 else ''}" for m, n in table.index]
    return table.set_axis(pd.Index(labels, name="method, layers"))


# ----------------------------------------------------------------------------------- figures


def boxplot_figure(errors: pd.DataFrame, label: str) -> Figure:
    """Figs 2.1/2.2 (C.2/C.3): validation and test error of the configuration found, one box
    per method; solid line the median, dashed the mean."""
    figure = Figure(figsize=(10, 3.8), layout="constrained")
    axes = figure.subplots(1, 2)
    methods = [m for m in data.SEED_ORDER if m in set(errors["method"])]
    for ax, column, title in zip(axes, ("valid", "test"), ("validation", "test"), strict=True):
        values = [errors.loc[errors["method"] == m, column].to_numpy() for m in methods]
        ax.boxplot(values, tick_labels=methods, showmeans=True, meanline=True)
        ax.set_title(f"{label}: {title} error (%)")
        ax.grid(alpha=0.3)
    return figure


def bracket_figure(best: pd.DataFrame, label: str) -> Figure:
    """Fig 2.14: the best finished configuration's validation error per bracket."""
    figure = Figure(figsize=(6, 3.8), layout="constrained")
    ax = figure.subplots()
    sizes = sorted(best["configurations"].unique(), reverse=True)
    values = [best.loc[best["configurations"] == n, "valid"].to_numpy() for n in sizes]
    ax.boxplot(values, tick_labels=[f"n = {n}" for n in sizes], showmeans=True, meanline=True)
    ax.set_title(f"{label}: Hyperband, best finished configuration per bracket")
    ax.set_ylabel("validation error (%)")
    ax.grid(alpha=0.3)
    return figure


def convergence_figure(by_iteration: pd.DataFrame, by_epochs: pd.DataFrame, label: str) -> Figure:
    """Figs 2.3/2.10: median best-so-far validation error (log scale) against evaluations and
    against epochs trained (Hyperband's partial evaluations count as evaluations)."""
    figure = Figure(figsize=(10, 3.8), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    for ax, table, xlabel in (
        (axes[0], by_iteration, "evaluations"),
        (axes[1], by_epochs, "epochs trained (cumulative)"),
    ):
        styles = method_styles(table.columns)
        for method in [m for m in data.SEED_ORDER if m in table.columns]:
            values = table[method].dropna()
            ax.plot(values.index, values.to_numpy(), label=method, **styles[method].line(False))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(f"{label}: best validation error so far (%)")
    axes[0].legend(fontsize=7)
    return figure


# ---------------------------------------------------------------------------------- sections


def part_section(results: Results, part: str, write, figures: FigureSet) -> list[str]:  # noqa: ANN001
    label, table_name = data.PARTS.get(part, (part, "–"))
    errors = results.part_errors(part)
    out = [f"## {label} ({table_name})\n\n{dataset_note(results.datasets(part))}\n"]
    summary = data.error_summary(errors)
    out.append(
        write(
            errors_beside_seed(summary, part),
            f"surrogates_{part}_errors",
            f"{table_name} ({label}): error (%) of the configuration found — ours and the seed's "
            "(10 runs, real data)",
            summary,
        )
    )
    figures.add(
        boxplot_figure(errors, label),
        f"surrogates_{part}_boxplots",
        f"{label}: validation and test error per method (Figs 2.1/2.2, C.2/C.3); solid line "
        "median, dashed mean",
        {"errors": errors},
    )
    curves = results.part_curves(part)
    if not curves.empty:
        by_iteration = data.median_by_iteration(curves)
        by_epochs = data.median_by_epochs(curves)
        figures.add(
            convergence_figure(by_iteration, by_epochs, label),
            f"surrogates_{part}_convergence",
            f"{label}: median best-so-far validation error against evaluations and against "
            "epochs (Figs 2.3/2.10)",
            {"iterations": by_iteration, "epochs": by_epochs},
        )
    best = results.brackets(part)
    if not best.empty:
        out.append(
            write(
                bracket_table(best, part),
                f"surrogates_{part}_brackets",
                f"{label}: Hyperband, validation error (%) of the best finished configuration per "
                "bracket (seed: §2.2.1.4, MNIST only)",
            )
        )
        figures.add(
            bracket_figure(best, label),
            f"surrogates_{part}_brackets",
            f"{label}: Hyperband per bracket (Fig 2.14)",
            {"best": best},
        )
    return out


def ard_section(results: Results, write) -> str:  # noqa: ANN001
    rows = results.part_traces(ARD_PART)
    rows = rows[rows["method"] == "rs"] if not rows.empty else rows
    if len(rows) < 5:
        return "## Table 2.3: relevance by ARD\n\nNot computed: no random-search runs on MNIST.\n"
    table = ard.relevance_table(rows)
    return (
        "## Table 2.3: relevance by ARD\n\n"
        f"A GP with a Matérn-5/2 ARD kernel fitted {ard.FITS} times on a random "
        f"{ard.SHARE:.0%} of the {len(rows)} random-search configurations of the MNIST part; the "
        "median (and quartiles) of 1/length-scale. Below 1 reads *not relevant* (the seed).\n\n"
        + write(ard_beside_seed(table), "surrogates_ard", "Table 2.3: median 1/ℓ", table)
    )


def layers_section(results: Results, write) -> str:  # noqa: ANN001
    traces = results.part_traces("mrbi")
    if traces.empty:
        return "## Tables 2.5–2.6: layers\n\nNot computed: no MRBI runs.\n"
    out = ["## Tables 2.5–2.6: number of hidden layers (MRBI)\n\nThe prior is 50/25/25 %.\n"]
    generated = data.generated_layers(traces)
    out.append(
        write(
            shares_beside_seed(generated, seed.generated_layers()),
            "surrogates_layers_generated",
            "Table 2.5: share (%) of generated configurations with 1/2/3 layers",
            generated,
        )
    )
    configs = results.configs
    configs = configs[configs["part"] == "mrbi"] if not configs.empty else configs
    if not configs.empty:
        finished = data.finished_layers(configs)
        out.append(
            write(
                shares_beside_seed(finished, seed.finished_layers()),
                "surrogates_layers_finished",
                "Table 2.6: Hyperband, share (%) of finished configurations with 1/2/3 layers",
                finished,
            )
        )
    return "\n".join(out)


def svm_section(results: Results, write, figures: FigureSet) -> str:  # noqa: ANN001
    if results.traces.empty or svm.PART not in set(results.traces["part"]):
        return ""
    frame = svm.curves(results.outcomes, results.traces)
    table = svm.summary(frame)
    fig, plotted = svm.figure(frame)
    figures.add(
        fig,
        "surrogates_svm_seconds",
        "Beyond the seed: RBF-SVM, median test error of the incumbent against cumulative SVM-fit "
        "seconds (Hyperband and BOHB: training-set fraction as the resource)",
        {"medians": plotted},
    )
    return (
        "## Beyond the seed: Hyperband and BOHB on the Chapter-3 RBF-SVM\n\n"
        "Hyperband and BOHB (SMAC3's model-based Hyperband, Falkner et al. 2018; resource: the "
        "share r/R of each fold's training rows, the same brackets) beside `rs` and `gp` "
        "(thesis Chapter 3) on the RBF-SVM; final test error and the search's SVM-fit seconds "
        "(partial fits included, final retraining not). No peer reports this question.\n\n"
        + write(svm.shown(table), "surrogates_svm", "RBF-SVM: test error and fit seconds", table)
        + "\n"
        + figures.markdown[-1]
    )


def sections(context: ReportContext) -> list[str]:
    """The report's Markdown sections, title first."""
    results = Results(context)
    write = context.write
    out = [
        "# Seed 002: surrogates and Hyperband on a feed-forward network (Jůzlová 2018) — "
        "reproduction\n",
        "Methods (the seed's names): RANDOM = `rs`, GP = `skopt-gp`, TPE = `tpe`, RF = "
        "`skopt-rf`, HYPERBAND = `hyperband`. Errors in %; the configuration found is the best "
        "validation error of the run (Hyperband: over every evaluation, partial ones included) "
        "and its test error after retraining. Rows labelled *seed* are the seed's published "
        "numbers (real MNIST-basic/MRBI, 10 runs), rows labelled *ours* are this sweep's. "
        "Details and deviations: docs/surrogates-hyperband.md.\n",
    ]
    figures = FigureSet(context.out_dir)
    for part in results.parts:
        out += part_section(results, part, write, figures)
    out.append("## Figures\n\n" + "\n".join(figures.markdown))
    out.append(ard_section(results, write))
    out.append(layers_section(results, write))
    out.append(svm_section(results, write, FigureSet(context.out_dir)))
    records = records_frame(run_claim(claim, results) for claim in claims.CLAIMS)
    shown, tally = claims_display(records)
    out.append(
        "## The seed's findings as claims\n\n"
        f"The seed's value is its own (real data, 10 runs). A claim is decided only with at least "
        f"{claims.MIN_RUNS} runs per method and part (else *not evaluated*). {tally}.\n\n"
        + write(shown, "surrogates_claims", "Claims checklist (seed 002, §2.2)", records)
    )
    return out
