"""The dataset catalog: the checked-in table of named datasets (``data/catalog.tsv``), name
resolution (thesis spellings, ``<prefix>:<rest>`` names of a source, ``binary:<name>``), the
studies' lists an experiment's ``datasets:`` names, and loading any dataset by name.

Each data source is a module of its own: the UCI-121 collection (:mod:`hpo.data.uci121`),
scikit-learn's bundled sets (:mod:`hpo.data.sklearn_sets`), seed 002's image sets
(:mod:`hpo.data.images`), OpenML (:mod:`hpo.data.openml_sets`), data files
(:mod:`hpo.data.files`) and merged classes (:mod:`hpo.data.binary`); prefixed sources register
in :mod:`hpo.data.sources`. The lists' contents are configuration
(``conf/datasets/studies.yaml``, :mod:`hpo.data.study_lists`). Download and verification of the
UCI-121 archive: :mod:`hpo.data.download`; the command line ``python -m hpo.data``:
:mod:`hpo.data.cli`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from hpo.data import files, openml_sets
from hpo.data.binary import BINARY_PREFIX, binarize
from hpo.data.openml_sets import openml_cached, openml_dir
from hpo.data.sklearn_sets import SKLEARN_REGRESSION, load_sklearn

# Re-exported (this module was their home): SOURCES, Source, register_source, GET_DATA_HINT and
# SEED003_DATASETS.
from hpo.data.sources import SOURCES, Source, register_source, source_of  # noqa: F401
from hpo.data.study_lists import (
    CHAPTER5_OPENML,
    CHAPTER45_UCI,
    ESMBO_CLASSIFICATION,
    ESMBO_REGRESSION,
    OPENML_SUBSTITUTES,
    SEED003_BIOLOGICAL,
    SEED003_DATASETS,  # noqa: F401  (the hierarchical report names it here)
    SEED003_STANDARD,
    seed003_names,
)
from hpo.data.types import REPO_ROOT, Dataset, DatasetError
from hpo.data.uci121 import GET_DATA_HINT, available, load_uci121, uci121_dir  # noqa: F401
from hpo.registry import unknown_choice_message

CATALOG_PATH = REPO_ROOT / "data" / "catalog.tsv"
# How an experiment gets its OpenML datasets: ``cached`` (default) runs those in the local OpenML
# folder, the substitutes of the others when there are, and reports the rest as not run;
# ``fetch`` runs them all from OpenML (network needed; the copies are cached).
OPENML_MODES = ("cached", "fetch")


@lru_cache(maxsize=1)
def catalog() -> pd.DataFrame:
    """The checked-in catalog (``data/catalog.tsv``), indexed by dataset name."""
    table = pd.read_csv(CATALOG_PATH, sep="\t", keep_default_na=False)
    return table.set_index("name", drop=False)


def dataset_names(source: str | None = None, thesis_118: bool = False) -> list[str]:
    """Catalog names, optionally only one ``source`` (uci121, sklearn) or the thesis's 118."""
    table = catalog()
    if source is not None:
        table = table[table["source"] == source]
    if thesis_118:
        table = table[table["in_thesis_118"] == "yes"]
    return list(table.index)


# ------------------------------------------------------------------------------ the lists

DATASET_LISTS = {
    "esmbo_classification": lambda data_dir: list(ESMBO_CLASSIFICATION),
    "esmbo_regression": lambda data_dir: list(ESMBO_REGRESSION),
    "thesis_118": lambda data_dir: dataset_names("uci121", thesis_118=True),
    "thesis_118_available": lambda data_dir: available(
        dataset_names("uci121", thesis_118=True), data_dir
    ),
    "chapter45_uci18": lambda data_dir: list(CHAPTER45_UCI),
    "chapter45_24": lambda data_dir: [*CHAPTER45_UCI, *CHAPTER5_OPENML],
    "seed003_29": lambda data_dir: seed003_names(SEED003_STANDARD),
    "seed003_biological": lambda data_dir: seed003_names(SEED003_BIOLOGICAL),
}


def dataset_list(
    entry: str | Iterable[str], data_dir: str | os.PathLike[str] | None = None
) -> list[str]:
    """Catalog names for an experiment's ``datasets``: a list of names (thesis spellings
    resolve), or the name of a list in :data:`DATASET_LISTS` (``*_available``: those whose files
    are in the collection here). Raises :class:`DatasetError` naming the valid choices."""
    if isinstance(entry, str):
        if entry not in DATASET_LISTS:
            raise DatasetError(unknown_choice_message("dataset list", entry, DATASET_LISTS))
        return DATASET_LISTS[entry](data_dir)
    return [resolve_name(str(name)) for name in entry]


@dataclass(frozen=True)
class DatasetPlan:
    """The datasets an experiment runs, and for every requested one that is not run as named,
    why (``substituted by chess-krvk (...)``, ``not run: needs OpenML ...``)."""

    names: list[str]
    notes: dict[str, str]


def plan_datasets(
    entry: str | Iterable[str],
    data_dir: str | os.PathLike[str] | None = None,
    openml: str = "cached",
) -> DatasetPlan:
    """:func:`dataset_list` with OpenML ids resolved by ``openml`` (:data:`OPENML_MODES`)."""
    if openml not in OPENML_MODES:
        raise DatasetError(unknown_choice_message("openml mode", openml, OPENML_MODES))
    names: list[str] = []
    notes: dict[str, str] = {}
    for name in dataset_list(entry, data_dir):
        run_as = name
        if name.startswith("openml:") and openml == "cached" and not openml_cached(name):
            if name in OPENML_SUBSTITUTES:
                run_as = OPENML_SUBSTITUTES[name]
                notes[name] = (
                    f"substituted by {run_as} (UCI-121's copy of the same problem, not claimed "
                    f"identical; not in the OpenML folder {openml_dir()})"
                )
            else:
                notes[name] = (
                    f"not run: needs OpenML (not in the OpenML folder {openml_dir()}; "
                    f"online, `python -m hpo.data fetch-openml {name[7:]}` or openml=fetch)"
                )
                continue
        if run_as not in names:
            names.append(run_as)
    return DatasetPlan(names, notes)


# ------------------------------------------------------------------------------ names


def resolve_name(name: str) -> str:
    """The catalog name for ``name``; thesis spellings (``cardiotocography-10clas``) resolve too.

    Raises :class:`DatasetError` naming the closest valid choices.
    """
    if name.startswith(BINARY_PREFIX):
        return BINARY_PREFIX + resolve_name(name[len(BINARY_PREFIX) :])
    table = catalog()
    if name in table.index:
        return name
    by_thesis = _by_thesis_name()
    if name in by_thesis:
        return by_thesis[name]
    source = source_of(name)
    if source is not None:
        source.check(name)
        return name
    raise DatasetError(
        unknown_choice_message("dataset", name, list(table.index), "python -m hpo.data list")
    )


@lru_cache(maxsize=1)
def _by_thesis_name() -> dict[str, str]:
    """{the thesis's spelling: the catalog name} of the datasets the thesis names otherwise."""
    table = catalog()
    return {t: n for n, t in zip(table["name"], table["thesis_name"], strict=True) if t}


def is_data_file(name: str) -> bool:
    """Whether ``name`` is a user's data file (``file:…``, or ``binary:`` of one): its content,
    not its name, is its identity (an OpenML id names an immutable dataset version, a bundled
    or UCI-121 name a fixed file)."""
    return name.removeprefix(BINARY_PREFIX).startswith(files.PREFIX)


def dataset_fingerprint(name: str) -> str | None:
    """The content fingerprint of a dataset whose data can change under the same name, None
    for one whose name fixes its data (UCI-121, scikit-learn's sets, the image sets) or whose
    code makes it (a registered source's names: its code is fingerprinted instead,
    :func:`source_code`).

    ``file:PATH[:COLUMN]``: :func:`hpo.data.files.fingerprint` (``file:sha256=<16 hex
    digits>:<target>``, also the loaded set's stream name), the same for the file under any
    path. ``openml:<id>``: ``openml:<id>:sha256=<16 hex digits>`` of its file in the local
    OpenML folder, None while it is not there (its data is then OpenML's, fetched on load).
    ``binary:<name>``: ``binary:`` and the fingerprint of ``<name>`` (None when that is None).
    Hashes the file's bytes once per version of it; reads no table. Raises
    :class:`DatasetError` for a file that is missing or of another kind, or a malformed
    OpenML name."""
    if name.startswith(BINARY_PREFIX):
        inner = dataset_fingerprint(name[len(BINARY_PREFIX) :])
        return None if inner is None else BINARY_PREFIX + inner
    if name.startswith(files.PREFIX):
        return files.fingerprint(name)
    if name.startswith(openml_sets.PREFIX):
        return openml_sets.fingerprint(name)
    return None


def source_code(name: str) -> str | None:
    """The dotted path of the function that loads a registered source's dataset (``<prefix>:…``
    of :data:`SOURCES`, or ``binary:`` of one), None for a catalog name. Its code decides the
    data as a file's bytes do, so a run's identity fingerprints it when it is not this
    repository's (:mod:`experiments.configuration.outside_code`)."""
    source = source_of(name.removeprefix(BINARY_PREFIX))
    if source is None:
        return None
    load = source.load
    module = getattr(load, "__module__", None) or type(load).__module__
    attribute = getattr(load, "__name__", "")
    return f"{module}.{attribute if attribute.isidentifier() else 'load'}"


# ------------------------------------------------------------------------------ loading


def load_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Load a catalog dataset (UCI-121, scikit-learn, seed 002's image sets) or one of a
    source's (``openml:<id>``, ``file:PATH[:COLUMN]``, ``binary:<name>``, :data:`SOURCES`)."""
    name = resolve_name(name)
    if name.startswith(BINARY_PREFIX):
        return binarize(load_dataset(name[len(BINARY_PREFIX) :], data_dir))
    source = source_of(name)
    if source is not None:
        return source.load(name, data_dir)
    entry = catalog().loc[name]
    if entry["source"] == "sklearn":
        return load_sklearn(name)
    if entry["source"] == "seed002":
        from hpo.data.images import load_image_set  # seed 002: MNIST-basic, MRBI, stand-ins

        return load_image_set(name)
    return load_uci121(entry, data_dir)


def missing_datasets(
    names: Iterable[str], data_dir: str | os.PathLike[str] | None = None
) -> list[str]:
    """The UCI-121 datasets among ``names`` whose data files are not in the collection here
    (bundled scikit-learn sets are always there; OpenML sets are fetched when loaded)."""
    table = catalog()
    root = uci121_dir(data_dir)
    missing = []
    for name in names:
        name = name.removeprefix(BINARY_PREFIX)
        if name in table.index and table.loc[name, "source"] == "uci121":
            files_of = table.loc[name, "files"].split("+")
            if not all((root / name / f).is_file() for f in files_of):
                missing.append(name)
    return missing


def dataset_task(name: str) -> str:
    """The task of a dataset without loading it whole: a source's own answer (from the data:
    a file's target column, a cached OpenML set's targets), ``regression`` for
    :data:`~hpo.data.sklearn_sets.SKLEARN_REGRESSION`, else ``classification`` (UCI-121,
    images)."""
    name = resolve_name(name)
    if name.startswith(BINARY_PREFIX):
        return "classification"
    source = source_of(name)
    if source is not None:
        return source.task(name)
    return "regression" if name in SKLEARN_REGRESSION else "classification"
