"""The Chapter-4 plug-in: Tables 4.3–4.6, Figs 4.1/4.2/4.4–4.9, claims C4.1–C4.14.

Modules: ``report`` (the sections), ``claims`` (the C4.x catalogue on the claims engine),
``data`` (outcome rows per search space, score tables, ensemble sizes), ``figures`` (Figs 4.x and
the ``python -m analysis.chapter4.figures`` command), ``thesis`` and ``thesis_tables/`` (the
thesis's published numbers).
"""

from __future__ import annotations

from analysis.chapter4.data import OTHER_METHODS, THESIS_METHODS
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.chapter4 import report

    return report.sections(context)


PLUGIN = ChapterPlugin(
    name="chapter4",
    methods=frozenset(
        {"cma"}
        | {m for methods in THESIS_METHODS.values() for m in methods}
        | {m for methods in OTHER_METHODS.values() for m in methods}
    ),
    sections=_sections,
)
