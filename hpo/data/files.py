"""A user's own data file as a dataset: ``dataset=file:PATH[:COLUMN][?OPTION+OPTION…]``.

``PATH`` is a CSV (``.csv``, comma separated, a header row) or parquet (``.parquet``, ``.pq``)
file; ``COLUMN`` names its target column (default ``target``). Every other column is a feature:
numeric columns as they are, any other column one-hot encoded (``pandas.get_dummies``).

Preprocessing [decision, docs/deviations.md]: the features are z-scored per column over the
whole file (mean 0, standard deviation 1 with ``ddof=1``; a constant column only centred), as
the bundled sets (scikit-learn's, the UCI-121 files) are when they are loaded; a regression
target is kept as it is. The option ``standardize:false`` keeps the features as they are.

The task is taken from the target's data, not from the file's name [decision]: a
floating-point target is a regression target; any other (strings, categories, booleans,
integers) holds class labels, encoded as ``0..C-1`` in sorted order. A file whose numeric classes
are written as floats (``1.0``) is a regression set unless ``task:classification`` is named. An
integer target with more than :data:`MAX_INTEGER_CLASSES` distinct values, or more than two and
more than half the rows distinct, could be either: it is refused until ``task:classification``
or ``task:regression`` names the task.

Refused, each in one line naming the column and the fix (:func:`check`, :func:`task`,
:func:`load`): an empty or unreadable file, a file without rows, a missing target value, a
target with one value, an ambiguous integer target (above), a missing feature value (unless
``impute:mean`` or ``impute:zero`` fills it: a numeric column's missing values become the
column's mean over the file, or 0; a non-numeric column's missing value is no category, all
its one-hot columns 0), an infinite value, and an identifier-like column (a non-numeric column
with more than :data:`MAX_INTEGER_CLASSES` distinct values that are at least
:data:`IDENTIFIER_SHARE` of its rows).

Options follow the name after a ``?``, joined by ``+`` (Hydra takes ``?``, ``:`` and ``+``
unquoted; quote the override in a shell, whose ``?`` is a wildcard):
``'dataset=file:my.csv:y?impute:mean+task:regression'``.

A file is one dataset whatever its path: its random streams (splits, learners' and optimizer's
seeds) derive from its content and target column (``file:sha256=<16 hex digits>:<target>``, the
loaded set's :attr:`~hpo.data.types.Dataset.stream_name`), not from the path it is named by, and
not from its options, so that runs of one file under other options are paired (the same splits
and seeds); its run identity, :func:`fingerprint`, adds the options that are not the default. A
changed file is another dataset.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hpo.data.sources import Source, register_source
from hpo.data.types import Dataset, DatasetError, zscore
from hpo.tasks import CLASSIFICATION, REGRESSION, TASKS

PREFIX = "file:"
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
DEFAULT_TARGET = "target"
DIGEST_LENGTH = 16  # hex digits of the SHA-256 kept in a fingerprint
OPTIONS_MARK, OPTIONS_JOIN = "?", "+"
# Every option a file's name may carry (``name:value``), the default's first.
OPTION_VALUES = {
    "standardize": ("true", "false"),
    "impute": ("none", "mean", "zero"),
    "task": ("data", *TASKS),
}
MAX_INTEGER_CLASSES = 20  # an integer target with more distinct values is ambiguous
IDENTIFIER_SHARE = 0.9  # a non-numeric column this distinct (of its rows) is an identifier

# (resolved path, device, inode, mtime in ns, size) -> digest: a file hashed once while unchanged.
_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}


@dataclass(frozen=True)
class FileOptions:
    """How a file is read (see the module): ``standardize`` the features, ``impute`` missing
    feature values (``none``: refuse them), the ``task`` (``data``: from the target's values)."""

    standardize: bool = True
    impute: str = "none"
    task: str = "data"

    def suffix(self) -> str:
        """The options that are not the default, as a name carries them (``?a:b+c:d``, sorted),
        or an empty string."""
        chosen = {
            "standardize": "true" if self.standardize else "false",
            "impute": self.impute,
            "task": self.task,
        }
        kept = [
            f"{key}:{value}"
            for key, value in sorted(chosen.items())
            if value != OPTION_VALUES[key][0]
        ]
        return OPTIONS_MARK + OPTIONS_JOIN.join(kept) if kept else ""


def _split_options(name: str) -> tuple[str, str | None]:
    """``file:PATH[:COLUMN]`` and the text after its ``?`` (None without options). A ``?`` is
    an options mark only when what precedes it names a data file (a ``?`` in a path stays)."""
    head, sep, query = name.rpartition(OPTIONS_MARK)
    if sep and head.startswith(PREFIX):
        path, _ = _parse_plain(head)
        if path.suffix.lower() in SUFFIXES:
            return head, query
    return name, None


def _parse_plain(name: str) -> tuple[Path, str]:
    """(path, target column) of ``file:PATH[:COLUMN]``, a name without options."""
    rest = name[len(PREFIX) :]
    head, sep, tail = rest.rpartition(":")
    if sep and Path(head).suffix.lower() in SUFFIXES:
        return Path(head), tail
    return Path(rest), DEFAULT_TARGET


def parse(name: str) -> tuple[Path, str]:
    """``file:PATH[:COLUMN][?OPTIONS]`` -> (path, target column); the column is what follows
    the last ``:`` when the part before it ends in a data file's suffix."""
    return _parse_plain(_split_options(name)[0])


def options(name: str) -> FileOptions:
    """The options of ``file:PATH[:COLUMN][?OPTIONS]`` (the defaults without any); an unknown
    one is a one-line :class:`DatasetError` listing the valid ones."""
    _, query = _split_options(name)
    chosen: dict[str, str] = {}
    for option in [] if query is None else query.split(OPTIONS_JOIN):
        key, _, value = option.partition(":")
        if value not in OPTION_VALUES.get(key, ()):
            valid = ", ".join(f"{k}:{v}" for k, values in OPTION_VALUES.items() for v in values)
            raise DatasetError(
                f"dataset {name!r}: unknown option {option!r}; valid options (after a ?, "
                f"joined by +): {valid}"
            )
        chosen[key] = value
    return FileOptions(
        standardize=chosen.get("standardize", "true") == "true",
        impute=chosen.get("impute", "none"),
        task=chosen.get("task", "data"),
    )


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
    """The content fingerprint of ``file:PATH[:COLUMN][?OPTIONS]``:
    ``file:sha256=<digest>:<target>`` (:func:`content_digest` of the file's bytes and the target
    column, the default one named) and the options that are not the default
    (:meth:`FileOptions.suffix`), without reading the table. The same file under any path (a
    copy, a link, a ``..`` spelling) has one fingerprint; a changed file another. Raises the
    one-line :class:`DatasetError` of a missing file, one of another kind or an unknown
    option."""
    path, target = parse(name)
    chosen = options(name)
    if SUFFIXES.get(path.suffix.lower()) is None or not path.is_file():
        _read(path)  # raises the one-line error
    try:
        digest = content_digest(path)
    except OSError as err:
        raise DatasetError(f"dataset file {str(path)!r} cannot be read: {err}") from err
    return f"{PREFIX}sha256={digest}:{target}{chosen.suffix()}"


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def _read(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DatasetError(
            f"dataset file {str(path)!r} has an unknown suffix; valid: {', '.join(SUFFIXES)}"
        )
    if not path.is_file():
        raise DatasetError(f"dataset file {str(path)!r} not found")
    with _read_errors(path):
        if kind == "csv":
            return pd.read_csv(path, usecols=columns)
        return pd.read_parquet(path, columns=columns)


@contextmanager
def _read_errors(path: Path) -> Iterator[None]:
    """A read of ``path`` that fails is one line: an empty file says what to write, any other
    error (a column the file lacks, a malformed or unreadable file) says why."""
    try:
        yield
    except pd.errors.EmptyDataError as err:
        raise DatasetError(
            f"dataset file {str(path)!r} is empty; write a header row of column names, then the "
            "rows, comma separated"
        ) from err
    except (ValueError, OSError) as err:
        raise DatasetError(f"dataset file {str(path)!r} cannot be read: {_one_line(err)}") from err


def _header(path: Path) -> list[str]:
    """The column names, without reading the rows."""
    with _read_errors(path):
        if SUFFIXES[path.suffix.lower()] == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return list(pd.read_csv(path, nrows=0).columns)


def check(name: str) -> None:
    """Refuse, in one line, a file that is missing, of another kind, empty or unreadable, or
    without the target column (naming the columns it has), and an unknown option."""
    path, target = parse(name)
    options(name)
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


def target_task(values: pd.Series, task: str = "data") -> str:
    """``regression`` for a floating-point target, else ``classification`` (see the module);
    ``task`` (an option's value), when not ``data``, decides instead."""
    if task != "data":
        return task
    return REGRESSION if pd.api.types.is_float_dtype(values.dtype) else CLASSIFICATION


def _checked_target(name: str, values: pd.Series) -> str:
    """The task of the target ``values`` of ``name``, after refusing (one line each) missing
    values, a target with one value, an ambiguous integer target and a regression target that
    is not numeric or not finite."""
    path, target = parse(name)
    where = f"dataset file {str(path)!r}: target column {target!r}"
    if not len(values):
        raise DatasetError(
            f"dataset file {str(path)!r} has no rows; write the rows below its header"
        )
    if values.isna().any():
        raise DatasetError(
            f"{where} has {int(values.isna().sum())} missing values; drop those rows first"
        )
    chosen = options(name).task
    task = target_task(values, chosen)
    distinct = values.nunique()
    if distinct < 2:
        kind = "one class" if task == CLASSIFICATION else "one value"
        raise DatasetError(
            f"{where} has {kind} only ({str(values.iloc[0])!r}); a dataset needs two or more "
            "(name another target column, or add the rows of the others)"
        )
    integer = pd.api.types.is_integer_dtype(values.dtype)
    if chosen == "data" and integer and _ambiguous(distinct, len(values)):
        raise DatasetError(
            f"{where} holds {distinct} distinct integers in {len(values)} rows: classes or "
            f"numbers? An integer target with more than {MAX_INTEGER_CLASSES} values (or more "
            "than 2 and over half the rows) is ambiguous; name the task: "
            f"file:{path}:{target}?task:classification or ?task:regression"
        )
    if task == REGRESSION:
        numeric = pd.api.types.is_numeric_dtype(values.dtype)
        if not numeric or pd.api.types.is_bool_dtype(values.dtype):
            raise DatasetError(
                f"{where} is not numeric ({values.dtype}); a regression target holds numbers "
                "(name task:classification for classes)"
            )
        infinite = int(np.isinf(values.to_numpy(dtype=np.float64, na_value=np.nan)).sum())
        if infinite:
            raise DatasetError(f"{where} has {infinite} infinite values; drop those rows first")
    return task


def _ambiguous(distinct: int, rows: int) -> bool:
    """Whether an integer target with ``distinct`` values in ``rows`` rows could be numbers."""
    return distinct > MAX_INTEGER_CLASSES or (distinct > 2 and distinct > rows / 2)


def task(name: str) -> str:
    """The task of ``file:PATH[:COLUMN][?OPTIONS]``, from its target column alone (refusing a
    target :func:`load` would refuse)."""
    check(name)
    path, target = parse(name)
    return _checked_target(name, _read(path, [target])[target])


def _checked_features(path: Path, target: str, frame: pd.DataFrame, impute: str) -> pd.DataFrame:
    """``frame`` (the feature columns) after refusing, in one line naming the columns, an
    identifier-like column, infinite values and (without ``impute``) missing values; with
    ``impute`` its numeric columns' missing values filled (``mean`` or ``zero``)."""
    where = f"dataset file {str(path)!r}"
    rows = len(frame)
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c].dtype)]
    for column in frame.columns:
        if column in numeric or pd.api.types.is_bool_dtype(frame[column].dtype):
            continue
        distinct = frame[column].nunique()
        if distinct > MAX_INTEGER_CLASSES and distinct >= IDENTIFIER_SHARE * rows:
            raise DatasetError(
                f"{where}: column {column!r} looks like an identifier ({distinct} distinct "
                f"values in {rows} rows), no feature; drop it from the file"
            )
    infinite = {
        column: int(np.isinf(frame[column].to_numpy(dtype=np.float64, na_value=np.nan)).sum())
        for column in numeric
        if not pd.api.types.is_bool_dtype(frame[column].dtype)
    }
    infinite = {column: count for column, count in infinite.items() if count}
    if infinite:
        raise DatasetError(
            f"{where}: infinite values in {_counted(infinite)}; replace them or drop those rows "
            "first"
        )
    missing = {column: int(count) for column, count in frame.isna().sum().items() if count}
    if missing and impute == "none":
        raise DatasetError(
            f"{where}: missing values in {_counted(missing)}; drop or fill those rows first, "
            f"or impute them: file:{path}:{target}?impute:mean (a column's mean) or ?impute:zero"
        )
    for column in numeric:
        if column in missing:
            fill = frame[column].mean() if impute == "mean" else 0.0
            frame[column] = frame[column].fillna(fill)
    return frame


def _counted(counts: dict[str, int]) -> str:
    """``column 'a' (3)`` or ``columns 'a' (3), 'b' (1)``."""
    listed = ", ".join(f"{column!r} ({count})" for column, count in counts.items())
    return ("column " if len(counts) == 1 else "columns ") + listed


def load(name: str) -> Dataset:
    """The dataset of ``file:PATH[:COLUMN][?OPTIONS]`` (see the module), its features z-scored
    unless ``standardize:false``; its random streams derive from its :func:`fingerprint`
    without the options."""

    check(name)
    path, target = parse(name)
    chosen = options(name)
    streams = fingerprint(_split_options(name)[0])  # the options' runs are paired
    frame = _read(path)
    y = frame.pop(target)
    task = _checked_target(name, y)
    frame = _checked_features(path, target, frame, chosen.impute)
    X = pd.get_dummies(frame, dtype=np.float64).to_numpy(dtype=np.float64)
    if chosen.standardize:
        X = zscore(np.ascontiguousarray(X))  # row-major, as the bundled sets' sums run
    if task == REGRESSION:
        return Dataset(name, X, y.to_numpy(dtype=np.float64), streams=streams)
    numeric = pd.api.types.is_numeric_dtype(y.dtype) or pd.api.types.is_bool_dtype(y.dtype)
    values = y.to_numpy() if numeric else y.astype(str).to_numpy()
    _, labels = np.unique(values, return_inverse=True)
    return Dataset(name, X, labels.astype(np.int64), streams=streams)


register_source("file", Source(lambda name, _: load(name), task, check))
