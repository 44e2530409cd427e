"""Statistical analysis of results: what the thesis reports, computed from our own score tables.

Every function here reads a *score table*: a ``pandas.DataFrame`` with one row per dataset, one
column per method, and as values the test error in % averaged over repetitions (lower is better).

Modules:

* ``analysis.stats`` — ranks, win rates, median (Q3−Q1), win/loss counts, pairwise Wilcoxon,
  Friedman χ² and the Nemenyi critical difference (thesis §3.3.3, Demšar 2006).
* ``analysis.cd_diagram`` — critical-difference diagrams (Nemenyi, and Wilcoxon–Holm cliques).
* ``analysis.thesis`` — loaders for the thesis's own tables, copied in ``analysis/thesis_tables``.
* ``analysis.claims`` — the Chapter-3 claims (C3.1–C3.20 of the specification) evaluated on our
  score tables.

Submodules are not imported here so that ``import analysis`` stays cheap (no matplotlib).
"""
