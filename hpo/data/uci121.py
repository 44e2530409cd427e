"""The UCI-121 collection (Fernández-Delgado et al., JMLR 2014): where it lives and how one of its
datasets is read.

The collection is read in its own format: one folder per dataset with ``NAME_R.dat`` (or
``NAME_train_R.dat`` + ``NAME_test_R.dat`` for the 19 datasets with a predefined test set), tab
separated, header ``\\tf1..fD\\tclase``, first column a row number, last column the integer class.
Files are used as distributed, quirks included (unnormalised test files, constant columns): the
thesis's numbers reflect them. What each dataset should hold (files, rows, features) is its entry
in the catalog (:func:`hpo.data.catalog.catalog`).

Where the collection lives: ``load_dataset(..., data_dir=...)``, else the environment variable
``HPO_UCI121_DIR``, else ``<repo>/data/uci121`` (where ``make data`` puts it;
:mod:`hpo.data.download`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpo.data.types import REPO_ROOT, Dataset, DatasetError

DEFAULT_UCI121_DIR = REPO_ROOT / "data" / "uci121"
ENV_UCI121_DIR = "HPO_UCI121_DIR"
UCI121_URL = "http://persoal.citius.usc.es/manuel.fernandez.delgado/papers/jmlr/data.tar.gz"
GET_DATA_HINT = (
    f"run `make data` (downloads {UCI121_URL}) or point {ENV_UCI121_DIR} at an existing copy"
)


def uci121_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the UCI-121 collection is: the argument, ``$HPO_UCI121_DIR`` or ``data/uci121``."""
    if data_dir:
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_UCI121_DIR)
    return Path(env).expanduser() if env else DEFAULT_UCI121_DIR


def available(names: list[str], data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Those of ``names`` whose data file is in the collection here."""
    root = uci121_dir(data_dir)
    return [n for n in names if (root / n).is_dir() and any((root / n).glob("*_R.dat"))]


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


def load_uci121(
    entry: Mapping[str, Any], data_dir: str | os.PathLike[str] | None = None
) -> Dataset:
    """Read one UCI-121 dataset as distributed, checking its shape against its catalog
    ``entry`` (a row of :func:`hpo.data.catalog.catalog`)."""
    name = entry["name"]
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
