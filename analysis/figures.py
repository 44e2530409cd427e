"""Figure helpers every chapter shares: series styling, saving, panels, and the overtuning figure.

Series: one colour per base optimiser (``gp``, ``cma``, …), dashed for reshuffled splits (``-r``),
solid for fixed splits, as the thesis's Fig 3.3; posterior-mean variants (``-pm``) get their own
colour so that they stay apart from the argmin method of the same run. Figures are
``matplotlib.figure.Figure`` objects (no pyplot state, any backend).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn (--no-figures)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PROTOCOL_PANELS = {"holdout": "hold-out", "cv5": "5-fold"}

CURVE_METHODS = ("grid", "rs", "gp", "gp-r", "cma", "cma-r")
COLOURS = {
    "grid": "tab:green", "rs": "tab:purple", "gp": "tab:blue", "gp-pm": "tab:cyan",
    "cma": "tab:red",
}  # fmt: skip


def series_style(method: str) -> dict[str, object]:
    """Colour of the base optimiser; dashed when the method reshuffles its splits (``-r``)."""
    base = "gp-pm" if method.startswith("gp-pm") else method.split("-")[0]
    return {
        "color": COLOURS.get(base, "black"),
        "linestyle": "--" if method.endswith("-r") else "-",
        "label": method,
    }


# The formats every figure is written in: PNG for the Markdown report, PDF for papers. Drawing
# dominates a report's time (docs/performance.md), so ``python -m analysis --no-pdf`` leaves PDF
# out and ``--no-figures`` (no formats) draws none: tables, claims and the plotted data are
# still written.
_FORMATS: ContextVar[tuple[str, ...]] = ContextVar("figure_formats", default=("png", "pdf"))


@contextmanager
def formats(*suffixes: str) -> Iterator[None]:
    """Within the block, :func:`save` writes ``suffixes`` (``"png"`` first: the report links it);
    no suffixes: no figure is drawn (:func:`drawing` is false)."""
    if suffixes and (suffixes[0] != "png" or not set(suffixes) <= {"png", "pdf", "svg"}):
        raise ValueError(f"figure formats must start with png (png, pdf, svg), got {suffixes}")
    token = _FORMATS.set(suffixes)
    try:
        yield
    finally:
        _FORMATS.reset(token)


def drawing() -> bool:
    """Whether figures are drawn (not within ``formats()`` with no suffixes: ``--no-figures``)."""
    return bool(_FORMATS.get())


NOT_DRAWN = "not drawn (`--no-figures`)"


def save(figure: Figure, out_dir: str | Path, name: str) -> list[Path]:
    """Write ``figure`` to ``out_dir/name.png`` and ``.pdf`` (see :func:`formats`); the paths
    (none when figures are off)."""
    out_dir = Path(out_dir)
    paths = [out_dir / f"{name}.{suffix}" for suffix in _FORMATS.get()]
    if paths:
        out_dir.mkdir(parents=True, exist_ok=True)
    for path in paths:
        figure.savefig(path, dpi=150, bbox_inches="tight")
    return paths


def no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes)


def plot_series(
    ax: Axes, table: pd.DataFrame, marker: str | None, methods: tuple[str, ...] = CURVE_METHODS
) -> None:
    """One line per column of ``methods`` present (styled by :func:`series_style`); NaN rows
    skipped per series."""
    for method in methods:
        if method in table.columns:
            values = table[method].dropna()
            ax.plot(values.index, values.to_numpy(), marker=marker, ms=3, **series_style(method))


def shared_legend(figure: Figure, axes: np.ndarray) -> None:
    """One legend below the figure for every labelled series of ``axes``."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        figure.legend(handles.values(), handles.keys(), loc="outside lower center", ncols=6)


def overtuning_figure(
    curves: Mapping[str, pd.DataFrame], methods: tuple[str, ...], ylabel: str
) -> Figure:
    """Mean overtuning vs evaluations, one panel per protocol (hold-out, 5-fold).

    ``curves[protocol]``: iteration × method (each method at its own iterations).
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True, squeeze=False)[0]
    for ax, (protocol, label) in zip(axes, PROTOCOL_PANELS.items(), strict=True):
        ax.set_title(label)
        table = curves.get(protocol)
        if table is None or table.empty:
            no_data(ax, "overtuning")
        else:
            plot_series(ax, table, marker=None, methods=methods)
        ax.set_xlabel("number of function evaluations")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    shared_legend(figure, axes)
    return figure
