"""The seed-003 plug-in (Bermúdez-Chacón 2014, *Automatic problem-specific hyperparameter
optimization and model selection for supervised machine learning*, §5): Appendix B's datasets and
what ran, Table 5.1 beside the seed's, Figs 5.1/5.2 (defaults and optimised models per learner,
the tied ones highlighted, p-values), Fig 5.3 (not available: no learned priors yet) and the
seed's claims on the claims engine.

Modules: ``data`` (the model-selection stage's rows of every run, Table 5.1), ``claims``,
``report`` (the sections and figures), ``seed`` and ``seed_tables/`` (the seed's numbers).
"""

from __future__ import annotations

from analysis.hierarchical.data import METHOD_NAMES
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.hierarchical import report

    return report.sections(context)


PLUGIN = ChapterPlugin(
    name="hierarchical",
    methods=frozenset({*METHOD_NAMES, *METHOD_NAMES.values()}),
    sections=_sections,
)
