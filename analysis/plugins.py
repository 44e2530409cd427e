"""The chapter plug-ins: what a plug-in provides, the registry, and how a report picks one.

A plug-in is one folder ``analysis/<name>/`` whose ``__init__.py`` defines ``PLUGIN``, a
:class:`ChapterPlugin`; :data:`REGISTRY` names it (one line per chapter). The engine
(``analysis.report``) loads the results, picks the plug-in, asks it for its sections, and adds
what every report has: the overtuning section (with the plug-in's extras) and provenance.

Picking: ``--chapter NAME`` if given; else the value of the results' ``experiment`` column when
it names a registered plug-in; else the plug-in whose ``methods`` cover most of the results'
methods. The report says which was chosen and why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.render import TableWriter
from hpo.registry import Registry

# name -> the plug-in (a module's PLUGIN, imported when asked for). A new chapter adds its folder
# and one line here.
REGISTRY: Registry[ChapterPlugin] = Registry(
    "chapter",
    {
        "chapter3": "analysis.chapter3:PLUGIN",
        "chapter4": "analysis.chapter4:PLUGIN",
        "chapter5": "analysis.chapter5:PLUGIN",
        "esmbo": "analysis.esmbo:PLUGIN",  # Lacoste et al., UAI 2014
        "ensembles": "analysis.esmbo:PLUGIN",  # EO vs ESMBO vs Caruana: the same statistics
        "surrogates": "analysis.surrogates:PLUGIN",  # Jůzlová 2018 (seed 002)
        "hierarchical": "analysis.hierarchical:PLUGIN",  # Bermúdez-Chacón 2014 (seed 003)
        "benchmark": "analysis.benchmark:PLUGIN",  # candidates beside the thesis's baselines
        "autoweka": "analysis.autoweka:PLUGIN",  # Thornton 2014 (seed 004)
        "demo": "analysis.demo:PLUGIN",  # `make demo`: the short sweep, nothing of the thesis
    },
)


@dataclass
class ReportContext:
    """What a plug-in's sections read and where they write."""

    source: Path
    outcomes: pd.DataFrame
    out_dir: Path
    write: TableWriter
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChapterPlugin:
    """A chapter's report: its sections, the methods it knows, extras for the overtuning section.

    ``sections(context)`` returns the chapter's Markdown sections, title first.
    ``overtuning_extras(context, curves)`` (optional) returns Markdown appended to the engine's
    overtuning section (figures, splits); ``curves`` is ``analysis.overtuning.overtuning_curves``
    of the outcome columns ``analysis.report.CURVE_COLUMNS``.
    """

    name: str
    methods: frozenset[str]
    sections: Callable[[ReportContext], list[str]]
    overtuning_extras: Callable[[ReportContext, pd.DataFrame], str] | None = None
    # The plug-in only reads the outcome table's name columns, so the engine may hand it them as
    # categoricals (``analysis.load.with_categorical_names``: a paper-scale report's speed).
    categorical_names: bool = False


# Plug-ins that are no study's: never chosen by the methods they know.
GENERIC = ("benchmark", "demo")


def get_plugin(name: str) -> ChapterPlugin:
    """The registered plug-in ``name`` (ValueError naming the choices otherwise)."""
    return REGISTRY.get(name)


def _named_experiment(outcomes: pd.DataFrame) -> str | None:
    if "experiment" not in outcomes.columns:
        return None
    names = outcomes["experiment"].dropna().unique()
    return str(names[0]) if len(names) == 1 else None


def choose_plugin(
    outcomes: pd.DataFrame, requested: str | None = None
) -> tuple[ChapterPlugin, str]:
    """The plug-in for ``outcomes`` and a sentence saying why it was chosen."""
    if requested is not None:
        return get_plugin(requested), f"plug-in `{requested}`: asked for with --chapter"
    experiment = _named_experiment(outcomes)
    if experiment in REGISTRY:
        return get_plugin(experiment), f"plug-in `{experiment}`: the results' experiment column"
    methods = {str(m) for m in outcomes["method"].unique()}
    why = "unknown" if experiment is None else f"`{experiment}`, which has no plug-in"
    studies = [n for n in REGISTRY if n not in GENERIC and methods <= get_plugin(n).methods]
    if studies:  # a study's report only for its own methods: no cell of it left missing
        return get_plugin(studies[0]), (
            f"plug-in `{studies[0]}`: experiment {why}; it knows all {len(methods)} methods "
            "in the results"
        )
    return get_plugin("benchmark"), (
        f"plug-in `benchmark`: experiment {why}; no study's report knows all "
        f"{len(methods)} methods in the results, so every method is ranked beside the others"
    )
