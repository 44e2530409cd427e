"""Rendering every report shares: Markdown and LaTeX tables, CSV files, figure files.

:class:`TableWriter` writes each table as ``tables/<name>.csv`` and ``.tex`` and returns its
Markdown; :class:`FigureSet` saves figures (PNG + PDF) with the numbers they plot as CSV. The CSV
files hold data: the numbers a table shows (:func:`mean_std_cells` gives both, for "mean (std)"
tables), never Markdown marks (``**bold**`` is the Markdown's and LaTeX's only).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from analysis import figures

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn (--no-figures)
    from matplotlib.figure import Figure

MISSING = "missing"
UNDEFINED = "n/a"  # a statistic that the data do not define (a std of one repetition)
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def markdown(frame: pd.DataFrame) -> str:
    """A GitHub markdown table of ``frame`` (index as the first column, values as given; a
    ``|`` inside a cell, as in ``|a − b| ≤ 0.3``, is escaped so that it does not split the cell)."""

    def row(cells: list) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    frame = _one_label(frame)
    lines = [row([frame.index.name or "", *frame.columns]), "|" + "---|" * (len(frame.columns) + 1)]
    lines += [row([label, *values]) for label, values in _rows(frame)]
    return "\n".join(lines)


def _rows(frame: pd.DataFrame) -> zip:
    """(label, cells) per row: the cells ``iterrows`` gives (rows of ``frame.values``, so mixed
    int/float columns show as floats, as before) without building one Series per row; a
    paper-scale appendix has thousands of rows."""
    return zip(frame.index, frame.to_numpy(), strict=True)


def _one_label(frame: pd.DataFrame) -> pd.DataFrame:
    """A multi-level row index as its first level, the others as leading named columns, so that
    a row reads ``iris | ours, HC | …`` under named headers rather than as a Python tuple."""
    if not isinstance(frame.index, pd.MultiIndex):
        return frame
    names = [name or f"level {i}" for i, name in enumerate(frame.index.names)]
    return frame.rename_axis(names).reset_index(level=names[1:])


_LATEX_REPLACEMENTS = (
    ("\\", r"\textbackslash{}"),
    ("&", r"\&"),
    ("%", r"\%"),
    ("_", r"\_"),
    ("#", r"\#"),
    ("−", "--"),
    ("–", "--"),
    ("·", r"$\cdot$"),
    ("χ²", r"$\chi^2$"),
    ("α", r"$\alpha$"),
    ("≤", r"$\leq$"),
    ("≥", r"$\geq$"),
    ("×", r"$\times$"),
    ("≈", r"$\approx$"),
    ("ρ", r"$\rho$"),
    ("→", r"$\to$"),
    ("—", "---"),
    ("…", r"\ldots{}"),
)  # fmt: skip  (other Unicode is left to a UTF-8 LaTeX engine)


def _latex_escape(text: object) -> str:
    """Plain text (with markdown ``**bold**`` and a few symbols) as LaTeX."""
    out = str(text)
    for char, escaped in _LATEX_REPLACEMENTS:
        out = out.replace(char, escaped)
    return _BOLD.sub(r"\\textbf{\1}", out)


def latex(frame: pd.DataFrame, caption: str) -> str:
    """``frame`` as a LaTeX ``table`` with ``caption``."""
    frame = _one_label(frame)
    header = [str(frame.index.name or ""), *map(str, frame.columns)]
    rows = [" & ".join(map(_latex_escape, header)) + r" \\ \hline"]
    rows += [" & ".join(map(_latex_escape, [label, *row])) + r" \\" for label, row in _rows(frame)]
    return "\n".join(
        [
            r"\begin{table}[ht]\centering\small",
            rf"\caption{{{_latex_escape(caption)}}}",
            r"\begin{tabular}{l" + "r" * len(frame.columns) + "}",
            *rows,
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )


@dataclass
class TableWriter:
    """Writes each table as ``tables/<name>.csv`` and ``.tex``; returns its markdown."""

    out_dir: Path

    def __call__(
        self, frame: pd.DataFrame, name: str, caption: str, data: pd.DataFrame | None = None
    ) -> str:
        """``data`` (default ``frame`` without its ``**bold**`` marks) goes to the CSV; ``frame``
        to LaTeX and markdown."""
        tables = self.out_dir / "tables"
        tables.mkdir(parents=True, exist_ok=True)
        (unmarked(frame) if data is None else data).to_csv(tables / f"{name}.csv")
        (tables / f"{name}.tex").write_text(latex(frame, caption))
        return (
            f"{markdown(frame)}\n\n*{caption}* "
            f"([CSV](tables/{name}.csv), [LaTeX](tables/{name}.tex))\n"
        )


def unmarked(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without Markdown's ``**bold**`` marks (in its text cells), for a CSV file."""
    types = pd.api.types
    text = [
        i
        for i, dtype in enumerate(frame.dtypes)
        if types.is_object_dtype(dtype) or types.is_string_dtype(dtype)
    ]
    if not text:
        return frame
    out = frame.copy()
    for i in text:
        out.iloc[:, i] = frame.iloc[:, i].map(
            lambda cell: _BOLD.sub(r"\1", cell) if isinstance(cell, str) else cell
        )
    return out


def format_number(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; :data:`MISSING` for NaN."""
    return MISSING if pd.isna(value) else f"{value:.{digits}f}"


def mean_std_cells(
    means: pd.DataFrame,
    stds: pd.DataFrame,
    repetitions: pd.DataFrame | None = None,
    digits: int = 2,
    missing: str = MISSING,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A "mean (std)" table (rows × columns of ``means``) and the numbers it shows.

    Returns ``(cells, numbers)``: ``cells`` for Markdown and LaTeX, "mean (std)" with the lowest
    mean of each row in ``**bold**``, :data:`UNDEFINED` for a NaN std and ``missing`` for a NaN
    mean; ``numbers`` for the CSV (the ``data`` of :class:`TableWriter`), column ``c`` the
    means and ``c std`` the stds of each column ``c``, in that order. ``repetitions`` (same
    shape): a std over fewer than 2 is undefined, NaN in both.
    """
    stds = stds.reindex(index=means.index, columns=means.columns)
    if repetitions is not None:
        counts = repetitions.reindex(index=means.index, columns=means.columns)
        stds = stds.where(counts >= 2)
    shown = stds.map(lambda v: UNDEFINED if pd.isna(v) else f"{v:.{digits}f}")
    cells = means.map(lambda v: f"{v:.{digits}f}") + " (" + shown + ")"
    cells = cells.where(means.notna(), missing).astype(object)
    best = means.eq(means.min(axis=1), axis=0)
    cells = cells.where(~best, "**" + cells + "**")
    numbers = pd.concat([means, stds.add_suffix(" std")], axis=1)
    order = [name for column in means.columns for name in (column, f"{column} std")]
    return cells, numbers[order]


@dataclass
class FigureSet:
    """Figure files written and their markdown."""

    out_dir: Path
    markdown: list[str] = field(default_factory=list)

    def add(
        self,
        figure: Figure | Callable[[], Figure],
        name: str,
        caption: str,
        data: dict[str, pd.DataFrame] | None = None,
    ) -> None:
        """Save ``figure`` (or what the callable draws, called only when figures are drawn:
        ``--no-figures``); ``data`` (plotted numbers, per protocol) goes to ``tables/``."""
        written: list[Path] = []
        if figures.drawing():
            drawn = figure() if callable(figure) else figure
            written = figures.save(drawn, self.out_dir / "figures", name)
        links = [f"[{path.suffix[1:].upper()}](figures/{path.name})" for path in written[1:]]
        for label, frame in (data or {}).items():
            frame.to_csv(tables_dir(self.out_dir) / f"{name}_{label}.csv")
            links.append(f"[data {label}](tables/{name}_{label}.csv)")
        image = f"![{name}](figures/{name}.png)" if written else f"{name}: {figures.NOT_DRAWN}"
        self.markdown.append(f"{image}\n\n*{caption}* ({', '.join(links)})\n")


def tables_dir(out_dir: Path) -> Path:
    """``out_dir/tables``, created if needed."""
    path = out_dir / "tables"
    path.mkdir(parents=True, exist_ok=True)
    return path
