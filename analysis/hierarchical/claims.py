"""The seed's claims (Bermúdez-Chacón 2014, §5, Table 5.1 and Figs 5.1/5.2) on the claims engine.

Each claim reads the selection rows (:mod:`analysis.hierarchical.data`) of one method, hrs (the
seed's random search, §3.4(a); the seed does not say which optimiser made Table 5.1). A claim
that rests on a test over datasets follows the engine's power rule (``analysis.power.power``):
*not evaluated: underpowered* when the test cannot reach 0.05 with the datasets at hand — H1 the
two-sided Wilcoxon signed-rank test of the gains (2/2^n over the n non-zero gains: 6 of them at
least), H4 and H5 a one-sided sign test of "lower on most datasets" (1/2^n: 5 at least). H2 and
H3 are descriptive (no test): decided as soon as the data could show either answer (a dataset
without a gain; two datasets). The seed's own statements cover 36 sets.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.claims import Claim, MissingInput, Outcome, decided
from analysis.hierarchical import data
from analysis.power import power
from analysis.render import format_number

METHOD = "HRS"
NO_HYPERPARAMETERS = {"LinearDiscriminant"}  # App. A: LDA "exposes no hyperparameters"
ALPHA = 0.05


def _table(rows: pd.DataFrame) -> pd.DataFrame:
    table = data.table_5_1(rows)
    table = table[table["method"] == METHOD].dropna(subset=["default best", "optimized"])
    if table.empty:
        raise MissingInput(f"no {METHOD} run with both the defaults baseline and a ranked model")
    return table


def higher_than_defaults(rows: pd.DataFrame) -> Outcome:
    """§5: 'the optimised index is in general significantly higher' than the best default."""
    table = _table(rows)
    gain = table["optimized"] - table["default best"]
    n = len(table)
    p = float(stats.wilcoxon(gain).pvalue) if n >= 2 and np.any(gain != 0) else np.nan
    # scipy's p is exact or, with zero gains, the normal approximation: the rule takes the
    # larger floor of the two, two-sided as the test is
    weak = power("wilcoxon", int(np.count_nonzero(gain)), ALPHA, method="asymptotic")
    significant = decided(weak, gain.median() > 0 and p < ALPHA)
    return Outcome(
        f"{int((gain > 0).sum())} of {n} datasets higher; median gain "
        f"{format_number(gain.median(), 4)}; Wilcoxon p = {format_number(p, 3)}",
        [("optimised above the best default, Wilcoxon p < 0.05", significant)],
        statistic=float(gain.median()),
        p_value=p,
    )


def no_gain_means_no_hyperparameters(rows: pd.DataFrame) -> Outcome:
    """§5: where the optimised model does not beat the defaults, the winner is
    LinearDiscriminant, which has no hyperparameters (mfeat-factors, -morphological,
    -zernike)."""
    table = _table(rows)
    flat = table[table["boost %"] <= 0]
    families = ", ".join(f"{d}: {f}" for d, f in zip(flat["dataset"], flat["family"], strict=True))
    holds = bool(flat["family"].isin(NO_HYPERPARAMETERS).all()) if len(flat) else None
    return Outcome(
        f"{len(flat)} of {len(table)} datasets without a gain"
        + (f" ({families})" if families else ""),
        [("every dataset without a gain selects a learner without hyperparameters", holds)],
    )


def best_family_depends_on_the_dataset(rows: pd.DataFrame) -> Outcome:
    """§5: 'the best family and the size of the gain depend on the dataset'."""
    table = _table(rows)
    families = table["family"].nunique()
    enough = len(table) >= 2
    return Outcome(
        f"{families} families over {len(table)} datasets; boost from "
        f"{format_number(table['boost %'].min(), 1)} % to "
        f"{format_number(table['boost %'].max(), 1)} %",
        [
            ("more than one family selected", families > 1 if enough else None),
            (
                "the boost differs between datasets",
                bool(table["boost %"].nunique() > 1) if enough else None,
            ),
        ],
    )


def _stds(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: the median standard deviation of the 30 hold-out scores of the defaults,
    of the optimised candidates, of those tied with the best and of the others that reached the
    root."""
    mine = rows[rows["method"].map(lambda m: data.METHOD_NAMES.get(m, m)) == METHOD]
    records = []
    for dataset, frame in mine.groupby("dataset"):
        defaults = data.defaults_of(rows, str(dataset))
        optimized = frame[frame["ms_kind"] == "optimized"]
        ranked = optimized[optimized["ms_rank"].notna()]
        tied = ranked["ms_tied"].fillna(False).astype(bool)
        records.append(
            {
                "dataset": dataset,
                "defaults": defaults["ms_holdout_std"].median(),
                "optimized": optimized["ms_holdout_std"].median(),
                "tied": ranked.loc[tied, "ms_holdout_std"].median(),
                "not tied": ranked.loc[~tied, "ms_holdout_std"].median(),
            }
        )
    if not records:
        raise MissingInput(f"no {METHOD} selection rows")
    return pd.DataFrame(records).set_index("dataset")


def lower_std_on_most(
    stds: pd.DataFrame, lower: str, higher: str, found: str, condition: str
) -> Outcome:
    """Whether column ``lower`` of ``stds`` (per dataset) is below column ``higher`` on more
    datasets than chance would give: one-sided sign test p < 0.05 over the datasets that have
    both and differ (underpowered below 5 of them, 1/2^4 > 0.05)."""
    both = stds.dropna(subset=[lower, higher])
    below, above = int((both[lower] < both[higher]).sum()), int((both[lower] > both[higher]).sum())
    p = float(stats.binom.sf(below - 1, below + above, 0.5))
    return Outcome(
        f"{found} on {below} of {len(both)} datasets with both (sign test p = "
        f"{format_number(p, 3)})",
        [
            (
                f"{condition} (sign test p < {ALPHA})",
                decided(power("sign", below + above, ALPHA, alternative="greater"), p < ALPHA),
            )
        ],
        p_value=p,
    )


def optimised_vary_less(rows: pd.DataFrame) -> Outcome:
    """Fig 5.2: 'the optimised candidates have lower variance than the defaults'."""
    return lower_std_on_most(
        _stds(rows),
        "optimized",
        "defaults",
        "optimised below the defaults (median std of the scores)",
        "optimised std below the defaults' on most datasets",
    )


def tied_vary_least(rows: pd.DataFrame) -> Outcome:
    """Fig 5.2: 'the models indistinguishable from the best have the smallest variance'
    (stability is a ranking criterion)."""
    return lower_std_on_most(
        _stds(rows),
        "tied",
        "not tied",
        "tied below the others",
        "tied models' std below the others' on most datasets",
    )


CLAIMS: list[Claim[pd.DataFrame]] = [
    Claim(
        "H1",
        "the optimised performance index is in general significantly higher than the best default",
        "Table 5.1: boost > 0 on 31 of 36 sets (printed; 0.01-80.37 %)",
        higher_than_defaults,
    ),
    Claim(
        "H2",
        "where optimisation brings no gain, the winner has no hyperparameters (LinearDiscriminant)",
        "mfeat-factors, -morphological, -zernike (0.00 %); but letter (KNN) and HK2 "
        "(LinearSVM) 0.00 % too",
        no_gain_means_no_hyperparameters,
        "no dataset without a gain: nothing to check",
    ),
    Claim(
        "H3",
        "the best family and the size of the gain depend on the dataset",
        "Table 5.1: 7 families, boost 0-80.37 %",
        best_family_depends_on_the_dataset,
        "one dataset cannot show a difference between datasets",
    ),
    Claim(
        "H4",
        "the optimised candidates have lower variance than the defaults",
        "Fig 5.2 (colonTumor, WildMain500)",
        optimised_vary_less,
    ),
    Claim(
        "H5",
        "the models tied with the best have the smallest variance",
        "Fig 5.2",
        tied_vary_least,
    ),
]
