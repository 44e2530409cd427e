"""The benchmark plug-in (``make reproduce-benchmark CANDIDATES=…``): candidate optimizers ranked
beside the thesis's baselines on each task family (a part of the sweep): test error per dataset
and average ranks, win/loss counts, each candidate against each baseline (wins, ties, losses and
the Wilcoxon signed-rank p, underpowered tests said so), Friedman's test, convergence curves and
critical-difference diagrams, the overfitting of each method's chosen configuration (its
validation error against its test error) and each method's time per proposal.

Module: ``report`` (the sections; the shared tables and figures are the demo plug-in's).
"""

from __future__ import annotations

from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.benchmark import report

    return report.sections(context)


PLUGIN = ChapterPlugin(name="benchmark", methods=frozenset(), sections=_sections)
