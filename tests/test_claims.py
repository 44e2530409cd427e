"""Tests of the claims engine (analysis.claims) and the Chapter-3 catalogue on synthetic score
tables built so that every claim holds.

Scores are integer multiples of 1/1024 % so that all sums and differences are exact: a copy of a
column shifted by ``TINY`` on k datasets differs from it on exactly those k datasets, and equal-size
differences are exact ties for the Wilcoxon test. Methods sit on quality *tiers* ``UNIT`` apart with
noise strictly inside ±UNIT/2, so a tier gap fixes every per-dataset order between tiers; within a
tier, orders are set by explicit ``TINY`` shifts. With tied magnitudes the Wilcoxon normal
approximation gives p = 0.083 for 3 same-sign differences (not significant) and p = 0.014 for 6.
"""

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from analysis.chapter3.claims import CLAIMS, CV5, HOLDOUT, MAIN, PM, claims_table
from analysis.claims import (
    MIN_DATASETS_FOR_NO_DIFFERENCE,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    REPRODUCED,
    no_significant_difference,
)

N_DATASETS = 48
TICK = 1 / 1024
TINY = TICK
UNIT = 128 * TICK  # one quality tier, 0.125 % error
DATASETS = [f"d{i:02d}" for i in range(N_DATASETS)]  # sorted by size, smallest first
SMALLEST, LARGEST = slice(0, 3), slice(N_DATASETS - 4, N_DATASETS)
SELECTION_VARIANTS = ("cma-pv", "cma-bw", "cma-gv", "cma-pv-r", "cma-bw-r", "cma-gv-r")

Columns = dict[str, np.ndarray]
Inputs = tuple[dict[tuple[str, str], pd.DataFrame], pd.Series, pd.DataFrame]


class _Tiers:
    """Columns of ``base + tier · UNIT + noise`` with integer-tick noise strictly inside ±UNIT/2."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.base = np.round(np.linspace(5, 35, N_DATASETS) / TICK) * TICK

    def column(self, tier: float) -> np.ndarray:
        noise = self.rng.integers(-63, 64, size=N_DATASETS) * TICK
        return self.base + tier * UNIT + noise


def shifted(column: np.ndarray, where: slice, amount: float = TINY) -> np.ndarray:
    out = column.copy()
    out[where] += amount
    return out


def main_holdout(tiers: _Tiers) -> Columns:
    """gp-r alone on top (worse on the 3 smallest datasets, for C3.13); cma-r = cma but better on
    those 3 (better rank, not significant); gp = cma ± 1 tier alternately (count 0, p = 1)."""
    cols = {"gp-r": shifted(tiers.column(0), SMALLEST, 2.5 * UNIT), "cma": tiers.column(1.5)}
    cols["cma-r"] = shifted(cols["cma"], SMALLEST, -TINY)
    cols["gp"] = cols["cma"] + UNIT * np.where(np.arange(N_DATASETS) % 2 == 0, -1, 1)
    cols |= {m: tiers.column(2.5) for m in ("grid", "rs", "gp-sel", "gp-sel-r")}
    return cols | {m: tiers.column(3) for m in SELECTION_VARIANTS}


def main_cv5(tiers: _Tiers) -> Columns:
    """gp-r, cma-r, rs share the top tier, each worse by TINY on a few datasets (gp-r on the 3
    smallest, cma-r on the 4 largest, rs on 5 in between); gp = cma, worse on 3 datasets."""
    top = tiers.column(0)
    cols = {
        "gp-r": shifted(top, SMALLEST),
        "cma-r": shifted(top, LARGEST),
        "rs": shifted(top, slice(20, 25)),
        "cma": tiers.column(1),
    }
    cols["gp"] = shifted(cols["cma"], slice(10, 13))
    cols |= {m: tiers.column(2.5) for m in ("grid", "gp-sel", "gp-sel-r")}
    return cols | {m: tiers.column(4) for m in SELECTION_VARIANTS}


def pm_tables(tiers: _Tiers) -> tuple[Columns, Columns]:
    """Hold-out: gp-pm-r on top, gp-r its copy worse on 3 datasets, the rest 1.5 tiers below.
    5-fold: gp = hold-out gp-pm-r ± TINY on 4 + 4 datasets (p = 1 between them); gp-r = gp better
    on 6 datasets, gp-pm = gp better on 3 of them; grid, rs = gp-r worse on 3; gp-pm-r a tier up."""
    holdout = {"gp-pm-r": tiers.column(0)}
    holdout["gp-r"] = shifted(holdout["gp-pm-r"], slice(0, 3))
    holdout |= {m: tiers.column(1.5) for m in ("grid", "rs", "gp")}
    holdout["gp-pm"] = shifted(holdout["gp"], slice(0, 3))
    symmetric = np.zeros(N_DATASETS)
    symmetric[20:24], symmetric[24:28] = TINY, -TINY
    cv5 = {"gp": holdout["gp-pm-r"] + symmetric}
    cv5["gp-r"] = shifted(cv5["gp"], slice(0, 6), -TINY)
    cv5["gp-pm"] = shifted(cv5["gp"], slice(0, 3), -TINY)
    cv5["grid"] = shifted(cv5["gp-r"], slice(8, 11))
    cv5["rs"] = shifted(cv5["gp-r"], slice(12, 15))
    cv5["gp-pm-r"] = cv5["gp-r"] - UNIT - (tiers.column(0) - tiers.base)
    return holdout, cv5


def gp_holdout_curves(slope: float) -> pd.DataFrame:
    """gp hold-out incumbent errors whose test − validation gap changes by slope per iteration."""
    rows = [
        (dataset, t, 20.0 + slope * t / 2, 20.0 - slope * t / 2)
        for dataset in DATASETS[:5]
        for t in range(1, 101)
    ]
    return pd.DataFrame(rows, columns=["dataset", "iteration", "test_error", "valid_error"])


def synthetic_inputs() -> Inputs:
    tiers = _Tiers()
    pm_holdout, pm_cv5 = pm_tables(tiers)
    columns = {
        (HOLDOUT, MAIN): main_holdout(tiers),
        (CV5, MAIN): main_cv5(tiers),
        (HOLDOUT, PM): pm_holdout,
        (CV5, PM): pm_cv5,
    }
    tables = {key: pd.DataFrame(cols, index=DATASETS) for key, cols in columns.items()}
    sizes = pd.Series(np.geomspace(50, 60_000, N_DATASETS), index=DATASETS)  # |D_TVS|
    return tables, sizes, gp_holdout_curves(slope=0.05)


@pytest.fixture(scope="module")
def reproduced() -> pd.DataFrame:
    return claims_table(*synthetic_inputs())


def test_every_claim_is_evaluated_once() -> None:
    ids = [claim.id for claim in CLAIMS]
    assert ids == [f"C3.{i}" for i in range(1, 21)]


def test_synthetic_tables_reproduce_every_claim(reproduced: pd.DataFrame) -> None:
    failing = reproduced[reproduced["status"] != REPRODUCED]
    assert failing.empty, failing[["our_value", "reason"]].to_string()


def test_records_carry_thesis_value_and_statistics(reproduced: pd.DataFrame) -> None:
    assert reproduced["thesis_value"].str.startswith("thesis: ").all()
    assert reproduced.loc["C3.1", "statistic"] == 48 - 2 * 3  # gp-r loses on the 3 smallest
    assert reproduced.loc["C3.20", "p_value"] == pytest.approx(1.0)


def _set(key: tuple[str, str], method: str, values: Callable[[pd.DataFrame], pd.Series]):
    def breaker(inputs: Inputs) -> Inputs:
        tables, sizes, curves = inputs
        table = tables[key].copy()
        table[method] = values(table)
        return {**tables, key: table}, sizes, curves

    return breaker


def _swap(key: tuple[str, str], first: str, second: str):
    def breaker(inputs: Inputs) -> Inputs:
        tables, sizes, curves = inputs
        table = tables[key].rename(columns={first: second, second: first})
        return {**tables, key: table}, sizes, curves

    return breaker


def _tiny_copy(method: str) -> Callable[[pd.DataFrame], pd.Series]:
    """``method``'s column, worse by TINY on 3 datasets: a difference that is never significant."""
    return lambda table: pd.Series(shifted(table[method].to_numpy(), slice(30, 33)), table.index)


def _swap_settings(inputs: Inputs) -> Inputs:
    tables, sizes, curves = inputs
    swapped = {(HOLDOUT, MAIN): tables[(CV5, MAIN)], (CV5, MAIN): tables[(HOLDOUT, MAIN)]}
    return {**tables, **swapped}, sizes, curves


def _reverse_sizes(inputs: Inputs) -> Inputs:
    tables, sizes, curves = inputs
    return tables, pd.Series(sizes.to_numpy()[::-1], sizes.index), curves


def _shrinking_gap(inputs: Inputs) -> Inputs:
    tables, sizes, _ = inputs
    return tables, sizes, gp_holdout_curves(slope=-0.05)


MAIN_HO, MAIN_CV5, PM_HO, PM_CV5 = (HOLDOUT, MAIN), (CV5, MAIN), (HOLDOUT, PM), (CV5, PM)
VIOLATIONS = {
    "C3.1": _swap(MAIN_HO, "gp", "gp-r"),
    "C3.2": _swap(MAIN_CV5, "gp", "gp-r"),
    "C3.3": _set(MAIN_HO, "cma-r", lambda t: t["gp-r"] - UNIT),
    "C3.4": _set(MAIN_HO, "gp-sel", _tiny_copy("gp-r")),
    "C3.5": _set(MAIN_CV5, "rs", lambda t: t["rs"] + 2 * UNIT),
    "C3.6": _set(MAIN_HO, "cma-r", lambda t: t["cma"] - 2 * UNIT),
    "C3.7": _set(MAIN_CV5, "gp", lambda t: t["cma"] + UNIT),
    "C3.8": _swap(MAIN_HO, "cma", "cma-pv"),
    "C3.9": _set(MAIN_HO, "gp-sel", lambda t: t["gp"] - UNIT),
    "C3.10": _swap_settings,
    "C3.11": _set(MAIN_HO, "grid", lambda t: t["grid"] + 3.0),
    "C3.12": _set(MAIN_CV5, "gp", lambda t: t["gp"] + 1.0),
    "C3.13": _reverse_sizes,
    "C3.14": _shrinking_gap,
    "C3.15": _swap(PM_HO, "gp-pm-r", "grid"),
    "C3.16": _set(PM_CV5, "gp-pm-r", _tiny_copy("gp-r")),
    "C3.17": _set(PM_HO, "gp-pm", lambda t: t["gp"] - UNIT),
    "C3.18": _set(PM_HO, "grid", _tiny_copy("gp-pm-r")),
    "C3.19": _set(PM_CV5, "grid", lambda t: t["grid"] + 2 * UNIT),
    "C3.20": _set(PM_CV5, "gp", lambda t: t["gp"] + UNIT),
}


@pytest.mark.parametrize("claim_id", sorted(VIOLATIONS, key=lambda c: int(c.split(".")[1])))
def test_violated_claim_is_not_reproduced(claim_id: str) -> None:
    table = claims_table(*VIOLATIONS[claim_id](synthetic_inputs()))
    assert table.loc[claim_id, "status"] == NOT_REPRODUCED, table.loc[claim_id, "our_value"]
    assert table.loc[claim_id, "reason"].startswith("fails: ")


def test_missing_method_table_or_input_gives_not_evaluated() -> None:
    tables, _, _ = synthetic_inputs()
    tables = {key: t for key, t in tables.items() if key != PM_CV5}
    tables[MAIN_HO] = tables[MAIN_HO].drop(columns="cma-r").assign(gp=np.nan)  # all-NaN = absent
    table = claims_table(tables)
    not_evaluated = set(table.index[table["status"] == NOT_EVALUATED])
    assert {"C3.1", "C3.3", "C3.6", "C3.7", "C3.13", "C3.14", "C3.16", "C3.20"} <= not_evaluated
    assert table.loc["C3.2", "status"] == REPRODUCED  # 5-fold main table is complete
    assert table.loc["C3.13", "reason"] == "missing input: per-dataset sizes |D_TVS| not given"
    assert "lacks methods ['gp']" in table.loc["C3.1", "reason"]


def test_incomplete_table_gives_not_evaluated_instead_of_raising() -> None:
    tables, sizes, curves = synthetic_inputs()
    holes = tables[PM_HO].copy()
    holes.iloc[5, 2] = np.nan
    table = claims_table({**tables, PM_HO: holes}, sizes, curves)
    assert table.loc["C3.15", "status"] == NOT_EVALUATED
    assert "not a complete score table" in table.loc["C3.15", "reason"]


def test_two_sided_wilcoxon_needs_six_pairs_to_reject() -> None:
    """The smallest exact two-sided p with n pairs is 2/2^n: above 0.05 for n = 5, below for 6."""
    from scipy import stats as scipy_stats

    def smallest_p(n: int) -> float:
        return scipy_stats.wilcoxon(np.arange(1.0, n + 1), method="exact").pvalue

    assert smallest_p(MIN_DATASETS_FOR_NO_DIFFERENCE - 1) > 0.05
    assert smallest_p(MIN_DATASETS_FOR_NO_DIFFERENCE) < 0.05


def test_no_difference_on_three_datasets_is_not_evaluated() -> None:
    tables, sizes, curves = synthetic_inputs()
    few = {key: table.iloc[:3] for key, table in tables.items()}
    table = claims_table(few, sizes, curves)
    for claim_id in ("C3.7", "C3.17", "C3.20"):  # only "... not significant" conditions
        assert table.loc[claim_id, "status"] == NOT_EVALUATED
        assert table.loc[claim_id, "reason"].startswith("cannot decide: ")
        assert "at least 6 datasets" in table.loc[claim_id, "reason"]


def test_no_difference_with_undefined_p_is_not_evaluated() -> None:
    assert no_significant_difference(float("nan"), 40, 0.05) is None
    assert no_significant_difference(0.5, MIN_DATASETS_FOR_NO_DIFFERENCE - 1, 0.05) is None
    assert no_significant_difference(0.5, MIN_DATASETS_FOR_NO_DIFFERENCE, 0.05) is True
    assert no_significant_difference(0.01, MIN_DATASETS_FOR_NO_DIFFERENCE, 0.05) is False
    tables, sizes, curves = synthetic_inputs()
    pm_holdout = tables[PM_HO].assign(**{"gp-pm": tables[PM_HO]["gp"]})  # every difference 0
    table = claims_table({**tables, PM_HO: pm_holdout}, sizes, curves)
    assert table.loc["C3.17", "status"] == NOT_EVALUATED
    assert "gp-pm vs gp not significant [pm/HO]" in table.loc["C3.17", "reason"]
