"""OpenML datasets, ``openml:<id>`` (Chapter 5, ESMBO's and seed 004's regression sets): the local
OpenML folder, fetching a set into it, and the ``openml`` source (registered on import).

A fetched set is kept as ``openml-<id>.npz`` in ``$HPO_OPENML_DIR`` or ``data/openml``; one there
loads without network (``python -m hpo.data fetch-openml <id>`` fills the folder when online).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hpo.data import files
from hpo.data.sources import Source, register_source
from hpo.data.study_lists import OPENML_REGRESSION
from hpo.data.types import REPO_ROOT, Dataset, DatasetError, zscore
from hpo.tasks import task_of_targets

PREFIX = "openml:"
ENV_OPENML_DIR = "HPO_OPENML_DIR"
DEFAULT_OPENML_DIR = REPO_ROOT / "data" / "openml"


def openml_dir() -> Path:
    """Where fetched OpenML datasets are kept: ``$HPO_OPENML_DIR`` or ``data/openml``."""
    env = os.environ.get(ENV_OPENML_DIR)
    return Path(env).expanduser() if env else DEFAULT_OPENML_DIR


def openml_file(name: str) -> Path:
    """The file of ``openml:<id>`` in the local OpenML folder (there or not)."""
    return openml_dir() / f"openml-{name.removeprefix(PREFIX)}.npz"


def openml_cached(name: str) -> bool:
    """Whether ``openml:<id>`` is in the local OpenML folder (loads without network)."""
    return openml_file(name).is_file()


def load_openml(dataset_id: int, timeout_s: float = 10.0) -> Dataset:
    """An OpenML dataset by id (Chapter 5); numeric features, missing values as 0, labels encoded.

    Read from the local OpenML folder (:func:`openml_dir`) when it is there; otherwise fetched
    and kept there (written atomically). Raises :class:`DatasetError` with a clear message when
    OpenML cannot be reached.
    """
    name = f"{PREFIX}{dataset_id}"
    path = openml_file(name)
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
    return openml_dataset(f"{PREFIX}{dataset_id}", X, y)


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


def check(name: str) -> None:
    """Raise :class:`DatasetError` unless ``name`` is ``openml:<id>``."""
    if not name[len(PREFIX) :].isdigit():
        raise DatasetError(
            f"dataset {name!r}: an OpenML dataset is named openml:<id>, e.g. openml:31"
        )


def task(name: str) -> str:
    """A cached set's task is its stored targets'; an uncached one's is known only for the sets
    this project lists (:data:`~hpo.data.study_lists.OPENML_REGRESSION`) until it is fetched."""
    path = openml_file(name)
    if path.is_file():
        with np.load(path) as stored:
            return task_of_targets(stored["y"])
    return "regression" if name in OPENML_REGRESSION else "classification"


def fingerprint(name: str) -> str | None:
    """``openml:<id>:sha256=<16 hex digits>`` of the set's file in the local OpenML folder, None
    while it is not there (its data is then OpenML's, fetched on load)."""
    check(name)
    normal = f"{PREFIX}{int(name[len(PREFIX) :])}"  # the name the loaded set carries
    path = openml_file(normal)
    if not path.is_file():
        return None
    return f"{normal}:sha256={files.content_digest(path)}"


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


register_source(
    "openml", Source(lambda name, _: load_openml(int(name[len(PREFIX) :])), task, check)
)
