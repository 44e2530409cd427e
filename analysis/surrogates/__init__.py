"""The seed-002 plug-in (Jůzlová 2018, *Model Performance Approximation in Hyper-parameter
Optimization*, §2.2): Tables 2.2–2.6 beside the seed's, Figs 2.1/2.2, 2.3/2.10, 2.14 and C.2/C.3,
the seed's qualitative findings as claims.

Modules: ``data`` (final errors, best-so-far curves, layer counts, Hyperband's finished
configurations), ``ard`` (Table 2.3), ``claims`` (the findings on the claims engine), ``report``
(the sections and figures), ``seed`` and ``seed_tables/`` (the seed's published numbers).
"""

from __future__ import annotations

from analysis.plugins import ChapterPlugin, ReportContext
from analysis.surrogates.data import SEED_NAMES


def _sections(context: ReportContext) -> list[str]:
    from analysis.surrogates import report

    return report.sections(context)


PLUGIN = ChapterPlugin(name="surrogates", methods=frozenset(SEED_NAMES), sections=_sections)
