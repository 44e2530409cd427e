"""Every condition of a multi-condition claim is checked on its own (analysis.claims).

For a few claims with several conditions, inputs are built where all conditions hold, then where
exactly one fails: the claim must be "not reproduced" with that condition, and only it, named in
the reason. A condition that is always true (or never evaluated) fails one of these.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.chapter3.claims import CV5, HOLDOUT, MAIN, MAIN_METHODS, PM, claims_table
from analysis.claims import NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED

DATASETS = [f"d{i:02d}" for i in range(30)]
BASE = pd.Series(np.linspace(5.0, 35.0, len(DATASETS)), index=DATASETS)


def better(on: int, by: float = 0.5) -> pd.Series:
    """BASE lowered by ``by`` on the first ``on`` datasets (on=30: everywhere, significant;
    on=3: not significant by Wilcoxon; a negative ``by``: worse)."""
    return BASE - by * (np.arange(len(DATASETS)) < on)


def table(**columns: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({name.replace("_", "-"): col for name, col in columns.items()})


def curves(gap) -> pd.DataFrame:
    """gp hold-out curves whose test − validation gap at iteration t is ``gap(t)``."""
    rows = [(d, t, 20.0 + gap(t), 20.0) for d in DATASETS[:2] for t in range(1, 101)]
    return pd.DataFrame(rows, columns=["dataset", "iteration", "test_error", "valid_error"])


def c3_1(gp_r: pd.Series) -> dict:
    return {"tables": {(HOLDOUT, MAIN): table(gp=BASE, gp_r=gp_r)}}


def c3_16(ho: pd.Series, cv: pd.Series) -> dict:
    return {
        "tables": {
            (HOLDOUT, PM): table(gp_r=BASE, gp_pm_r=ho),
            (CV5, PM): table(gp_r=BASE, gp_pm_r=cv),
        }
    }


def c3_14(gap) -> dict:
    return {"tables": {}, "gp_holdout_curves": curves(gap)}


CASES = {
    # claim: (inputs where every condition holds, {failing condition: inputs failing only it})
    "C3.1": (
        c3_1(better(30)),
        {"gp-r significantly better than gp": c3_1(better(3))},
    ),
    "C3.16": (
        c3_16(better(3), better(30)),
        {
            "count(gp-pm-r, gp-r) > 0 [HO]": c3_16(better(3, by=-0.5), better(30)),
            "gp-pm-r vs gp-r not significant [HO]": c3_16(better(30), better(30)),
            "gp-pm-r significantly better than gp-r [5F]": c3_16(better(3), better(3)),
        },
    ),
    "C3.14": (
        c3_14(lambda t: 0.01 * t),
        {
            "gap at the last iteration > gap at the first": c3_14(
                lambda t: -0.5 if t == 100 else 0.01 * t
            ),
            "gap increases with iterations (Spearman ρ > 0, p < alpha)": c3_14(
                lambda t: 0.5 if t == 100 else -0.01 * t
            ),
        },
    ),
}


@pytest.mark.parametrize("claim_id", list(CASES))
def test_claim_is_reproduced_when_every_condition_holds(claim_id: str) -> None:
    holding, _ = CASES[claim_id]
    row = claims_table(**holding).loc[claim_id]
    assert (row["status"], row["reason"]) == (REPRODUCED, "all conditions hold")


@pytest.mark.parametrize(
    "claim_id, condition",
    [(claim, condition) for claim, (_, failing) in CASES.items() for condition in failing],
)
def test_each_condition_alone_makes_the_claim_not_reproduced(claim_id: str, condition: str) -> None:
    row = claims_table(**CASES[claim_id][1][condition]).loc[claim_id]
    assert (row["status"], row["reason"]) == (NOT_REPRODUCED, f"fails: {condition}")


def test_a_pattern_claim_whose_table_lacks_an_opponent_is_not_evaluated() -> None:
    # C3.19: gp-r against grid, rs, gp and gp-pm in the posterior-mean experiment; no gp-pm here
    pm = table(gp_r=better(30), grid=BASE, rs=BASE, gp=BASE)
    row = claims_table({(HOLDOUT, PM): pm, (CV5, PM): pm}).loc["C3.19"]
    assert row["status"] == NOT_EVALUATED and "gp-pm" in row["reason"]


def test_our_value_states_ranks_and_the_signed_count_with_its_p_value() -> None:
    row = claims_table(**c3_1(better(30))).loc["C3.1"]
    assert row["our_value"] == "R 1.00 vs 2.00; gp-r vs gp +30* (p=4.32e-08)"


def test_size_bin_claim_without_a_datasets_size_is_not_evaluated() -> None:
    every = pd.DataFrame({m: BASE for m in MAIN_METHODS})
    tables = {(HOLDOUT, MAIN): every, (CV5, MAIN): every}
    sizes = pd.Series(np.linspace(50, 3000, len(DATASETS)), index=DATASETS)
    for unsized in (sizes.drop(DATASETS[0]), sizes.where(sizes.index != DATASETS[0])):  # NaN
        row = claims_table(tables, dataset_sizes=unsized).loc["C3.13"]
        assert row["status"] == NOT_EVALUATED and "no |D_TVS| for 1 datasets" in row["reason"]
