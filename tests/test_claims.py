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
    NOT_EVALUATED,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    ScoreSetting,
    Underpowered,
    claims_display,
    no_significant_difference,
    power,
    records_frame,
    run_claim,
    smallest_attainable_p,
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


@pytest.mark.parametrize("n", range(1, 9))
def test_smallest_attainable_p_is_the_exact_tests_most_extreme_p(n: int) -> None:
    """Wilcoxon and sign: all n differences of one sign (scipy's exact p); Spearman: a perfectly
    monotone sequence among all n! orders; Friedman: every block ranking alike, by enumeration."""
    import itertools

    from scipy import stats as scipy_stats

    extreme = np.arange(1.0, n + 1)
    for test, alternative in (("wilcoxon", "two-sided"), ("wilcoxon-one-sided", "greater")):
        exact = scipy_stats.wilcoxon(extreme, method="exact", alternative=alternative).pvalue
        assert smallest_attainable_p(test, n) == pytest.approx(exact)
    for test, alternative in (("sign", "two-sided"), ("sign-one-sided", "greater")):
        exact = scipy_stats.binomtest(n, n, alternative=alternative).pvalue
        assert smallest_attainable_p(test, n) == pytest.approx(exact)
    if n <= 6:
        rhos = [scipy_stats.spearmanr(extreme, order).statistic
                for order in itertools.permutations(extreme)]  # fmt: skip
        share = np.mean(np.abs(rhos) >= 1 - 1e-12) if n >= 3 else 1.0
        assert smallest_attainable_p("spearman", n) == pytest.approx(share)
    if n <= 4:  # Friedman, k = 3: the share of the (3!)^n rankings with the largest statistic
        k, orders = 3, list(itertools.permutations(range(1, 4)))
        sums = [np.sum(np.sum(blocks, axis=0) ** 2)
                for blocks in itertools.product(orders, repeat=n)]  # fmt: skip
        share = np.mean(np.isclose(sums, max(sums)))
        assert smallest_attainable_p("friedman", n, k) == pytest.approx(share if n > 1 else 1.0)


def test_nemenyi_is_underpowered_exactly_when_no_rank_difference_can_exceed_the_cd() -> None:
    from analysis import stats as analysis_stats

    for k, n in ((2, 3), (2, 20), (4, 2), (4, 10), (11, 3), (11, 30)):
        cd = analysis_stats.nemenyi_critical_difference(k, n, 0.05)
        assert (power("nemenyi", n, 0.05, k) is None) == (k - 1 > cd), (k, n)


def test_bad_test_name_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown test 't-test'; valid: wilcoxon"):
        smallest_attainable_p("t-test", 5)


def _two_methods(n: int, gap: float) -> pd.DataFrame:
    """``a`` better than ``b`` by ``gap`` (plus distinct offsets) on every one of n datasets."""
    base = np.linspace(10, 30, n)
    return pd.DataFrame({"a": base, "b": base + gap + np.arange(n) / 1024})


def test_a_significance_claim_on_5_datasets_is_underpowered_and_on_20_decided() -> None:
    """5 pairs: the exact two-sided Wilcoxon cannot go below 2/2^5 = 0.0625, so "a significantly
    better than b" and "no significant difference" are both *not evaluated: underpowered*
    whatever the scores (the normal approximation gives 0.043 here); on 20 they are decided."""

    def status(n: int, better: bool, gap: float = 1.0) -> tuple[str, str]:
        s = ScoreSetting(_two_methods(n, gap), "t", 0.05)
        outcome = s.pairwise(better=(("a", "b"),)) if better else s.pairwise(same=(("a", "b"),))
        record = run_claim(Claim("X", "", "", lambda _: outcome), None)
        return record.status, record.reason

    for better in (True, False):
        small, reason = status(5, better)
        assert small == NOT_EVALUATED
        assert reason.startswith("underpowered (smallest attainable p = 0.0625 >= alpha = 0.05")
        assert "two-sided Wilcoxon signed-rank, 2/2^n with n = 5" in reason
    assert status(20, True)[0] == REPRODUCED
    assert status(20, False)[0] == NOT_REPRODUCED  # p < 0.05 on 20 one-sided pairs
    assert status(20, True, gap=-1.0)[0] == NOT_REPRODUCED  # b is the better one
    assert status(6, True)[0] == REPRODUCED  # 2/2^6 = 0.031: the test can decide from 6 pairs
    shown, tally = claims_display(
        records_frame([run_claim(Claim("X", "", "", lambda _: ScoreSetting(
            _two_methods(5, 1.0), "t", 0.05).pairwise(better=(("a", "b"),))), None)])
    )  # fmt: skip
    assert shown.loc["X", "status"].startswith("**not evaluated**: underpowered (smallest")
    assert tally == "0 reproduced, 0 not reproduced, 1 not evaluated"


def test_chapter3_significance_claims_on_5_datasets_are_underpowered() -> None:
    """On 5 datasets each claim resting only on Wilcoxon conditions is *not evaluated:
    underpowered*, never *not reproduced* (C3.4: "significantly better than every other
    method", C3.7/C3.17/C3.20: "no significant difference"); on all 48 they are reproduced."""
    tables, sizes, curves = synthetic_inputs()
    few = claims_table({key: table.iloc[:5] for key, table in tables.items()}, sizes, curves)
    full = claims_table(tables, sizes, curves)
    for claim_id in ("C3.4", "C3.7", "C3.17", "C3.18", "C3.20"):
        assert few.loc[claim_id, "status"] == NOT_EVALUATED, claim_id
        assert few.loc[claim_id, "reason"].startswith("underpowered (smallest attainable p ="), (
            claim_id
        )
        assert full.loc[claim_id, "status"] == REPRODUCED, claim_id


def test_no_difference_with_every_pair_equal_is_underpowered() -> None:
    """Every difference zero: the test has n = 0 pairs and no p; the claim is not evaluated."""
    assert no_significant_difference(float("nan"), 0, 0.05) == Underpowered(
        "wilcoxon", 0, 1.0, 0.05
    )
    assert no_significant_difference(0.5, 5, 0.05) == Underpowered("wilcoxon", 5, 0.0625, 0.05)
    assert no_significant_difference(0.5, 6, 0.05) is True
    assert no_significant_difference(0.01, 6, 0.05) is False
    with pytest.raises(TypeError, match="underpowered condition is undecided"):
        bool(Underpowered("wilcoxon", 5, 0.0625, 0.05))
    tables, sizes, curves = synthetic_inputs()
    pm_holdout = tables[PM_HO].assign(**{"gp-pm": tables[PM_HO]["gp"]})  # every difference 0
    table = claims_table({**tables, PM_HO: pm_holdout}, sizes, curves)
    assert table.loc["C3.17", "status"] == NOT_EVALUATED
    assert "with n = 0): gp-pm vs gp not significant [pm/HO]" in table.loc["C3.17", "reason"]


def test_a_pair_with_a_method_the_table_lacks_is_missing_input_whichever_side_it_is_on() -> None:
    from analysis.claims import MissingInput

    setting = ScoreSetting(_two_methods(8, 1.0), "t", 0.05)
    assert setting.n_pairs("a", "b") == 8
    for pair in (("c", "b"), ("a", "c")):
        with pytest.raises(MissingInput, match=r"t lacks methods \['c'\]"):
            setting.n_pairs(*pair)


def test_the_claims_table_shows_the_thesis_value_beside_ours_under_their_headers() -> None:
    setting = ScoreSetting(_two_methods(8, 1.0), "t", 0.05)
    record = run_claim(Claim("X", "a beats b", "12 of 14", lambda _: setting.pairwise()), None)
    shown, _ = claims_display(records_frame([record]))
    assert list(shown.columns) == ["statement", "thesis value", "our value", "status"]
    assert shown.loc["X", "thesis value"] == "12 of 14"
