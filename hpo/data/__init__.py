"""Datasets: the catalog, name resolution and loading by name (:mod:`~hpo.data.catalog`), one
module per data source (:mod:`~hpo.data.uci121`, :mod:`~hpo.data.sklearn_sets`,
:mod:`~hpo.data.openml_sets`, :mod:`~hpo.data.files`, :mod:`~hpo.data.images`,
:mod:`~hpo.data.binary`; prefixed ones register in :mod:`~hpo.data.sources`), the studies' lists
(:mod:`~hpo.data.study_lists`), the UCI-121 archive (:mod:`~hpo.data.download`), the command line
``python -m hpo.data`` (:mod:`~hpo.data.cli`) and what a loader returns (:mod:`~hpo.data.types`)."""
