"""The seed's qualitative findings (Jůzlová 2018, §2.2 and §3) as claims on the claims engine.

The seed compares methods descriptively (mean, median, std over 10 runs; no tests, notes B5), so
each claim is a statement about our medians, spreads, shares or correlations, with one condition
per dataset. A condition is undecided (the claim *not evaluated*) when a method it reads has
fewer than :data:`MIN_RUNS` runs on the part: a median or a spread of fewer runs says nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.claims import Claim, MissingInput, Outcome
from analysis.render import format_number
from analysis.surrogates import data
from analysis.surrogates.results import Results

MIN_RUNS = 5
FEW_RUNS = f"fewer than {MIN_RUNS} runs of a method on the part: no power"
OVERTAKE_FROM = 15  # §2.2.2: SMBO overtakes RANDOM from about the 15th iteration (MRBI)


def _summary(results: Results, part: str) -> pd.DataFrame:
    errors = results.part_errors(part)
    if errors.empty:
        raise MissingInput(f"no {part} runs")
    return data.error_summary(errors)


def _enough(summary: pd.DataFrame, *methods: str) -> bool:
    missing = [m for m in methods if m not in summary.index]
    if missing:
        raise MissingInput(f"no runs of {missing}")
    return bool((summary.loc[list(methods), "runs"] >= MIN_RUNS).all())


def _decided(enough: bool, holds: bool) -> bool | None:
    return bool(holds) if enough else None


def _extreme(results: Results, column: str, method: str, part: str, lowest: bool) -> Outcome:
    summary = _summary(results, part)
    methods = list(summary.index)
    values = summary[column]
    target = values.min() if lowest else values.max()
    word = "lowest" if lowest else "highest"
    return Outcome(
        f"{part}: " + ", ".join(f"{m} {format_number(values[m])}" for m in methods),
        [(f"{part}: {method} has the {word} {column}", _decided(
            _enough(summary, *methods), values[method] == target))],
    )  # fmt: skip


def _both(*outcomes: Outcome) -> Outcome:
    return Outcome(
        "; ".join(o.our_value for o in outcomes), [c for o in outcomes for c in o.conditions]
    )


def hyperband_best(results: Results) -> Outcome:
    return _both(
        *(_extreme(results, "valid median", "HYPERBAND", p, True) for p in ("mnist", "mrbi"))
    )


def hyperband_lowest_spread(results: Results) -> Outcome:
    return _both(*(_extreme(results, "valid std", "HYPERBAND", p, True) for p in ("mnist", "mrbi")))


def gp_spread(results: Results) -> Outcome:
    high = _extreme(results, "valid std", "GP", "mnist", False)
    summary = _summary(results, "mrbi")
    spread = summary["valid std"]
    below = spread["GP"] < spread.median() if "GP" in spread else None
    low = Outcome(
        "mrbi: GP std " + format_number(spread.get("GP", np.nan)) + ", median of the methods "
        + format_number(spread.median()),
        [("mrbi: GP's std below the methods' median", _decided(
            _enough(summary, *summary.index), bool(below)))],
    )  # fmt: skip
    return _both(high, low)


def forest_spread(results: Results) -> Outcome:
    return _extreme(results, "valid std", "RF", "mrbi", False)


def random_search(results: Results) -> Outcome:
    mnist = _summary(results, "mnist")["valid median"]
    worst_mrbi = _extreme(results, "valid median", "RANDOM", "mrbi", False)
    summary = _summary(results, "mnist")
    matches = Outcome(
        "mnist: RANDOM median " + format_number(mnist.get("RANDOM", np.nan)),
        [("mnist: RANDOM is not the worst median", _decided(
            _enough(summary, *summary.index), mnist.get("RANDOM", np.inf) < mnist.max()))],
    )  # fmt: skip
    return _both(matches, worst_mrbi)


def one_layer_preferred(results: Results) -> Outcome:
    traces = results.part_traces("mrbi")
    if traces.empty:
        raise MissingInput("no mrbi traces")
    shares = data.generated_layers(traces)["all iterations"]
    summary = _summary(results, "mrbi")
    conditions, values = [], []
    for method in data.MODEL_BASED:
        share = shares.get((method, 1), np.nan)
        values.append(f"{method} {format_number(share, 0)} %")
        holds = _decided(_enough(summary, method), share > 50)
        conditions.append((f"mrbi: {method} generates more than 50 % one-layer networks", holds))
    return Outcome("one-layer share: " + ", ".join(values), conditions)


def exploratory_bracket_best(results: Results) -> Outcome:
    best = results.brackets("mnist")
    if best.empty:
        raise MissingInput("no mnist hyperband runs")
    medians = best.groupby("configurations")["valid"].median().sort_index(ascending=False)
    runs = best.groupby("run_id").ngroups
    return Outcome(
        ", ".join(f"n={n}: {format_number(v)}" for n, v in medians.items()),
        [("mnist: the most exploratory bracket has the lowest median",
          _decided(runs >= MIN_RUNS, medians.iloc[0] == medians.min()))],
    )  # fmt: skip


def _rank_correlation(run: pd.DataFrame) -> float:
    rho = run["param_learning_rate"].rank().corr(run["param_units_1"].astype(float).rank())
    return abs(rho)


def tpe_correlated(results: Results) -> Outcome:
    conditions, values = [], []
    for part in ("mnist", "mrbi"):
        traces = results.part_traces(part)
        if traces.empty:
            raise MissingInput(f"no {part} traces")
        rows = data.seed_names(traces)
        absent = [m for m in ("TPE", "RANDOM") if not (rows["method"] == m).any()]
        if absent:
            raise MissingInput(f"no {part} traces of {absent}")
        mean = {
            m: rows[rows["method"] == m].groupby("run_id").apply(_rank_correlation).mean()
            for m in ("TPE", "RANDOM")
        }
        values.append(f"{part}: TPE {format_number(mean['TPE'])}, RANDOM "
                      f"{format_number(mean['RANDOM'])}")  # fmt: skip
        summary = _summary(results, part)
        conditions.append((
            f"{part}: TPE's mean |Spearman ρ| (learning rate, units) above RANDOM's",
            _decided(_enough(summary, "TPE", "RANDOM"), mean["TPE"] > mean["RANDOM"]),
        ))  # fmt: skip
    return Outcome("mean |ρ| within a run: " + "; ".join(values), conditions)


def smbo_overtakes(results: Results) -> Outcome:
    curves = results.part_curves("mrbi")
    if curves.empty:
        raise MissingInput("no mrbi traces")
    medians = data.median_by_iteration(curves[curves["method"] != "HYPERBAND"])
    if "RANDOM" not in medians or medians.index.max() < OVERTAKE_FROM:
        raise MissingInput(f"mrbi runs shorter than {OVERTAKE_FROM} evaluations or no RANDOM")
    later = medians.loc[OVERTAKE_FROM:]
    summary = _summary(results, "mrbi")
    conditions, values = [], []
    for method in [m for m in data.MODEL_BASED if m in medians]:
        ahead = bool((later[method] <= later["RANDOM"]).all())
        values.append(f"{method} ≤ RANDOM at every t ≥ {OVERTAKE_FROM}: {ahead}")
        conditions.append((f"mrbi: {method} at or below RANDOM from t = {OVERTAKE_FROM}",
                           _decided(_enough(summary, method, "RANDOM"), ahead)))  # fmt: skip
    return Outcome("; ".join(values), conditions)


CLAIMS: list[Claim[Results]] = [
    Claim(
        "S1",
        "HYPERBAND finds the best configurations on both datasets (lowest median validation error)",
        "MNIST 6.43 vs ≥ 6.90; MRBI 60.05 vs ≥ 60.70",
        hyperband_best,
        FEW_RUNS,
    ),
    Claim(
        "S2",
        "HYPERBAND has the lowest variance on both datasets",
        "validation std MNIST 0.78, MRBI 1.42 (lowest of five)",
        hyperband_lowest_spread,
        FEW_RUNS,
    ),
    Claim(
        "S3",
        "GP has a high variance after 10 evaluations (MNIST) and a low one after 30 (MRBI)",
        "std 2.30 (highest) / 1.53",
        gp_spread,
        FEW_RUNS,
    ),
    Claim(
        "S4",
        "RF is exploitative and gets stuck: high variance on MRBI",
        "std 2.86 (highest)",
        forest_spread,
        FEW_RUNS,
    ),
    Claim(
        "S5",
        "RANDOM matches the others on MNIST but is the worst on MRBI",
        "median 6.90 (2nd) / 62.88 (worst)",
        random_search,
        FEW_RUNS,
    ),
    Claim(
        "S6",
        "the model-based methods generate more one-layer networks than the prior's 50 %",
        "Table 2.5: GP 65, TPE 71, RF 68 %",
        one_layer_preferred,
        FEW_RUNS,
    ),
    Claim(
        "S7",
        "Hyperband's most exploratory bracket is the best (MNIST)",
        "medians 6.48 / 8.03 / 8.58 (n = 16 / 6 / 3)",
        exploratory_bracket_best,
        FEW_RUNS,
    ),
    Claim(
        "S8",
        "TPE with one start point samples correlated learning rates and units",
        "Figs 2.8, C.5 (one run)",
        tpe_correlated,
        FEW_RUNS,
    ),
    Claim(
        "S9",
        "on MRBI the model-based methods overtake RANDOM from about the 15th evaluation",
        "§2.2.2, Fig 2.10",
        smbo_overtakes,
        FEW_RUNS,
    ),
]
