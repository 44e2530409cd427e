"""Statistical analysis of results: a report engine and one plug-in per thesis chapter.

Engine (any chapter): ``load`` (results files → outcome rows and per-dataset score tables:
datasets × methods, test error in % averaged over repetitions), ``stats`` (ranks, win rates,
Wilcoxon, Friedman/Nemenyi), ``cd_diagram``, ``claims`` (declared claims → statuses),
``render`` (Markdown/LaTeX/CSV), ``figures`` (shared styling), ``overtuning``, ``provenance``,
``plugins`` (registry and choice) and ``report`` (the driver, ``write_report``).

Plug-ins: ``analysis.chapter3`` (Tables 3.1–3.5, Figs 3.1/3.3–3.5, claims C3.1–C3.20).
See docs/analysis.md.

Submodules are not imported here so that ``import analysis`` stays cheap (no matplotlib).
"""
