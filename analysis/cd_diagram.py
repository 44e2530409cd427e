"""Critical-difference diagrams of average ranks (Demšar 2006, as in the thesis's Ch. 4 figures).

Two variants over the same score table (datasets × methods, lower is better):

* Nemenyi: methods joined by a bar are not significantly different by the Nemenyi post-hoc test
  after Friedman (``scikit_posthocs.posthoc_nemenyi_friedman``); the CD interval drawn above the
  axis is ours, ``analysis.stats.nemenyi_critical_difference``.
* Wilcoxon–Holm: bars join methods whose pairwise Wilcoxon p-value (``analysis.stats``), Holm
  adjusted, is at least alpha — the cliques of Benavoli et al. (2016) / Ismail Fawaz et al. (2019).

Drawing uses ``scikit_posthocs.critical_difference_diagram`` on a plain ``matplotlib.figure.Figure``
(no pyplot state, any backend); each method's line and marker are in its style of
``analysis.figures.method_styles``, as in the report's other figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis import figures, stats

if TYPE_CHECKING:  # matplotlib is imported only when a diagram is drawn (--no-figures)
    from matplotlib.axes import Axes

_LABEL_LEFT = "{label} ({rank:.2f})"
_LABEL_RIGHT = "({rank:.2f}) {label}"


def _new_axes(n_methods: int) -> Axes:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 1.2 + 0.22 * n_methods), layout="constrained")
    return figure.add_subplot()


def _draw_cd_interval(ax: Axes, start: float, cd: float) -> None:
    """Demšar-style CD interval above the rank axis (and its tick labels), from ``start``."""
    from matplotlib.transforms import offset_copy

    left, right = ax.get_xlim()
    ax.set_xlim(left, max(right, start + cd + 0.05 * (right - left)))
    bar_style = {"color": "black", "linewidth": 1.5, "clip_on": False}
    above_ticks = offset_copy(ax.transData, fig=ax.figure, y=30, units="points")
    ax.plot([start, start + cd], [0, 0], transform=above_ticks, **bar_style)
    for end in (start, start + cd):
        ax.plot([end, end], [-0.15, 0.15], transform=above_ticks, **bar_style)
    label_offset = offset_copy(ax.transData, fig=ax.figure, y=36, units="points")
    ax.text(start + cd / 2, 0, f"CD = {cd:.2f}", ha="center", va="bottom", transform=label_offset)


def _style_elbows(
    artists: dict[str, list], ranks: pd.Series, styles: dict[str, figures.MethodStyle]
) -> None:
    """Each method's elbow (the line from its label to its rank) in the method's style
    (``analysis.figures.method_styles``: as in every other figure of the report), labelled with
    the method, its marker on the rank axis in place of the library's round one; the labels
    black."""
    texts = {
        fmt.format(label=method, rank=rank): method
        for method, rank in ranks.items()
        for fmt in (_LABEL_LEFT, _LABEL_RIGHT)
    }
    for elbow, label, marker in zip(
        artists["elbows"], artists["labels"], artists["markers"], strict=True
    ):
        method = texts[label.get_text()]
        style = styles[method]
        elbow.set(
            label=method, linestyle=style.linestyle, marker=style.marker, markevery=[2],
            markersize=7, clip_on=False, zorder=3,
        )  # fmt: skip
        marker.remove()
        label.set_color("black")  # a pale palette colour is hard to read as text


def _draw(
    scores: pd.DataFrame,
    sig_matrix: pd.DataFrame,
    alpha: float,
    ax: Axes | None,
    title: str,
    show_cd: bool,
) -> Axes:
    import scikit_posthocs  # it imports matplotlib: only when a diagram is drawn

    ranks = stats.average_ranks(scores)
    ax = ax if ax is not None else _new_axes(len(ranks))
    styles = figures.method_styles(ranks.index)
    artists = scikit_posthocs.critical_difference_diagram(
        ranks,
        sig_matrix,
        alpha=alpha,
        ax=ax,
        label_fmt_left=_LABEL_LEFT,
        label_fmt_right=_LABEL_RIGHT,
        crossbar_props={"color": "black", "linewidth": 2.5},
        color_palette={method: style.color for method, style in styles.items()},
    )
    _style_elbows(artists, ranks, styles)
    if show_cd:
        cd = stats.nemenyi_critical_difference(len(ranks), len(scores), alpha)
        _draw_cd_interval(ax, ranks.min(), cd)
    ax.set_title(title, fontsize=10, pad=58 if show_cd else 26)
    return ax


def plot_nemenyi_diagram(
    scores: pd.DataFrame, alpha: float = 0.05, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Nemenyi CD diagram: bars join methods the Nemenyi test does not separate at ``alpha``."""
    import scikit_posthocs

    values = stats.check_scores(scores)
    sig_matrix = scikit_posthocs.posthoc_nemenyi_friedman(values)
    result = stats.friedman(values)
    default_title = (
        f"Nemenyi, α = {alpha}, N = {len(values)} datasets "
        f"(Friedman χ² = {result.statistic:.1f}, p = {result.pvalue:.2g})"
    )
    return _draw(values, sig_matrix, alpha, ax, title or default_title, show_cd=True)


def plot_wilcoxon_holm_diagram(
    scores: pd.DataFrame, alpha: float = 0.05, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Wilcoxon–Holm diagram: bars join methods whose Holm-adjusted Wilcoxon p ≥ ``alpha``.

    A pair with no nonzero difference (p undefined) counts as not different.
    """
    values = stats.check_scores(scores)
    adjusted = stats.holm_adjust(stats.wilcoxon_pvalues(values)).fillna(1.0)
    sig_matrix = adjusted.where(~np.eye(len(adjusted), dtype=bool), 1.0)
    default_title = f"Wilcoxon–Holm, α = {alpha}, N = {len(values)} datasets"
    return _draw(values, sig_matrix, alpha, ax, title or default_title, show_cd=False)


def save_cd_diagrams(
    scores: pd.DataFrame, out_dir: str | Path, name: str, alpha: float = 0.05
) -> list[Path]:
    """Save both diagrams as ``{name}_cd_nemenyi`` and ``{name}_cd_wilcoxon_holm``, in the formats
    of ``analysis.figures.save``."""
    written: list[Path] = []
    if not figures.drawing():
        return written
    for variant, plot in (
        ("nemenyi", plot_nemenyi_diagram),
        ("wilcoxon_holm", plot_wilcoxon_holm_diagram),
    ):
        ax = plot(scores, alpha=alpha)
        written += figures.save(ax.figure, out_dir, f"{name}_cd_{variant}")
    return written


def save_and_link(scores: pd.DataFrame, out_dir: Path, name: str) -> str:
    """Save both diagrams in ``out_dir/figures`` (:func:`save_cd_diagrams`); the report's markdown
    for them: the Nemenyi image and a link to the Wilcoxon–Holm one, or a note when figures are
    off (``--no-figures``)."""
    if not save_cd_diagrams(scores, out_dir / "figures", name):
        return figures.NOT_DRAWN
    return (
        f"![Nemenyi](figures/{name}_cd_nemenyi.png) "
        f"[Wilcoxon–Holm](figures/{name}_cd_wilcoxon_holm.png)"
    )
