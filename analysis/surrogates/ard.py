"""Relevance of each hyperparameter by automatic relevance determination (the seed's Table 2.3,
Jůzlová 2018, §2.2.1.2).

The seed fitted a GP with a Matérn-5/2 ARD kernel **50 times**, each time on a random **80 %** of
the 100 random-search configurations of MNIST (10 runs × 10), and reported the **median of
1/length-scale** per hyperparameter; a value below 1 reads "not relevant". The GP is the one the
``skopt-gp`` optimizer uses (:func:`hpo.optimizers.surrogate.skopt_gaussian_process`, scikit-
optimize 0.5's settings), on standardised validation errors.

Inputs are the configurations' unit-cube coordinates (the ``u_*`` columns of the traces; log
scales already applied, as skopt's normalised dimensions). [decision] A categorical
hyperparameter becomes one 0/1 column when it has two values (skopt's encoding) and one column
per value otherwise; its values are read from the ``param_*`` column (the values observed).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from hpo.optimizers.surrogate import skopt_gaussian_process

FITS = 50  # Table 2.3
SHARE = 0.8  # Table 2.3
NOT_RELEVANT_BELOW = 1.0  # the seed's reading of 1/ℓ


def encode_configurations(traces: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """``(X, names)``: one column per numeric hyperparameter (its unit-cube coordinate) and per
    categorical value (one 0/1 column for a two-valued one), named after the hyperparameter."""
    columns, names = [], []
    for u_name in sorted(c for c in traces.columns if c.startswith("u_")):
        name = u_name[2:]
        values = traces.get(f"param_{name}")
        u = traces[u_name].to_numpy(dtype=float)
        if values is None or pd.api.types.is_numeric_dtype(values):
            columns.append(u)
            names.append(name)
            continue
        n = int(values.nunique())
        codes = np.floor((1 - 1e-12) * np.clip(u, 0.0, 1.0) * max(n, 1)).astype(int)
        if n <= 2:
            columns.append(codes.astype(float))
            names.append(name)
        else:
            for k in range(n):
                columns.append((codes == k).astype(float))
                names.append(f"{name}={k}")
    return np.column_stack(columns), names


def inverse_length_scales(
    X: np.ndarray, y: np.ndarray, fits: int = FITS, share: float = SHARE, seed: int = 0
) -> np.ndarray:
    """(fits, d): 1/ℓ of the ARD GP fitted on ``fits`` random subsets of ``share`` of the
    points (drawn without replacement, seeded)."""
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    rng = np.random.default_rng(seed)
    n = len(y)
    size = max(2, int(round(share * n)))
    result = np.empty((fits, X.shape[1]))
    for i in range(fits):
        rows = rng.choice(n, size=size, replace=False)
        z = y[rows]
        z = (z - z.mean()) / (z.std() if z.std() > 0 else 1.0)
        gp = skopt_gaussian_process(X.shape[1], int(rng.integers(2**31 - 1)))
        # one BLAS thread: small matrices, and many threads on 2 shared cores cost 3x here
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")  # length scales at their bounds are the point here
            gp.fit(X[rows], z)
        result[i] = 1.0 / np.asarray(gp.kernel_.k1.k2.length_scale, dtype=float)
    return result


def relevance_table(traces: pd.DataFrame, fits: int = FITS, seed: int = 0) -> pd.DataFrame:
    """Table 2.3 from evaluated configurations (``u_*``, ``param_*`` and ``valid_loss``):
    per hyperparameter the median, 25 % and 75 % quantiles of 1/ℓ over the fits."""
    rows = traces[np.isfinite(traces["valid_loss"].to_numpy(dtype=float))]
    rows = rows.dropna(axis=1, how="all")  # columns of other spaces in a pooled trace
    X, names = encode_configurations(rows)
    inverse = inverse_length_scales(X, rows["valid_loss"].to_numpy(dtype=float), fits, seed=seed)
    return pd.DataFrame(
        {
            "median 1/ℓ": np.median(inverse, axis=0),
            "q25": np.quantile(inverse, 0.25, axis=0),
            "q75": np.quantile(inverse, 0.75, axis=0),
        },
        index=pd.Index(names, name="hyperparameter"),
    )
