"""Comparison statistics of the ESMBO paper over datasets: winning frequency, expected rank, sign
test and the Poisson-binomial (PB) test.

References: A. Lacoste, H. Larochelle, M. Marchand, F. Laviolette, "Sequential model-based
ensemble optimization", UAI 2014 (Tables 2-3, Figures 1-2: what is reported and how);
A. Lacoste, F. Laviolette, M. Marchand, "Bayesian comparison of machine learning algorithms on
single and multiple datasets", AISTATS 2012 (the PB test); G. Corani, A. Benavoli, "A Bayesian
approach for comparing cross-validated algorithms on multiple data sets", Machine Learning 100
(2015), which combines per-dataset posterior probabilities through the same Poisson-binomial
model. See docs/esmbo.md for the reconstruction and what of it is checked.

Inputs are tidy DataFrames, so the functions serve any methods (also Chapter 4's):

* test risks: columns ``dataset, method, iteration, loss`` (one row each; lower is better);
* per-example test losses (for the PB test): ``dataset, method, iteration, example, loss``.

Every statistic is computed per iteration and then averaged over the last ``last`` iterations
(15, the paper's 136-150 of 150) — the spec leaves open whether risks or statistics are averaged;
statistics are, as recommended there. Definitions (ties count one half):

* ``ρ[i, l]`` = share of datasets where method ``i``'s risk is below ``l``'s (``ρ[i, i] = 0.5``);
* ``E[rank]_i = 1 + Σ_{l≠i} ρ[l, i]``;
* sign test: ties dropped, one-sided p-value ``P(X >= wins)``, ``X ~ Binomial(wins + losses, ½)``;
* PB test: ``p_j = Pr(A better than B on dataset j | its test examples)``; the number ``k`` of
  datasets where A is truly better is Poisson-binomial(``p_1..p_L``), exact by convolution;
  with a Beta(``a``, ``b``) prior (default uniform) on the probability ``r`` that A beats B on a
  dataset, ``Pr(A ≻ B) = Σ_k PB(k) · Pr(r > ½ | k)``, ``r | k ~ Beta(k + a, L − k + b)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

LAST_ITERATIONS = 15
PB_THRESHOLDS = (0.8, 0.9, 0.95)  # Pr(A ≻ B) above: lightly significant, significant, highly
SIGN_THRESHOLDS = (0.1, 0.05, 0.01)  # sign-test p-value below: the same three levels
RISK_COLUMNS = ("dataset", "method", "iteration", "loss")


# ------------------------------------------------------------------------------ risk tables


def risk_cube(
    frame: pd.DataFrame, last: int | None = LAST_ITERATIONS
) -> tuple[np.ndarray, list[str]]:
    """``(iterations, datasets, methods)`` risks of the last ``last`` iterations (all when None)
    and the method names; refuses a table missing a (dataset, method, iteration)."""
    missing = [c for c in RISK_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"risk table lacks columns {missing}; expected {list(RISK_COLUMNS)}")
    if last is not None and last < 1:
        raise ValueError(f"last must be >= 1, got {last}")
    iterations = np.sort(frame.iteration.unique())
    kept = iterations if last is None else iterations[-last:]
    table = frame[frame.iteration.isin(kept)].pivot_table(
        index=["iteration", "dataset"], columns="method", values="loss", aggfunc="first"
    )
    full = pd.MultiIndex.from_product([kept, sorted(frame.dataset.unique())])
    table = table.reindex(full)
    if table.isna().to_numpy().any():
        where = table[table.isna().any(axis=1)].index[0]
        raise ValueError(f"no risk for every method at (iteration, dataset) = {where}")
    methods = list(table.columns)
    return table.to_numpy().reshape(len(kept), -1, len(methods)), methods


def _frequencies(cube: np.ndarray) -> np.ndarray:
    """``(iterations, K, K)`` ρ per iteration from ``(iterations, L, K)`` risks."""
    lower = cube[..., :, None] < cube[..., None, :]
    equal = cube[..., :, None] == cube[..., None, :]
    return (lower + 0.5 * equal).mean(axis=1)


def winning_frequency(frame: pd.DataFrame, last: int | None = LAST_ITERATIONS) -> pd.DataFrame:
    """ρ: row method's share of datasets won against the column method (ties ½), averaged over
    the last ``last`` iterations."""
    cube, methods = risk_cube(frame, last)
    return pd.DataFrame(_frequencies(cube).mean(axis=0), index=methods, columns=methods)


def expected_rank(frame: pd.DataFrame, last: int | None = LAST_ITERATIONS) -> pd.Series:
    """``E[rank]_i = 1 + Σ_{l≠i} ρ[l, i]`` (1 = best), averaged over the last iterations."""
    cube, methods = risk_cube(frame, last)
    rho = _frequencies(cube)
    ranks = 0.5 + rho.sum(axis=1)  # column sums: 1 + Σ_{l≠i} ρ[l, i], as ρ[i, i] = ½
    return pd.Series(ranks.mean(axis=0), index=methods, name="expected_rank")


def rank_by_iteration(frame: pd.DataFrame) -> pd.DataFrame:
    """E[rank] of every method at every iteration (the right column of Figures 1-2)."""
    cube, methods = risk_cube(frame, None)
    iterations = np.sort(frame.iteration.unique())
    return pd.DataFrame(0.5 + _frequencies(cube).sum(axis=1), index=iterations, columns=methods)


# ------------------------------------------------------------------------------ sign test


def sign_test(loss_a: ArrayLike, loss_b: ArrayLike) -> float:
    """One-sided p-value that A is not better than B across datasets: ties dropped,
    ``P(X >= wins)`` for ``X ~ Binomial(wins + losses, ½)`` (1.0 when every dataset ties)."""
    a, b = np.asarray(loss_a, dtype=float), np.asarray(loss_b, dtype=float)
    wins, losses = int(np.sum(a < b)), int(np.sum(a > b))
    return float(stats.binom.sf(wins - 1, wins + losses, 0.5))


def sign_test_matrix(frame: pd.DataFrame, last: int | None = LAST_ITERATIONS) -> pd.DataFrame:
    """Sign-test p-value of row beats column, per iteration, averaged over the last ones."""
    cube, methods = risk_cube(frame, last)
    wins = (cube[..., :, None] < cube[..., None, :]).sum(axis=1)
    n = wins + wins.transpose(0, 2, 1)
    pvalues = stats.binom.sf(wins - 1, n, 0.5)
    return pd.DataFrame(pvalues.mean(axis=0), index=methods, columns=methods)


# ------------------------------------------------------------------------------ PB test


def poisson_binomial_pmf(probabilities: ArrayLike) -> np.ndarray:
    """``(L + 1,)`` exact law of the number of successes of independent Bernoulli(``p_j``),
    by convolving the ``L`` two-point laws (a product of polynomials)."""
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)):
        raise ValueError(f"probabilities must be a 1-D array in [0, 1], got {p}")
    pmf = np.ones(1)
    for pj in p:
        pmf = np.convolve(pmf, [1.0 - pj, pj])
    return pmf


def pb_probability(probabilities: ArrayLike, prior: tuple[float, float] = (1.0, 1.0)) -> float:
    """``Pr(A ≻ B)`` from per-dataset ``Pr(A better than B on j)``: the posterior mass above ½
    of the probability that A beats B on a dataset, with a Beta ``prior`` on it."""
    pmf = poisson_binomial_pmf(probabilities)
    k = np.arange(pmf.size)
    above_half = stats.beta.sf(0.5, k + prior[0], pmf.size - 1 - k + prior[1])
    return float(pmf @ above_half)


def zero_one_dataset_probability(loss_a: ArrayLike, loss_b: ArrayLike) -> float:
    """``Pr(A better than B)`` on one test set of zero-one losses: with ``k_A`` examples only B
    gets wrong and ``k_B`` only A gets wrong (the others dropped), the Beta(1, 1)-prior posterior
    mass of ``Beta(k_A + 1, k_B + 1)`` above ½."""
    a, b = np.asarray(loss_a), np.asarray(loss_b)
    k_a, k_b = int(np.sum(a < b)), int(np.sum(a > b))
    return float(stats.beta.sf(0.5, k_a + 1, k_b + 1))


def bootstrap_dataset_probability(
    loss_a: ArrayLike, loss_b: ArrayLike, rng: np.random.Generator, draws: int = 1000
) -> float:
    """``Pr(A better than B)`` on one test set of real-valued losses: the share of Bayesian
    bootstrap draws (Dirichlet(1, …, 1) weights on the examples) where A's weighted risk is the
    lower, ties ½ [decide: the AISTATS 2012 rule for regression is not stated; docs/esmbo.md]."""
    diff = np.asarray(loss_a, dtype=float) - np.asarray(loss_b, dtype=float)
    weighted = rng.dirichlet(np.ones(diff.size), size=draws) @ diff
    return float(np.mean((weighted < 0) + 0.5 * (weighted == 0)))


def dataset_probabilities(
    example_losses: pd.DataFrame,
    method_a: str,
    method_b: str,
    rng: np.random.Generator | None = None,
    draws: int = 1000,
) -> pd.Series:
    """``Pr(A better than B)`` per (iteration, dataset) from per-example test losses (columns
    ``dataset, method, iteration, example, loss``): the zero-one rule when every loss is 0 or 1,
    else the Bayesian bootstrap (``rng`` needed)."""
    pair = example_losses[example_losses.method.isin([method_a, method_b])]
    table = pair.pivot_table(
        index=["iteration", "dataset", "example"], columns="method", values="loss"
    )
    if list(table.columns) != sorted([method_a, method_b]) or table.isna().to_numpy().any():
        raise ValueError(f"need the losses of {method_a} and {method_b} on the same examples")
    binary = bool(np.isin(table.to_numpy(), (0.0, 1.0)).all())
    if not binary and rng is None:
        raise ValueError("real-valued losses need an rng for the Bayesian bootstrap")

    def one(group: pd.DataFrame) -> float:
        a, b = group[method_a].to_numpy(), group[method_b].to_numpy()
        if binary:
            return zero_one_dataset_probability(a, b)
        return bootstrap_dataset_probability(a, b, rng, draws)  # type: ignore[arg-type]

    return table.groupby(level=["iteration", "dataset"]).apply(one)


def pb_matrix(
    example_losses: pd.DataFrame,
    last: int | None = LAST_ITERATIONS,
    rng: np.random.Generator | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
) -> pd.DataFrame:
    """``Pr(row ≻ column)`` by the PB test, per iteration, averaged over the last ``last``."""
    methods = sorted(example_losses.method.unique())
    iterations = np.sort(example_losses.iteration.unique())
    kept = iterations if last is None else iterations[-last:]
    losses = example_losses[example_losses.iteration.isin(kept)]
    result = pd.DataFrame(0.5, index=methods, columns=methods)
    for i, a in enumerate(methods):
        for b in methods[i + 1 :]:
            p = dataset_probabilities(losses, a, b, rng)
            by_iteration = [g.to_numpy() for _, g in p.groupby(level=0)]
            result.loc[a, b] = float(np.mean([pb_probability(g, prior) for g in by_iteration]))
            # B ≻ A from 1 − p_j: equals 1 − Pr(A ≻ B) only under a symmetric prior
            flipped = [pb_probability(1.0 - g, prior) for g in by_iteration]
            result.loc[b, a] = float(np.mean(flipped))
    return result


def significance_level(
    value: float, thresholds: tuple[float, ...], higher_is_stronger: bool = True
) -> int:
    """0 (none) to ``len(thresholds)``: how many thresholds ``value`` passes (strictly)."""
    passed = [value > t if higher_is_stronger else value < t for t in thresholds]
    return int(sum(passed))


MARKS = ("", "◦", "•", "★")  # none, lightly, significant, highly (the paper's third is lost)


def comparison_table(
    risks: pd.DataFrame,
    example_losses: pd.DataFrame | None = None,
    last: int | None = LAST_ITERATIONS,
    rng: np.random.Generator | None = None,
) -> pd.DataFrame:
    """The paper's Table 2-3 cells as data: one row per ordered pair (``row``, ``column``) with
    ρ, the sign-test p-value, ``Pr(row ≻ column)`` (NaN without ``example_losses``), both
    significance levels, and the mark text (PB mark first, then sign-test mark); rows and columns
    in order of expected rank (best first)."""
    rho = winning_frequency(risks, last)
    pvalues = sign_test_matrix(risks, last)
    ranks = expected_rank(risks, last).sort_values(kind="stable")
    pb = pb_matrix(example_losses, last, rng) if example_losses is not None else None
    records = []
    for a in ranks.index:
        for b in ranks.index:
            prob = float("nan") if pb is None or a == b else float(pb.loc[a, b])
            pb_level = 0 if np.isnan(prob) else significance_level(prob, PB_THRESHOLDS)
            sign_level = significance_level(pvalues.loc[a, b], SIGN_THRESHOLDS, False)
            records.append(
                {
                    "row": a,
                    "column": b,
                    "rho": rho.loc[a, b],
                    "sign_p": pvalues.loc[a, b],
                    "pb": prob,
                    "pb_level": pb_level,
                    "sign_level": sign_level,
                    "marks": MARKS[pb_level] + MARKS[sign_level],
                    "row_expected_rank": ranks[a],
                }
            )
    return pd.DataFrame(records)
