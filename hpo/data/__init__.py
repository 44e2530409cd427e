"""Datasets: the catalog and its loaders (:mod:`~hpo.data.catalog`; ``python -m hpo.data``),
what a loader returns (:mod:`~hpo.data.types`) and the image datasets (:mod:`~hpo.data.images`)."""
