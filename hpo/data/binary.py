"""``binary:<name>``: a multiclass set made binary by merging classes.

UAI 2014 §6.2 merged classes or kept pairs, without saying which for which set: [decide] the
set's most frequent class (the lowest label among equals) is class 0, every other class is merged
into class 1. :mod:`hpo.data.catalog` resolves, loads and fingerprints ``binary:`` names.
"""

from __future__ import annotations

import numpy as np

from hpo.data.types import Dataset, DatasetError

BINARY_PREFIX = "binary:"


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
