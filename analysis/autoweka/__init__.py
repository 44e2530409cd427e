"""The seed-004 plug-in (Thornton 2014, *Auto-WEKA: Automated selection and hyper-parameter
optimization of classification algorithms*, §4): Tables 4.2-4.17 beside the seed's, the win
matrices of Appendix A, trajectories, selection frequencies and the seed's claims, from the
results files of ``conf/experiment/autoweka.yaml`` (``python -m analysis
results/autoweka/<profile>``).

Modules: ``report`` (the summaries of the runs, the bootstrap, tables, figures and sections) and
``seed_tables/`` (the seed's numbers).
"""

from __future__ import annotations

from analysis.plugins import ChapterPlugin, ReportContext

METHODS = frozenset(
    f"aw_{m}"
    for m in (
        "exdef", "grid", "random", "smac", "tpe", "tpe_gamma015", "irace", "smac_10batch",
        "smac_multilevel", "smac_rrsv", "smac_long",
    )
)  # fmt: skip
DEFAULT_BEST_OF = 4  # the seed's best of 4 (§4.1), when the folder names no profile
DEFAULT_BOOTSTRAP = 1000


def profile_of(context: ReportContext) -> dict:
    """The experiment profile the results folder was written by (``results/autoweka/<profile>``),
    or the seed's settings when it names none."""
    from analysis.autoweka.report import experiment_profiles

    profiles = experiment_profiles()
    name = context.source.name
    profile = dict(profiles.get(name, {}))
    return {
        "name": name if name in profiles else "(runs)",
        "best_of": int(profile.get("best_of", DEFAULT_BEST_OF)),
        "bootstrap": int(profile.get("bootstrap", DEFAULT_BOOTSTRAP)),
    }


def _sections(context: ReportContext) -> list[str]:
    from analysis.autoweka import report

    profile = profile_of(context)
    parts = report.sections(
        context.source,
        context.out_dir,
        report.seed_datasets(),
        profile,
        profile["best_of"],
        profile["bootstrap"],
        context.options.get("dataset_notes") or None,
    )
    return [f"{part}\n" for part in parts]


PLUGIN = ChapterPlugin(name="autoweka", methods=METHODS, sections=_sections)
