"""scikit-learn's bundled datasets (``sklearn-iris``, …), which need no download, and the generated
Friedman #1 regression set.

Regression sets (float targets, z-scored; :mod:`hpo.tasks`): scikit-learn's diabetes data and
Friedman #1 (Friedman 1991; Torgo's "fried"), generated with fixed settings, so it is the same
data on every machine.
"""

from __future__ import annotations

import numpy as np

from hpo.data.types import Dataset, zscore

SKLEARN_DATASETS = {
    "sklearn-iris": "load_iris",
    "sklearn-wine": "load_wine",
    "sklearn-breast-cancer": "load_breast_cancer",
    "sklearn-digits": "load_digits",
    "sklearn-diabetes": "load_diabetes",  # regression (ESMBO, UAI 2014)
    "sklearn-friedman1": "make_friedman1",  # regression, generated (FRIEDMAN1_SETTINGS)
}
SKLEARN_REGRESSION = ("sklearn-diabetes", "sklearn-friedman1")
FRIEDMAN1_SETTINGS = {"n_samples": 2000, "n_features": 10, "noise": 1.0, "random_state": 0}


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
