"""The demo plug-in (``make demo``): what the short sweep on scikit-learn's bundled datasets ran,
and only that — mean test error per dataset and method, win/loss counts, convergence curves and
critical-difference diagrams of the methods and validation types present. It compares nothing
with the thesis (``make reproduce-chapter3`` does, on the thesis's datasets).

Module: ``report`` (the sections and the convergence figure).
"""

from __future__ import annotations

from analysis.figures import CURVE_METHODS
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.demo import report

    return report.sections(context)


PLUGIN = ChapterPlugin(name="demo", methods=frozenset(CURVE_METHODS), sections=_sections)
