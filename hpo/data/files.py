"""A user's own data file as a dataset: ``dataset=file:PATH`` or ``dataset=file:PATH:COLUMN``.

``PATH`` is a CSV (``.csv``, comma separated, a header row) or parquet (``.parquet``, ``.pq``)
file; ``COLUMN`` names its target column (default ``target``). Every other column is a feature:
numeric columns as they are, any other column one-hot encoded (``pandas.get_dummies``), missing
values as 0, as the OpenML loader does.

The task is taken from the target's data, not from the file's name [decision, docs/deviations.md]:
a floating-point target is a regression target (kept as it is: no scaling); any other (strings,
categories, booleans, integers) holds class labels, encoded as ``0..C-1`` in sorted order. A
file whose numeric classes are written as floats (``1.0``) is a regression set: write them as
integers or strings to make it a classification set.

A file is one dataset whatever its path: its random streams (splits, learners' and optimizer's
seeds) derive from its content, :func:`fingerprint` (``file:sha256=<16 hex digits>:<target>``,
the loaded set's :attr:`~hpo.data.types.Dataset.stream_name`), not from the path it is named by;
a changed file is another dataset.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from hpo.data.types import Dataset, DatasetError
from hpo.tasks import CLASSIFICATION, REGRESSION

PREFIX = "file:"
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
DEFAULT_TARGET = "target"
DIGEST_LENGTH = 16  # hex digits of the SHA-256 kept in a fingerprint

# (resolved path, device, inode, mtime in ns, size) -> digest: a file hashed once while unchanged.
_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}


def parse(name: str) -> tuple[Path, str]:
    """``file:PATH[:COLUMN]`` -> (path, target column); the column is what follows the last
    ``:`` when the part before it ends in a data file's suffix."""
    rest = name[len(PREFIX) :]
    head, sep, tail = rest.rpartition(":")
    if sep and Path(head).suffix.lower() in SUFFIXES:
        return Path(head), tail
    return Path(rest), DEFAULT_TARGET


def content_digest(path: Path) -> str:
    """The first :data:`DIGEST_LENGTH` hex digits of the SHA-256 of the file's bytes, hashed
    once per version of the file (kept by resolved path, inode, modification time and size)."""
    resolved = path.resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    digest = _DIGESTS.get(key)
    if digest is None:
        hasher = hashlib.sha256()
        with resolved.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hasher.update(block)
        digest = hasher.hexdigest()[:DIGEST_LENGTH]
        _DIGESTS[key] = digest
    return digest


def fingerprint(name: str) -> str:
    """The content fingerprint of ``file:PATH[:COLUMN]``: ``file:sha256=<digest>:<target>``
    (:func:`content_digest` of the file's bytes and the target column, the default one
    named), without reading the table. The same file under any path (a copy, a link, a
    ``..`` spelling) has one fingerprint; a changed file another. Raises the one-line
    :class:`DatasetError` of a missing file or one of another kind."""
    path, target = parse(name)
    if SUFFIXES.get(path.suffix.lower()) is None or not path.is_file():
        _read(path)  # raises the one-line error
    try:
        digest = content_digest(path)
    except OSError as err:
        raise DatasetError(f"dataset file {str(path)!r} cannot be read: {err}") from err
    return f"{PREFIX}sha256={digest}:{target}"


def _read(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DatasetError(
            f"dataset file {str(path)!r} has an unknown suffix; valid: {', '.join(SUFFIXES)}"
        )
    if not path.is_file():
        raise DatasetError(f"dataset file {str(path)!r} not found")
    try:
        if kind == "csv":
            return pd.read_csv(path, usecols=columns)
        return pd.read_parquet(path, columns=columns)
    except ValueError as err:  # a column named that the file lacks, among others
        raise DatasetError(f"dataset file {str(path)!r}: {err}") from err


def _header(path: Path) -> list[str]:
    """The column names, without reading the rows."""
    if SUFFIXES[path.suffix.lower()] == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0).columns)


def check(name: str) -> None:
    """Refuse, in one line, a file that is missing, of another kind, or without the target
    column (naming the columns it has)."""
    path, target = parse(name)
    if SUFFIXES.get(path.suffix.lower()) is None or not path.is_file():
        _read(path)  # raises the one-line error
    columns = _header(path)
    if target not in columns:
        raise DatasetError(
            f"dataset file {str(path)!r} has no target column {target!r}; its columns: "
            f"{', '.join(columns)} (name the target as file:{path}:<column>)"
        )
    if len(columns) < 2:
        raise DatasetError(f"dataset file {str(path)!r} has no feature column besides {target!r}")


def target_task(values: pd.Series) -> str:
    """``regression`` for a floating-point target, else ``classification`` (see the module)."""
    return REGRESSION if pd.api.types.is_float_dtype(values.dtype) else CLASSIFICATION


def task(name: str) -> str:
    """The task of ``file:PATH[:COLUMN]``, from its target column alone."""
    check(name)
    path, target = parse(name)
    return target_task(_read(path, [target])[target])


def load(name: str) -> Dataset:
    """The dataset of ``file:PATH[:COLUMN]`` (see the module); its random streams derive from
    its :func:`fingerprint`."""
    check(name)
    path, target = parse(name)
    streams = fingerprint(name)
    frame = _read(path)
    y = frame.pop(target)
    if y.isna().any():
        raise DatasetError(
            f"dataset file {str(path)!r}: target column {target!r} has {int(y.isna().sum())} "
            "missing values; drop those rows first"
        )
    X = pd.get_dummies(frame, dtype=np.float64).fillna(0.0).to_numpy(dtype=np.float64)
    if target_task(y) == REGRESSION:
        return Dataset(name, X, y.to_numpy(dtype=np.float64), streams=streams)
    numeric = pd.api.types.is_numeric_dtype(y.dtype) or pd.api.types.is_bool_dtype(y.dtype)
    values = y.to_numpy() if numeric else y.astype(str).to_numpy()
    _, labels = np.unique(values, return_inverse=True)
    return Dataset(name, X, labels.astype(np.int64), streams=streams)
