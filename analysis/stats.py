"""Comparison statistics over a per-dataset score table (thesis §3.3.3; Demšar 2006).

A *score table* is a ``pandas.DataFrame`` indexed by dataset, one column per method, whose values
are the test error in % averaged over the repetitions; lower is better. Scores are compared at full
precision, so a tie is a genuine equality (e.g. every method at 0.0 % error).

This module owns the numbers of Tables 3.1–3.5 and of the Ch. 4/5 significance tests:

* ranks (Eqs 3.9–3.10): average ranks per dataset (``scipy.stats.rankdata``), mean over datasets;
* win rate (Eq. 3.11, in the form that reproduces Tables 3.1 and 3.5): the comparison runs over all
  m methods *including the method itself* (a draw), hence ``pw_i = 100 (m + 0.5 − R_i) / m``;
* median and Q3−Q1 over datasets (numpy's default linear percentiles);
* win/loss counts ``count(i, j) = #{d: e_i < e_j} − #{d: e_i > e_j}`` (Tables 3.2–3.4);
* two-sided Wilcoxon signed-rank p-values across datasets, zero differences discarded, normal
  approximation without continuity correction ([decide], docs/deviations.md);
* plain Friedman χ² (thesis §4.4.1) and the Nemenyi critical difference (§4.4.1).
"""

from __future__ import annotations

import functools
import itertools
from math import sqrt
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats


class FriedmanResult(NamedTuple):
    """Friedman χ² statistic with k − 1 degrees of freedom and its p-value."""

    statistic: float
    pvalue: float


def check_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Return ``scores`` as floats after checking it is a complete datasets × methods table."""
    if not isinstance(scores, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame of scores, got {type(scores).__name__}")
    if scores.shape[0] < 1 or scores.shape[1] < 2:
        raise ValueError(
            f"expected at least 1 dataset and 2 methods, got shape {scores.shape} "
            "(rows = datasets, columns = methods)"
        )
    if not scores.columns.is_unique:
        raise ValueError(f"method names must be unique, got {list(scores.columns)}")
    values = scores.astype(float)
    missing = values.isna().to_numpy()
    if missing.any():
        rows, cols = np.nonzero(missing)
        raise ValueError(
            f"expected a score for every (dataset, method), {missing.sum()} missing, "
            f"e.g. ({values.index[rows[0]]!r}, {values.columns[cols[0]]!r})"
        )
    return values


def per_dataset_ranks(scores: pd.DataFrame) -> pd.DataFrame:
    """Rank of every method on every dataset: 1 = lowest error, ties share the average rank."""
    values = check_scores(scores)
    ranks = stats.rankdata(values.to_numpy(), method="average", axis=1)
    return pd.DataFrame(ranks, index=values.index, columns=values.columns)


def average_ranks(scores: pd.DataFrame) -> pd.Series:
    """Mean over datasets of the per-dataset ranks (Eq. 3.10); lower is better."""
    return per_dataset_ranks(scores).mean(axis=0).rename("rank")


def win_rates(scores: pd.DataFrame) -> pd.Series:
    """Pairwise win rate in % (Eq. 3.11 in the form of Tables 3.1 and 3.5).

    On each dataset, method i scores 1 against each method it beats, 0.5 against each it ties —
    itself included — and 0 otherwise; the sum is divided by m, then averaged over datasets.
    """
    errors = check_scores(scores).to_numpy()
    row, col = errors[:, :, None], errors[:, None, :]
    wins = (row < col) + 0.5 * (row == col)
    rates = 100.0 * wins.mean(axis=2).mean(axis=0)
    return pd.Series(rates, index=scores.columns, name="winrate")


def win_rate_from_rank(ranks: pd.Series, n_methods: int) -> pd.Series:
    """Win rate implied by an average rank, ``100 (m + 0.5 − R) / m`` (identity of Eq. 3.11)."""
    return (100.0 * (n_methods + 0.5 - ranks) / n_methods).rename("winrate")


def ranks_from_winloss(counts: pd.DataFrame, n_datasets: int) -> pd.Series:
    """Average ranks implied by win/loss counts: ``Σ_j count(i,j) = N (m + 1 − 2 R_i)``."""
    n_methods = counts.shape[1]
    row_sums = counts.sum(axis=1)
    return ((n_methods + 1 - row_sums / n_datasets) / 2).rename("rank")


def median_iqr(scores: pd.DataFrame) -> pd.DataFrame:
    """Median and inter-quartile range (Q3 − Q1) of each method's scores over the datasets."""
    values = check_scores(scores)
    q1, median, q3 = (values.quantile(q, interpolation="linear") for q in (0.25, 0.5, 0.75))
    return pd.DataFrame({"median": median, "q3_minus_q1": q3 - q1})


def winloss_counts(scores: pd.DataFrame) -> pd.DataFrame:
    """``count(i, j)`` = datasets where row method i beats column method j minus those it loses."""
    errors = check_scores(scores).to_numpy()
    counts = np.sign(errors[:, None, :] - errors[:, :, None]).sum(axis=0).astype(int)
    return pd.DataFrame(counts, index=scores.columns, columns=scores.columns)


def wilcoxon_pvalue(first: np.ndarray, second: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired scores, zero differences discarded.

    NaN when every difference is zero: the test has no evidence either way.
    """
    differences = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    if not np.any(differences):
        return float("nan")
    # Two-sided: the p-value of -d is that of d. A report asks for the same pair several times
    # (win/loss marks, claims, Wilcoxon-Holm diagrams), so it is computed once per distinct pair.
    if differences[np.flatnonzero(differences)[0]] < 0:
        differences = -differences
    return _wilcoxon_two_sided(differences.tobytes())


@functools.lru_cache(maxsize=8192)
def _wilcoxon_two_sided(differences: bytes) -> float:
    values = np.frombuffer(differences, dtype=float)
    result = stats.wilcoxon(values, zero_method="wilcox", correction=False, method="approx")
    return float(result.pvalue)


def wilcoxon_pvalues(scores: pd.DataFrame) -> pd.DataFrame:
    """Symmetric matrix of pairwise Wilcoxon p-values across datasets (diagonal NaN)."""
    values = check_scores(scores)
    columns = values.to_numpy(dtype=float).T
    pvalues = np.full((len(columns), len(columns)), np.nan)
    for first, second in itertools.combinations(range(len(columns)), 2):
        p = wilcoxon_pvalue(columns[first], columns[second])
        pvalues[first, second] = pvalues[second, first] = p
    return pd.DataFrame(pvalues, index=values.columns, columns=values.columns)


def significance_marks(scores: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Bold+underline marks of Tables 3.2–3.4: pairwise Wilcoxon p < alpha, uncorrected."""
    return wilcoxon_pvalues(scores) < alpha


def holm_adjust(pvalues: pd.DataFrame) -> pd.DataFrame:
    """Holm step-down adjustment of a symmetric pairwise p-value matrix (each pair counted once)."""
    methods = list(pvalues.columns)
    pairs = [p for p in itertools.combinations(methods, 2) if not np.isnan(pvalues.loc[p])]
    raw = np.array([pvalues.loc[p] for p in pairs])
    order = np.argsort(raw, kind="stable")
    stepped = raw[order] * (len(raw) - np.arange(len(raw)))
    adjusted_sorted = np.minimum(np.maximum.accumulate(stepped), 1.0)
    adjusted = pvalues.copy()
    for pair_index, value in zip(order, adjusted_sorted, strict=True):
        first, second = pairs[pair_index]
        adjusted.loc[first, second] = adjusted.loc[second, first] = value
    return adjusted


def friedman(scores: pd.DataFrame) -> FriedmanResult:
    """Plain Friedman χ² on the per-dataset ranks (Demšar 2006, Eq. 1; no tie correction).

    ``χ²_F = 12N / (k(k+1)) [Σ_j R_j² − k(k+1)²/4]`` with k − 1 degrees of freedom.
    """
    ranks = average_ranks(scores).to_numpy()
    n_datasets, k = scores.shape
    statistic = 12 * n_datasets / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4)
    return FriedmanResult(float(statistic), float(stats.chi2.sf(statistic, k - 1)))


def nemenyi_critical_difference(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of average ranks, ``CD = q_α √(k(k+1)/(6N))`` (Demšar 2006).

    ``q_α`` is the studentized range quantile with infinite degrees of freedom divided by √2.
    """
    if k < 2 or n_datasets < 1:
        raise ValueError(f"expected k >= 2 methods and N >= 1 datasets, got k={k}, N={n_datasets}")
    q_alpha = stats.studentized_range.ppf(1 - alpha, k, np.inf) / sqrt(2)
    return float(q_alpha * sqrt(k * (k + 1) / (6 * n_datasets)))


def summary_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Table-3.1-like summary per method: median, Q3−Q1, win rate (%) and average rank.

    Rows are sorted from worst to best average rank, as the thesis prints them.
    """
    summary = median_iqr(scores).join([win_rates(scores), average_ranks(scores)])
    return summary.sort_values("rank", ascending=False, kind="stable")
