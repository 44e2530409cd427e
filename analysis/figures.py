"""Figure helpers every chapter shares: method styles, saving, panels, and the overtuning figure.

Method styles (:func:`method_styles`): every figure of a report draws a method in the same
colour, line style and marker, and no two methods of a report alike. The thesis's methods keep
the thesis's colours: one per base optimiser of Fig 3.3 (``grid``, ``rs``, ``gp``, ``cma``;
posterior-mean ``gp-pm`` cyan), dashed for reshuffled splits (``-r``), and Fig 5.7's for the
Chapter-5 methods (:data:`THESIS_STYLES`). Every other method (a user's optimizer, ``GP-cond``
of the benchmark, ``gp-sel``) gets one from :data:`PALETTE` (tab20 without the thesis's colours),
in the order of the sorted names of the report's other methods, with line styles and markers
cycling so that more methods than colours stay distinct; so does a thesis method whose colour
and line style an earlier one of the report has (``SMAC`` beside ``grid``: both green). Figures are
``matplotlib.figure.Figure`` objects (no pyplot state, any backend).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn (--no-figures)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PROTOCOL_PANELS = {"holdout": "hold-out", "cv5": "5-fold"}

CURVE_METHODS = ("grid", "rs", "gp", "gp-r", "cma", "cma-r")
# Fig 3.3: one colour per base optimiser (dashed when reshuffled, ``-r``).
COLOURS = {
    "grid": "tab:green", "rs": "tab:purple", "gp": "tab:blue", "gp-pm": "tab:cyan",
    "cma": "tab:red",
}  # fmt: skip
# Fig 5.7: the Chapter-5 methods' colours and line styles.
CHAPTER5_STYLES = (
    ("RS", "tab:purple", "-"), ("SMAC", "tab:green", "-"), ("GP-matern-ls", "tab:blue", "-"),
    ("GP-cond-ls", "tab:red", "-"), ("GP-laplace-ls", "tab:orange", "-"),
    ("Spearmint", "tab:grey", "--"),
)  # fmt: skip


@dataclass(frozen=True)
class MethodStyle:
    """How a method is drawn: colour, line style and marker (where a figure draws markers)."""

    color: str
    linestyle: str
    marker: str

    def line(self, markers: bool = True) -> dict[str, object]:
        """Keyword arguments of ``Axes.plot``: colour and line style, the marker if ``markers``."""
        return {
            "color": self.color,
            "linestyle": self.linestyle,
            "marker": self.marker if markers else None,
        }


THESIS_MARKER = "o"
# The thesis's methods, in priority order: Chapter 3's, then Chapter 5's. Where a report holds
# two of them with the same colour and line style (grid and SMAC: both green), the later one
# takes a palette style.
THESIS_STYLES: dict[str, MethodStyle] = {
    **{
        f"{base}{suffix}": MethodStyle(colour, "--" if suffix else "-", THESIS_MARKER)
        for base, colour in COLOURS.items()
        for suffix in ("", "-r")
    },
    **{name: MethodStyle(colour, line, THESIS_MARKER) for name, colour, line in CHAPTER5_STYLES},
}
# tab20 without the colours of the thesis's methods (and without light grey, faint on white):
# the three tab10 colours left first, then the light ones.
PALETTE = (
    "tab:brown", "tab:pink", "tab:olive", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
)  # fmt: skip
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("s", "^", "D", "v", "P", "X", "<", ">", "p", "h")  # not the thesis's "o"

# The methods of the report being written (:func:`report_methods`), so that a method's style does
# not depend on which of them one figure or panel draws.
_REPORT_METHODS: ContextVar[tuple[str, ...]] = ContextVar("report_methods", default=())


@contextmanager
def report_methods(methods: Iterable[object]) -> Iterator[None]:
    """Within the block, :func:`method_styles` assigns styles over ``methods`` (all the methods
    of a report) as well as those it is asked about: every figure of the report agrees."""
    token = _REPORT_METHODS.set(tuple(map(str, methods)))
    try:
        yield
    finally:
        _REPORT_METHODS.reset(token)


def palette_style(index: int) -> MethodStyle:
    """The ``index``-th style of the palette: colours first, then the next line style (distinct
    (colour, line style) pairs for the first ``len(PALETTE) * len(LINESTYLES)`` = 48)."""
    return MethodStyle(
        PALETTE[index % len(PALETTE)],
        LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)],
        MARKERS[index % len(MARKERS)],
    )


def method_styles(methods: Iterable[object]) -> dict[str, MethodStyle]:
    """The style of each of ``methods``, the same in every figure of a report.

    Styles are assigned over ``methods`` and the report's methods (:func:`report_methods`): the
    thesis's methods keep theirs (:data:`THESIS_STYLES`, earlier ones first where two share
    one), every other method takes :func:`palette_style` in the order of the sorted names.
    """
    asked = list(dict.fromkeys(map(str, methods)))
    every = set(asked) | set(_REPORT_METHODS.get())
    styles: dict[str, MethodStyle] = {}
    taken: set[tuple[str, str]] = set()
    for method, style in THESIS_STYLES.items():
        if method in every and (style.color, style.linestyle) not in taken:
            styles[method] = style
            taken.add((style.color, style.linestyle))
    others = sorted(every - set(styles))
    styles |= {method: palette_style(i) for i, method in enumerate(others)}
    return {method: styles[method] for method in asked}


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
    """One line per column of ``methods`` present, in the method's style (:func:`method_styles`,
    over every column of ``table`` and the report's methods); NaN rows skipped per series.

    ``marker``: None draws lines only; any other value draws each method's own marker (``"o"``
    for the thesis's methods), so that methods with the same colour stay apart.
    """
    styles = method_styles([*table.columns, *methods])
    for method in methods:
        if method in table.columns:
            values = table[method].dropna()
            ax.plot(
                values.index, values.to_numpy(), ms=3, label=method,
                **styles[method].line(markers=marker is not None),
            )  # fmt: skip


def shared_legend(figure: Figure, axes: np.ndarray) -> None:
    """One legend below the figure for every labelled series of ``axes`` (a series drawn with
    its marker in some panel shows the marker)."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles or (_has_marker(handle) and not _has_marker(handles[label])):
                handles[label] = handle
    if handles:
        figure.legend(handles.values(), handles.keys(), loc="outside lower center", ncols=6)


def _has_marker(handle: object) -> bool:
    get_marker = getattr(handle, "get_marker", None)
    return get_marker is not None and get_marker() not in (None, "None", "", " ")


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
