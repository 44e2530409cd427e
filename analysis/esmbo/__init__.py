"""The ESMBO plug-in (Lacoste, Larochelle, Marchand, Laviolette, UAI 2014, §6): Tables 2–3
(winning frequency ρ, expected rank, sign and Poisson-binomial tests averaged over the last 15
iterations), Figures 1–2 (Pr(ESMBO ≻ SMBO) and expected rank against the iteration) and the
paper's claims as a checklist.

Modules: ``data`` (risks from the outcome rows, per-example test losses from the predictions
sidecars), ``report`` (the sections, figures and claims).
"""

from __future__ import annotations

from analysis.esmbo.data import PAPER_NAMES
from analysis.plugins import ChapterPlugin, ReportContext


def _sections(context: ReportContext) -> list[str]:
    from analysis.esmbo import report

    return report.sections(context)


PLUGIN = ChapterPlugin(name="esmbo", methods=frozenset(PAPER_NAMES), sections=_sections)
