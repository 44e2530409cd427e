"""The Chapter-3 plug-in: Tables 3.1–3.5, Figs 3.1/3.3/3.4/3.5, claims C3.1–C3.20.

Modules: ``report`` (the sections), ``claims`` (the C3.x catalogue on the claims engine),
``data`` (the thesis's two experiments, gp hold-out curves, size bins), ``figures`` (Figs 3.x),
``overtuning`` (the chapter's overtuning figure, size bins and sentences), ``thesis`` and
``thesis_tables/`` (the thesis's published numbers).
"""

from __future__ import annotations

import pandas as pd

from analysis.chapter3.claims import MAIN_METHODS, PM_METHODS
from analysis.load import THESIS_METHODS
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.chapter3 import report

    return report.sections(context)


def _overtuning_extras(context: ReportContext, curves: pd.DataFrame) -> str:
    from analysis.chapter3 import overtuning, report

    return overtuning.extras(context, curves, report.SIZE_BIN_LABELS)


PLUGIN = ChapterPlugin(
    name="chapter3",
    methods=frozenset({*THESIS_METHODS, *MAIN_METHODS, *PM_METHODS}),
    sections=_sections,
    overtuning_extras=_overtuning_extras,
    categorical_names=True,  # its sections only read the name columns
)
