"""The Chapter-5 plug-in: Tables 5.2–5.3, Figs 5.2/5.3/5.5–5.9, claims C5.1–C5.11.

Modules: ``report`` (the sections), ``claims`` (the C5.x catalogue on the claims engine),
``data`` (method names, per-repetition errors, score tables, the thesis's dataset columns with
substitutes and datasets not run, per-dataset significance, rank curves, classifier choices),
``figures`` (Figs 5.x), ``thesis`` and ``thesis_tables/`` (the thesis's published numbers).
"""

from __future__ import annotations

from analysis.chapter5.data import DISPLAY_NAMES
from analysis.chapter5.thesis import METHODS
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.chapter5 import report

    return report.sections(context)


PLUGIN = ChapterPlugin(
    name="chapter5",
    methods=frozenset({*METHODS, *DISPLAY_NAMES}),
    sections=_sections,
)
