"""The report engine: results folder → ``report.md``, ``tables/`` and ``figures/``.

Loads the outcome rows once (``analysis.load``), picks the chapter plug-in
(``analysis.plugins``), writes the chapter's sections, then adds what every report has: notes at
the top (plug-in chosen, results files left out, mixed code revisions), the overtuning section
(``analysis.overtuning``) and the provenance section (``analysis.provenance``).

Entry point: :func:`write_report` (command line: ``python -m analysis``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis import figures, load, overtuning, plugins, provenance, render, runs
from runfiles import layout

OVERTUNING_CITATION = (
    "Schneider, Bischl & Feurer, *Overtuning in Hyperparameter Optimization*, arXiv 2506.19540 "
    "(2025)"
)
PROTOCOL_KEYS = ["protocol", "method"]
# The outcome columns the overtuning curves carry (plug-ins' extras group by these): a sort of the
# whole outcome table would copy every provenance column (a paper-scale result set).
CURVE_COLUMNS = ("run_id", "method", "iteration", "test_error", "protocol", "part", "dataset")
CURVE_NAMES = ("run_id", "method", "protocol", "part", "dataset")  # categoricals: one copy each


def overtuning_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Final-iteration overtuning per (protocol, method), in the methods' usual order."""
    keys = [k for k in PROTOCOL_KEYS if k in curves.columns]
    table = overtuning.summary(curves, keys)
    if "protocol" not in keys:
        return table
    order = load.method_order(table.index.get_level_values("method").unique())
    return table.reindex(
        sorted(table.index, key=lambda k: (_protocol_rank(k[0]), order.index(k[1])))
    )


def _protocol_rank(protocol: str) -> int:
    return load.PROTOCOLS.index(protocol) if protocol in load.PROTOCOLS else len(load.PROTOCOLS)


def row_labels(index: pd.Index) -> list[str]:
    """``hold-out / gp``-style labels of a (protocol, …) MultiIndex; plain labels otherwise."""
    if index.nlevels == 1:
        return [str(label) for label in index]
    return [
        " / ".join([load.PROTOCOL_LABELS.get(key[0], key[0]), *map(str, key[1:])]) for key in index
    ]


def _display(table: pd.DataFrame) -> pd.DataFrame:
    shares = ["share_positive", "share_worse_than_reference"]
    shown = table.copy()
    for column in table.columns.drop("runs"):
        digits = 0 if column in shares else 2
        scale = 100.0 if column in shares else 1.0
        shown[column] = (table[column] * scale).map(lambda v, d=digits: render.format_number(v, d))
    shown = shown.set_axis(row_labels(table.index)).rename_axis("validation / method")
    return shown.rename(
        columns={
            "share_positive": "runs with ot_T > 0 (%)",
            "mean": "mean ot_T (pp)",
            "q90": "q90 ot_T (pp)",
            "q95": "q95 ot_T (pp)",
            "median_relative": "median rot_T",
            "share_worse_than_reference": "final worse than first (%)",
        }
    )


def overtuning_section(context: plugins.ReportContext, plugin: plugins.ChapterPlugin) -> str:
    """The overtuning section: definitions, the per-(protocol, method) table, plug-in extras."""
    outcomes = context.outcomes
    slim = outcomes[[c for c in CURVE_COLUMNS if c in outcomes.columns]]
    curves = overtuning.overtuning_curves(
        slim.astype({c: "category" for c in slim.columns if c in CURVE_NAMES})
    )
    table = overtuning_table(curves)
    extras = plugin.overtuning_extras(context, curves) if plugin.overtuning_extras else ""
    return "\n".join(
        [
            "## Overtuning\n",
            f"Overtuning as defined by {OVERTUNING_CITATION}: at iteration t, ot_t = test error "
            "of the incumbent − the lowest test error of any incumbent up to t (0 while the test "
            "error only improves); relative overtuning rot_t = ot_t / (test error of the first "
            "incumbent − that lowest test error), 0 for 0/0 and ∞ for a positive ot_t over 0; "
            "rot_t > 1 means worse than the first incumbent. The table uses the first "
            "incumbent as reference (the paper's default variant; the default-configuration "
            "variant is `analysis.overtuning.overtuning_curves(reference_errors=...)`). "
            "ot_T: at each run's final iteration, in percentage points of test error; CMA-ES "
            "incumbents exist only at generation ends, so their first incumbent is t = 6.\n",
            context.write(_display(table), "overtuning", "Final-iteration overtuning", table),
            extras,
        ]
    )


def dataset_notes(results: str | Path) -> dict[str, str]:
    """The sweep's notes on datasets it names but does not run as named (substituted, or not run
    and why), from ``dataset_notes.json`` (written by the sweep); {} when there are none."""
    path = Path(results) / layout.DATASET_NOTES
    return json.loads(path.read_text()) if path.is_file() else {}


def _dataset_lines(notes: dict[str, str]) -> list[str]:
    if not notes:
        return []
    lines = [f"* `{name}`: {note}" for name, note in sorted(notes.items())]
    return ["> **Datasets of the experiment not run as named:**\n" + "\n".join(lines)]


def _top_notes(
    why: str,
    unreadable: dict[str, str],
    summary: provenance.Provenance,
    datasets: dict[str, str],
) -> str:
    notes = [f"*Report written by the {why}.*", *_dataset_lines(datasets)]
    if unreadable:
        count = len(unreadable)
        noun = (
            "file could not be read and was left out"
            if count == 1
            else ("files could not be read and were left out")
        )
        notes.append(f"> **{count} results {noun}** (listed under Provenance).")
    warning = provenance.warning(summary)
    return "\n\n".join([*notes, *([warning] if warning else [])]) + "\n"


def write_report(
    results: str | Path,
    out_dir: str | Path | None = None,
    fig31_dataset: str | None = None,
    chapter: str | None = None,
    candidates: list[str] | None = None,
) -> Path:
    """Analyse the results folder ``results`` and write the report; returns ``report.md``.

    ``chapter``: a registered plug-in name (default: chosen from the results, see
    ``analysis.plugins.choose_plugin``). ``fig31_dataset``: option of the Chapter-3 plug-in;
    ``candidates``: the benchmark plug-in's (default: those the sweep folder remembers).
    Every figure draws a method in the same style (``analysis.figures.report_methods``).
    """
    outcomes = load.load_outcomes(results, categorical_names=True)
    out_dir = Path(out_dir) if out_dir is not None else load.default_report_dir(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    notes = dataset_notes(results)
    plugin, why = plugins.choose_plugin(outcomes, chapter)
    if not plugin.categorical_names:
        outcomes = load.with_string_names(outcomes)
    context = plugins.ReportContext(
        Path(results), outcomes, out_dir, render.TableWriter(out_dir),
        {"fig31_dataset": fig31_dataset, "dataset_notes": notes, "candidates": candidates},
    )  # fmt: skip
    summary = provenance.summarise(outcomes)
    unreadable = outcomes.attrs.get(load.UNREADABLE, {})
    with figures.report_methods(outcomes["method"].unique()):  # one style per method
        sections = plugin.sections(context)
        sections[1:1] = [_top_notes(why, unreadable, summary, notes)]
        sections += [
            runs.section(outcomes, context.write),
            overtuning_section(context, plugin),
            provenance.section(summary, context.write, unreadable),
        ]
    report = out_dir / "report.md"
    report.write_text("\n".join(sections))
    return report
