"""What a dataset loader returns and raises: :class:`Dataset`, :class:`DatasetError`, and
:data:`REPO_ROOT` (where the bundled data lives). Imports nothing of ``hpo`` at import time, so
that every loader module (``hpo.data.catalog``, ``hpo.data.images``) can share them without a
circle of imports."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]


class DatasetError(ValueError):
    """A dataset that cannot be found, read or validated; the message says what to do."""


@dataclass(frozen=True)
class Dataset:
    """Features ``X`` (n, D) float64 and labels ``y`` (n,) int64 in 0..C-1, or for a regression
    set float64 targets (:attr:`task`, :mod:`hpo.tasks`).

    ``X_test``/``y_test`` hold the predefined test set when the collection ships one, else None.
    ``streams`` is the name the random streams are derived from when it is not ``name``
    (:attr:`stream_name`).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    streams: str | None = None

    @property
    def stream_name(self) -> str:
        """The name every random stream of a run on this dataset is derived from (its splits,
        the learners' seeds, the optimizer's seed). For a catalog dataset (UCI-121,
        scikit-learn, images, OpenML) it is :attr:`name`, so their results are those of a name;
        for a user's file it is the file's content fingerprint
        (``file:sha256=<16 hex digits>:<target>``, :func:`hpo.data.files.fingerprint`), so
        that one file under two paths is one dataset and a changed file another."""
        return self.streams if self.streams is not None else self.name

    @property
    def has_predefined_test(self) -> bool:
        return self.X_test is not None

    def checksum(self) -> str:
        """SHA-256 of the arrays as loaded (features, labels, predefined test set): the same
        number means the same data, whatever file or copy it came from."""
        digest = hashlib.sha256()
        for array in (self.X, self.y, self.X_test, self.y_test):
            if array is not None:
                digest.update(str(array.dtype).encode() + str(array.shape).encode())
                digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    @property
    def task(self) -> str:
        """``classification`` (integer labels) or ``regression`` (float targets)."""
        from hpo.tasks import task_of_targets

        return task_of_targets(self.y)

    @property
    def n_classes(self) -> int:
        labels = self.y if self.y_test is None else np.concatenate([self.y, self.y_test])
        return int(np.unique(labels).size)


def zscore(values: np.ndarray) -> np.ndarray:
    """Each column to zero mean and unit standard deviation (ddof 1; a constant column is only
    centred): how the bundled sets, the UCI-121 files and a user's data file are scaled."""
    std = values.std(axis=0, ddof=1)
    return (values - values.mean(axis=0)) / np.where(std > 0, std, 1.0)
