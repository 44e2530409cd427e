"""Chapter-3 view of overtuning: mean curves (styled as Fig 3.3), |D_TVS| bins (as Fig 3.4), and
what the numbers say about the thesis's claims that reshuffling (§3.2.2, Tables 3.1–3.3) and
posterior-mean selection (§3.4.1, Table 3.5) make the final model generalise better."""

from __future__ import annotations

from functools import partial

import pandas as pd

from analysis import figures, load, overtuning, render, report
from analysis.chapter3.claims import SIZE_BIN_EDGES
from analysis.figures import CURVE_METHODS
from analysis.plugins import ReportContext

# Fig 3.3's series and the posterior-mean variants: the methods whose overtuning the claims on
# reshuffling and posterior-mean selection are about. The CSV holds every method.
FIGURE_METHODS = (*CURVE_METHODS, "gp-pm", "gp-pm-r")
# (method, its variant) pairs each claim compares; the variant should overtune less.
RESHUFFLED = (("gp", "gp-r"), ("cma", "cma-r"), ("gp-pm", "gp-pm-r"))
POSTERIOR_MEAN = (("gp", "gp-pm"), ("gp-r", "gp-pm-r"))


def _mean_curves(curves: pd.DataFrame) -> dict[str, pd.DataFrame]:
    means = overtuning.mean_curves(curves, ["protocol"])
    return {
        protocol: block.droplevel("protocol")[load.method_order(block.columns)]
        for protocol, block in means.groupby(level="protocol")
    }


def by_size_bin(curves: pd.DataFrame, labels: tuple[str, ...]) -> pd.DataFrame:
    """Final-iteration overtuning per (protocol, |D_TVS| bin, method), bins as Fig 3.4."""
    final = overtuning.final_overtuning(curves)  # binning a run's last row is binning the run
    sizes = load.dataset_sizes(sorted(final["dataset"].unique()))
    binned = final.assign(
        size_bin=pd.cut(
            final["dataset"].map(sizes).astype(float), SIZE_BIN_EDGES, right=True,
            labels=list(labels),
        )
    )  # fmt: skip
    return overtuning.summary(binned, ["protocol", "size_bin", "method"])


def _lower_count(table: pd.DataFrame, pairs: tuple[tuple[str, str], ...]) -> tuple[int, int]:
    """Of the (protocol, method, variant) triples present, how many have a lower mean ot_T."""
    lower = total = 0
    for protocol in table.index.get_level_values("protocol").unique():
        for method, variant in pairs:
            if (protocol, method) in table.index and (protocol, variant) in table.index:
                total += 1
                means = table.loc[protocol, "mean"]
                lower += bool(means[variant] < means[method])
    return lower, total


def claims_sentence(table: pd.DataFrame) -> str:
    """One sentence: do reshuffling and posterior-mean selection lower mean final overtuning?"""
    reshuffled, n_reshuffled = _lower_count(table, RESHUFFLED)
    posterior, n_posterior = _lower_count(table, POSTERIOR_MEAN)
    return (
        f"**What it says about the thesis's claims:** reshuffling (`-r`) lowers the mean final "
        f"overtuning in {reshuffled} of {n_reshuffled} (protocol, method) pairs and "
        f"posterior-mean selection (`-pm`) in {posterior} of {n_posterior}; the thesis's "
        "argument that both reduce overfitting of the validation error (§3.2.1, §3.4.1) predicts "
        "all of them."
    )


def _bin_display(table: pd.DataFrame) -> pd.DataFrame:
    cells = table["mean"].map(lambda v: render.format_number(v)) + table["share_positive"].map(
        lambda v: f" ({100 * v:.0f}%)"
    )
    wide = cells.unstack("size_bin")
    order = load.method_order(wide.index.get_level_values("method").unique())
    wide = wide.reindex(
        sorted(wide.index, key=lambda k: (load.PROTOCOLS.index(k[0]), order.index(k[1])))
    )
    return wide.set_axis(report.row_labels(wide.index)).rename_axis(
        index="validation / method", columns=None
    )


def _bin_sentence(table: pd.DataFrame) -> str:
    means = table["mean"].groupby(level="size_bin", observed=False).mean()
    present = means.dropna()
    if present.empty:
        return "No dataset with a known |D_TVS|: nothing to say by size."
    return (
        f"**What it says:** mean final overtuning over methods is highest in bin "
        f"{present.idxmax()} ({present.max():.2f} pp) and lowest in {present.idxmin()} "
        f"({present.min():.2f} pp); the thesis attributes overfitting of the validation error "
        "to small datasets (§3.3.4, Fig 3.4), which predicts the highest values in the smallest "
        "bins."
    )


def extras(context: ReportContext, curves: pd.DataFrame, size_labels: tuple[str, ...]) -> str:
    """Figure, size-bin table and one sentence per table, for the engine's overtuning section."""
    table = overtuning.summary(curves, ["protocol", "method"])
    mean_curves = _mean_curves(curves)
    figure_set = render.FigureSet(context.out_dir)
    figure_set.add(
        partial(
            figures.overtuning_figure,
            mean_curves,
            FIGURE_METHODS,
            "mean overtuning (pp of test error)",
        ),
        "fig_overtuning_curves",
        "Mean overtuning of the incumbent vs function evaluations (over runs and datasets); "
        "colours and dashes (reshuffled -r) as Fig 3.3, posterior-mean methods in cyan. "
        "The CSVs hold every method.",
        {f"mean_{protocol}": curve for protocol, curve in mean_curves.items()},
    )
    bins = by_size_bin(curves, size_labels)
    caption = "Final-iteration overtuning by |D_TVS| bin: mean ot_T in pp (runs with ot_T > 0)"
    return "\n".join(
        [
            claims_sentence(table) + "\n",
            *figure_set.markdown,
            "### Overtuning by |D_TVS| (bins of Fig 3.4)\n",
            context.write(_bin_display(bins), "overtuning_by_size", caption, bins),
            _bin_sentence(bins) + "\n",
        ]
    )
