"""Seed 002's report plug-in (analysis/surrogates): the ARD table on a function with known relevant
dimensions, Hyperband's finished configurations, layer shares, the seed's tables labelled as the
seed's, and the report end to end on a synthetic sweep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.lines import Line2D

from analysis.render import MISSING
from analysis.surrogates import ard, claims, data, seed


def synthetic_configurations(n: int = 80, seed_: int = 0) -> pd.DataFrame:
    """Five hyperparameters; the loss depends on ``a``, ``b`` and the two-valued ``cat`` only."""
    rng = np.random.default_rng(seed_)
    u = rng.uniform(size=(n, 5))
    cat = np.where(u[:, 4] < 0.5, "x", "y")
    loss = np.sin(3 * np.pi * u[:, 0]) + np.sin(2 * np.pi * u[:, 1]) + 0.8 * (cat == "y")
    loss = loss + 0.01 * rng.normal(size=n)
    return pd.DataFrame(
        {
            "u_a": u[:, 0], "u_b": u[:, 1], "u_c": u[:, 2], "u_d": u[:, 3], "u_cat": u[:, 4],
            "param_a": u[:, 0], "param_b": u[:, 1], "param_c": u[:, 2], "param_d": u[:, 3],
            "param_cat": cat, "valid_loss": loss,
        }
    )  # fmt: skip


def test_ard_finds_the_relevant_dimensions() -> None:
    # A two-valued column's step fits any length scale (a large amplitude makes it linear), so
    # ARD cannot rank ``cat``; the numeric dimensions it must (the seed reads 1/ℓ < 1 as "not
    # relevant").
    table = ard.relevance_table(synthetic_configurations(100), fits=10)
    relevant = table.loc[["a", "b"], "median 1/ℓ"]
    irrelevant = table.loc[["c", "d"], "median 1/ℓ"]
    assert (irrelevant < ard.NOT_RELEVANT_BELOW).all(), table
    assert relevant.min() > 10 * irrelevant.max(), table


def test_ard_encodes_two_valued_categoricals_as_one_column() -> None:
    X, names = ard.encode_configurations(synthetic_configurations(10))
    assert names == ["a", "b", "c", "cat", "d"]
    assert set(np.unique(X[:, names.index("cat")])) <= {0.0, 1.0}


def hyperband_trace() -> pd.DataFrame:
    """One run, bracket 1 (3 configurations at 2 epochs, the best at 8) and bracket 0 (one at 8);
    configuration 0.3 stops early at 1 of its 2 epochs, 0.2 at 5 of its 8."""
    rows = [
        # bracket, u, asked, spent, loss, layer_2
        (1, 0.1, 2, 2, 0.50, "True"),
        (1, 0.2, 2, 2, 0.30, "False"),
        (1, 0.3, 2, 1, 0.40, "False"),  # stopped early in the first rung: finished
        (1, 0.2, 8, 3, 0.20, "False"),  # resumed, stopped early: 2 + 3 < 8
        (0, 0.4, 8, 8, 0.25, "True"),
    ]
    return pd.DataFrame(
        {
            "run_id": "r", "part": "mrbi", "method": "hyperband", "n_fits": 1,
            "iteration": range(1, len(rows) + 1),
            "bracket": [r[0] for r in rows], "u_x": [r[1] for r in rows],
            "resource": [float(r[2]) for r in rows], "resource_spent": [float(r[3]) for r in rows],
            "valid_loss": [r[4] for r in rows], "param_layer_2": [r[5] for r in rows],
            "param_layer_3": "False",
        }
    )  # fmt: skip


def test_finished_configurations_reached_the_top_resource_or_stopped() -> None:
    configs = data.hyperband_configurations(hyperband_trace())
    assert configs["finished"].tolist() == [False, True, True, True]
    assert configs.loc[configs.finished, "valid"].tolist() == pytest.approx([20.0, 40.0, 25.0])
    assert configs["configurations"].tolist() == [3, 3, 3, 1]
    best = data.best_finished_per_bracket(configs)
    assert best.set_index("configurations")["valid"].to_dict() == pytest.approx({3: 20.0, 1: 25.0})


def test_layers_follow_the_flags() -> None:
    trace = pd.DataFrame(
        {
            "param_layer_2": ["True", "True", "False", None],
            "param_layer_3": ["True", None, "True", None],
        }
    )
    assert data.layers(trace).tolist() == [3, 2, 1, 1]


def test_generated_layer_shares_over_all_and_last_iterations() -> None:
    n = 12
    trace = pd.DataFrame(
        {
            "run_id": "r", "part": "mrbi", "method": "rs", "iteration": range(1, n + 1),
            "param_layer_2": ["True"] * 2 + ["False"] * (n - 2), "param_layer_3": "False",
        }
    )  # fmt: skip
    shares = data.generated_layers(trace)
    assert shares.loc[("RANDOM", 1), "all iterations"] == pytest.approx(100 * 10 / 12)
    assert shares.loc[("RANDOM", 1), "last 10 iterations"] == pytest.approx(100.0)
    assert shares.loc[("RANDOM", 3), "all iterations"] == 0


def test_the_seed_tables_are_the_seeds() -> None:
    mnist = seed.error_table("mnist")
    assert mnist.loc["HYPERBAND", "valid median"] == 6.43
    assert seed.error_table("mrbi").loc["RANDOM", "test mean"] == 63.57
    assert seed.error_table("other") is None
    assert seed.ard_table()["learning_rate"] == 3.77
    assert seed.bracket_medians("mnist") == {16: 6.48, 6: 8.03, 3: 8.58}
    assert seed.generated_layers().loc[("TPE", 1), "all iterations"] == 71
    assert seed.finished_layers().loc[("HYPERBAND", 3), "first 3 brackets"] == 13


def test_median_by_epochs_waits_for_every_run() -> None:
    curves = pd.DataFrame(
        {
            "method": "RANDOM", "run_id": ["a", "a", "b", "b"], "iteration": [1, 2, 1, 2],
            "epochs": [10.0, 20.0, 15.0, 30.0], "best": [5.0, 4.0, 6.0, 2.0],
        }
    )  # fmt: skip
    table = data.median_by_epochs(curves, points=30)
    assert np.isnan(table.loc[table.index < 15, "RANDOM"]).all()
    assert table.loc[30.0, "RANDOM"] == pytest.approx(3.0)


def results_with(errors: pd.DataFrame) -> object:
    """A :class:`analysis.surrogates.report.Results` holding ``errors`` only (no traces)."""
    from analysis.surrogates.results import Results

    results = Results.__new__(Results)
    results.errors, results.traces = errors, pd.DataFrame()
    results.curves, results.configs = pd.DataFrame(), pd.DataFrame()
    results.parts = sorted(set(errors["part"]))
    return results


def errors_where(best: str, runs: int) -> pd.DataFrame:
    """Five methods on both parts; ``best`` has the lowest errors, every other method 2 pp more."""
    rows = []
    for part in ("mnist", "mrbi"):
        for method in data.SEED_ORDER:
            for r in range(runs):
                error = 5.0 + 0.1 * r + (0 if method == best else 2.0)
                rows.append((part, "d", r, method, error, error))
    return pd.DataFrame(rows, columns=["part", "dataset", "repetition", "method", "valid", "test"])


@pytest.mark.parametrize(
    ("best", "runs", "status"),
    [
        ("HYPERBAND", 5, "reproduced"),
        ("GP", 5, "not reproduced"),
        ("HYPERBAND", 4, "not evaluated"),
    ],
)
def test_the_hyperband_claim_needs_five_runs_and_the_lowest_medians(
    best: str, runs: int, status: str
) -> None:
    from analysis.claims import run_claim
    from analysis.surrogates.claims import CLAIMS

    record = run_claim(CLAIMS[0], results_with(errors_where(best, runs)))
    assert record.status == status, record.reason


def test_claims_without_traces_are_not_evaluated() -> None:
    from analysis.claims import run_claim
    from analysis.surrogates.claims import CLAIMS

    records = {c.id: run_claim(c, results_with(errors_where("HYPERBAND", 5))) for c in CLAIMS}
    assert {i for i, r in records.items() if r.status == "not evaluated"} == {
        "S6",
        "S7",
        "S8",
        "S9",
    }


def test_svm_curves_pair_each_incumbent_with_the_fit_seconds_spent_so_far() -> None:
    from analysis.surrogates import svm

    outcomes = pd.DataFrame(
        {
            "part": "svm", "dataset": "d", "method": "hyperband", "run_id": "r",
            "iteration": [1, 2, 3], "test_error": [0.3, 0.2, 0.2],
        }
    )  # fmt: skip
    traces = pd.DataFrame(
        {"part": "svm", "run_id": "r", "iteration": [3, 1, 2], "fit_seconds": [4.0, 1.0, 2.0]}
    )
    frame = svm.curves(outcomes, traces)
    assert frame["seconds"].tolist() == [1.0, 3.0, 7.0]
    assert frame["test"].tolist() == pytest.approx([30.0, 20.0, 20.0])
    table = svm.summary(frame)
    assert table.loc[("d", "hyperband"), "fit seconds median"] == 7.0


# The seed's claims, each on data where it holds and where a plausible misreading of the seed
# (the signed correlation for |ρ|, the least exploratory bracket first, the two-layer share, the
# mean for the median, "at some t" for "at every t") would decide the other way.

RUNS = 5  # analysis.surrogates.claims.MIN_RUNS


def errors_with_spreads(mnist: dict[str, float], mrbi: dict[str, float]) -> pd.DataFrame:
    """``RUNS`` runs per method and part whose validation errors have the given std (n − 1)."""
    z = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    z = z / z.std(ddof=1)
    rows = []
    for part, spreads in (("mnist", mnist), ("mrbi", mrbi)):
        for method in data.SEED_ORDER:
            for r in range(RUNS):
                error = 10.0 + spreads.get(method, 1.0) * z[r]
                rows.append((part, "d", r, method, error, error))
    return pd.DataFrame(rows, columns=["part", "dataset", "repetition", "method", "valid", "test"])


def condition(claim_id: str, results: object) -> list[bool | None]:
    from analysis.surrogates.claims import CLAIMS

    (claim,) = [c for c in CLAIMS if c.id == claim_id]
    return [holds for _, holds in claim.evaluate(results).conditions]


def claim_id(function_name: str) -> str:
    from analysis.surrogates import claims

    (found,) = [c.id for c in claims.CLAIMS if c.evaluate is getattr(claims, function_name)]
    return found


def test_gp_spread_is_compared_with_the_median_spread_not_the_mean() -> None:
    # mrbi stds 3.5 (GP) and 1, 3, 4, 10: the median is 3.5 (GP is not below it), the mean 4.3
    spreads = {"GP": 3.5, "RANDOM": 1.0, "TPE": 3.0, "RF": 4.0, "HYPERBAND": 10.0}
    results = results_with(errors_with_spreads({"GP": 5.0}, spreads))
    assert condition(claim_id("gp_spread"), results) == [True, False]


def test_the_gp_spread_claim_reports_gp_s_std_and_the_median_std() -> None:
    # mrbi stds: GP 3.5 and 1, 3, 4, 10; sorted 1, 3, 3.5, 4, 10: the median 3.5
    spreads = {"GP": 3.5, "RANDOM": 1.0, "TPE": 3.0, "RF": 4.0, "HYPERBAND": 10.0}
    outcome = claims.gp_spread(results_with(errors_with_spreads({"GP": 5.0}, spreads)))
    _, mrbi = outcome.our_value.split("; ")
    assert mrbi == "mrbi: GP std 3.50, median of the methods 3.50"


def test_a_claim_on_both_datasets_reports_the_values_of_each() -> None:
    outcome = claims.hyperband_best(results_with(errors_where("HYPERBAND", RUNS)))
    mnist, mrbi = outcome.our_value.split("; ")
    assert mnist.startswith("mnist: ") and mrbi.startswith("mrbi: ")
    assert "HYPERBAND 5.20" in mnist and "HYPERBAND 5.20" in mrbi  # median of 5.0, ..., 5.4
    assert len(outcome.conditions) == 2


def traces_for(part: str, method: str, run: int, **columns: object) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    return pd.DataFrame(
        {"part": part, "method": method, "run_id": f"{method}-{part}-{run}",
         "iteration": range(1, n + 1), **columns}
    )  # fmt: skip


def test_tpe_correlation_is_the_absolute_rank_correlation() -> None:
    rng = np.random.default_rng(0)
    frames = []
    for part in ("mnist", "mrbi"):
        for r in range(RUNS):
            rate = rng.uniform(size=20)
            frames.append(
                traces_for(  # TPE: units fall as the rate rises, ρ = −1
                    part, "tpe", r, param_learning_rate=rate, param_units_1=100 - 50 * rate
                )
            )
            frames.append(traces_for(  # RANDOM: a weak positive correlation
                part, "rs", r, param_learning_rate=rate,
                param_units_1=rate + rng.uniform(0, 2, size=20)))  # fmt: skip
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.traces = pd.concat(frames, ignore_index=True)
    assert condition(claim_id("tpe_correlated"), results) == [True, True]


def test_the_tpe_claim_without_tpe_traces_is_not_evaluated() -> None:
    from analysis.claims import NOT_EVALUATED, run_claim

    results = results_with(errors_where("HYPERBAND", RUNS))
    results.traces = _mnist_random_search(2)  # MNIST: random search only, no TPE run yet
    (s8,) = [c for c in claims.CLAIMS if c.evaluate is claims.tpe_correlated]
    record = run_claim(s8, results)
    assert record.status == NOT_EVALUATED
    assert record.reason == "missing input: no mnist traces of ['TPE']"


def test_one_layer_share_counts_the_one_layer_networks() -> None:
    frames = []
    for method in ("skopt-gp", "tpe", "skopt-rf"):
        for r in range(RUNS):  # 7 of 10 one-layer, 3 two-layer
            second = ["False"] * 7 + ["True"] * 3
            frames.append(traces_for("mrbi", method, r, param_layer_2=second,
                                     param_layer_3=["False"] * 10))  # fmt: skip
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.traces = pd.concat(frames, ignore_index=True)
    assert condition(claim_id("one_layer_preferred"), results) == [True, True, True]


def test_the_one_layer_claim_reports_whole_percent_shares() -> None:
    frames = []
    for method in ("skopt-gp", "tpe", "skopt-rf"):
        for r in range(RUNS):  # 2 of 3 one-layer: 66.7 %, shown as 67
            frames.append(traces_for("mrbi", method, r, param_layer_2=["False", "False", "True"],
                                     param_layer_3=["False"] * 3))  # fmt: skip
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.traces = pd.concat(frames, ignore_index=True)
    outcome = claims.one_layer_preferred(results)
    assert outcome.our_value == "one-layer share: GP 67 %, TPE 67 %, RF 67 %"


def test_the_most_exploratory_bracket_is_the_one_with_most_configurations() -> None:
    # medians: n = 16 → 6.5, n = 6 → 8.0, n = 3 → 8.5 (the seed's Table 2.6 ordering)
    best = pd.DataFrame(
        [
            (f"r{r}", n, v + 0.01 * r)
            for r in range(RUNS)
            for n, v in ((16, 6.5), (6, 8.0), (3, 8.5))
        ],
        columns=["run_id", "configurations", "valid"],
    )
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.brackets = lambda part: best
    assert condition(claim_id("exploratory_bracket_best"), results) == [True]
    outcome = claims.exploratory_bracket_best(results)
    assert outcome.our_value == "n=16: 6.52, n=6: 8.02, n=3: 8.52"  # each bracket's median


def test_smbo_must_stay_at_or_below_random_at_every_later_iteration() -> None:
    from analysis.surrogates.claims import OVERTAKE_FROM

    iterations = np.arange(1, OVERTAKE_FROM + 11)
    rows = []
    for method, offset in (("RANDOM", 0.0), ("GP", -1.0), ("TPE", -1.0), ("RF", -1.0)):
        for r in range(RUNS):
            best = 20.0 - 0.1 * iterations + offset
            if method == "GP":
                best = np.where(iterations == OVERTAKE_FROM + 5, best + 5.0, best)  # one t above
            if method == "RF":  # level with RANDOM at one t: still "at or below"
                best = np.where(iterations == OVERTAKE_FROM + 3, best - offset, best)
            rows.append(pd.DataFrame({"part": "mrbi", "method": method, "run_id": f"{method}{r}",
                                      "iteration": iterations, "best": best}))  # fmt: skip
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.curves = pd.concat(rows, ignore_index=True)
    assert condition(claim_id("smbo_overtakes"), results) == [False, True, True]


# ----------------------------------------------- hand-computed: the best finished per bracket


def bracket_case() -> pd.DataFrame:
    """Three Hyperband runs on MNIST, max resource 8. Bracket 1: three configurations at 2
    epochs — one left unfinished with the lowest loss of all, one stopped early, one resumed to
    8; bracket 0: two configurations trained to 8."""
    rows = []
    # per run: unfinished loss, stopped early, resumed to 8, bracket 0's two
    for run, (unfinished, stopped, resumed, first, second) in enumerate(
        (
            (0.10, 0.40, 0.22, 0.25, 0.35),
            (0.05, 0.45, 0.18, 0.28, 0.21),
            (0.08, 0.29, 0.31, 0.215, 0.50),
        )
    ):
        configs = [  # bracket, u, asked, spent, loss
            (1, 0.1, 2, 2, unfinished),
            (1, 0.2, 2, 2, 0.60),
            (1, 0.3, 2, 1, stopped),
            (1, 0.2, 8, 6, resumed),
            (0, 0.4, 8, 8, first),
            (0, 0.5, 8, 8, second),
        ]
        for i, (bracket, u, asked, spent, loss) in enumerate(configs):
            rows.append({"run_id": f"r{run}", "part": "mnist", "method": "hyperband",
                         "n_fits": 1, "iteration": i + 1, "bracket": bracket, "u_x": u,
                         "resource": float(asked), "resource_spent": float(spent),
                         "valid_loss": loss, "param_layer_2": "False",
                         "param_layer_3": "False"})  # fmt: skip
    return pd.DataFrame(rows)


# Worked out by hand (§2.2.1.4, Fig 2.14: the best *finished* configuration of each bracket, in
# %): bracket 1 (3 configurations) min(stopped, resumed) per run = 22, 18, 29 (the unfinished
# 10, 5, 8 are not finished: asked 2 < 8, all 2 epochs spent); bracket 0 (2 configurations)
# = 25, 21, 21.5. Per bracket, most configurations first: median, mean, runs, the seed's median
# (MNIST, n = 3: 8.58); the box's quartiles (linear, three values: halfway) and whiskers.
HAND_BRACKETS = {
    3: {"bests": [22.0, 18.0, 29.0], "median": 22.0, "mean": 23.0, "seed": "8.58",
        "quartiles": (20.0, 25.5), "whiskers": (18.0, 29.0)},
    2: {"bests": [25.0, 21.0, 21.5], "median": 21.5, "mean": 22.5, "seed": MISSING,
        "quartiles": (21.25, 23.25), "whiskers": (21.0, 25.0)},
}  # fmt: skip


def test_the_bracket_section_shows_each_bracket_s_best_finished_configuration_by_hand(
    tmp_path: Path,
) -> None:
    """The per-bracket table, the figure's data and Fig 2.14 read back from its artists (tick
    labels, median and mean lines, box and whiskers) against :data:`HAND_BRACKETS`. Taking a
    bracket's best over every configuration (the unfinished ones' 10, 5, 8 %) or its worst
    finished one fails here."""
    from matplotlib import rcParams

    from analysis.render import FigureSet
    from analysis.surrogates import report

    results = results_with(errors_where("HYPERBAND", 3))
    results.configs = data.hyperband_configurations(bracket_case())
    written: dict[str, pd.DataFrame] = {}

    def write(frame: pd.DataFrame, name: str, *_: object) -> str:
        written[name] = frame
        return ""

    report.part_section(results, "mnist", write, FigureSet(tmp_path))
    table = written["surrogates_mnist_brackets"]
    assert list(table.index) == list(HAND_BRACKETS)
    for n, hand in HAND_BRACKETS.items():
        assert table.loc[n].to_dict() == {
            "median": f"{hand['median']:.2f}", "mean": f"{hand['mean']:.2f}", "runs": "3",
            "seed median": hand["seed"],
        }  # fmt: skip
    best = pd.read_csv(tmp_path / "tables" / "surrogates_mnist_brackets_best.csv")
    for n, hand in HAND_BRACKETS.items():
        by_run = best[best["configurations"] == n].sort_values("run_id", kind="stable")
        assert by_run["valid"].tolist() == pytest.approx(hand["bests"]), n
    figure = report.bracket_figure(results.brackets("mnist"), "MNIST")
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"n = {n}" for n in HAND_BRACKETS]
    for position, hand in zip(ax.get_xticks(), HAND_BRACKETS.values(), strict=True):
        mine = [line for line in ax.lines if _centre(line) == pytest.approx(position)]
        medians = _levels(mine, rcParams["boxplot.medianprops.color"], "-")
        means = _levels(mine, rcParams["boxplot.meanprops.color"], "--")
        assert (medians, means) == ([pytest.approx(hand["median"])], [pytest.approx(hand["mean"])])
        outline = next(line for line in mine if len(line.get_xdata()) == 5)
        box = (min(outline.get_ydata()), max(outline.get_ydata()))
        assert box == pytest.approx(hand["quartiles"])
        ends = [y for line in mine if len(set(line.get_xdata())) == 1 for y in line.get_ydata()]
        assert (min(ends), max(ends)) == pytest.approx(hand["whiskers"])


def _centre(line: Line2D) -> float:
    """The horizontal centre of a drawn line (NaN for an empty one: no fliers)."""
    x = np.asarray(line.get_xdata(), dtype=float)
    return (x.min() + x.max()) / 2 if x.size else np.nan


def _levels(lines: list[Line2D], colour: str, style: str) -> list[float]:
    """The heights of the horizontal lines of ``colour`` and ``style`` (a box's median, its
    mean)."""
    return [float(line.get_ydata()[0]) for line in lines
            if line.get_color() == colour and line.get_linestyle() == style]  # fmt: skip


# ------------------------------------------------- hand-computed: tables beside the seed's


def _seed_tsv(name: str) -> pd.DataFrame:
    """One of the seed's tables, read straight from its file."""
    return pd.read_csv(seed.TABLES_DIR / name, sep="\t")


def test_errors_beside_seed_puts_ours_above_the_seed_s_row_with_its_runs() -> None:
    from analysis.surrogates import report

    ours = pd.DataFrame(
        {"valid mean": [5.0], "valid median": [4.5], "valid std": [np.nan],
         "test mean": [6.25], "test median": [6.0], "test std": [0.5], "runs": [3]},
        index=["RANDOM"],
    )  # fmt: skip
    table = report.errors_beside_seed(ours, "mnist")
    seed_rows = _seed_tsv("table2.2_mnist_error.tsv").set_index("method")
    expected_index = ["RANDOM (ours)", "RANDOM (seed)"]
    expected_index += [f"{m} (seed)" for m in data.SEED_ORDER[1:] if m in seed_rows.index]
    assert list(table.index) == expected_index
    assert table.loc["RANDOM (ours)"].to_dict() == {
        "valid mean": "5.00", "valid median": "4.50", "valid std": MISSING,
        "test mean": "6.25", "test median": "6.00", "test std": "0.50", "runs": "3",
    }  # fmt: skip
    random = seed_rows.loc["RANDOM"]
    assert table.loc["RANDOM (seed)", "valid median"] == f"{random['val_median']:.2f}"
    assert table.loc["RANDOM (seed)", "runs"] == "10"  # the seed's 10 runs per method
    alone = report.errors_beside_seed(ours, "other")  # a part the seed did not run
    assert list(alone.index) == ["RANDOM (ours)"]


def test_shares_beside_seed_rounds_to_whole_percent_and_labels_layers() -> None:
    from analysis.surrogates import report

    index = pd.MultiIndex.from_tuples([("GP", 1), ("GP", 2)], names=["method", "layers"])
    ours = pd.DataFrame({"all iterations": [62.4, 37.6]}, index=index)
    reference = pd.DataFrame({"all iterations": [65.2, 16.0]}, index=index)
    table = report.shares_beside_seed(ours, reference)
    assert list(table.index) == ["GP, 1 layer", "GP, 2 layers"]
    assert table.to_dict(orient="list") == {
        "all iterations": ["62", "38"],
        "seed: all iterations": ["65", "16"],
    }


def test_ard_beside_seed_gives_the_seed_s_median_and_our_relevance_verdict() -> None:
    from analysis.surrogates import report

    seed_ard = _seed_tsv("table2.3_mnist_ard.tsv").set_index("hyperparameter")
    ours = pd.DataFrame(
        {"median 1/ℓ": [2.0, 0.5, 1.0], "q25": [1.0, 0.25, 0.5], "q75": [3.0, 0.75, 1.5]},
        index=pd.Index(["learning_rate", "decay", "not_in_the_seed"], name="hyperparameter"),
    )
    table = report.ard_beside_seed(ours)
    assert table["seed median 1/ℓ"].tolist() == [
        f"{seed_ard.loc['learning_rate', 'inverse_length_scale']:.2f}",
        f"{seed_ard.loc['decay', 'inverse_length_scale']:.2f}",
        MISSING,
    ]
    assert table["relevant (ours, 1/ℓ ≥ 1)"].tolist() == ["yes", "no", "yes"]  # 1/ℓ ≥ 1
    assert table["median 1/ℓ"].tolist() == ["2.00", "0.50", "1.00"]


# ------------------------------------------------------- hand-computed: figures and sections


def test_the_box_plots_are_labelled_by_method_in_the_seed_s_order() -> None:
    from analysis.surrogates import report

    errors = errors_where("GP", 3)
    figure = report.boxplot_figure(errors[errors["part"] == "mnist"], "MNIST")
    for ax in figure.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == list(data.SEED_ORDER)


def test_the_convergence_figure_has_two_panels_side_by_side_with_each_method_s_medians() -> None:
    from analysis.surrogates import report

    by_iteration = pd.DataFrame({"GP": [9.0, 8.0, 7.0], "RANDOM": [9.5, 9.0, 8.5]}, index=[1, 2, 3])
    by_epochs = pd.DataFrame({"GP": [9.0, 7.0], "RANDOM": [np.nan, 8.5]}, index=[2.0, 6.0])
    figure = report.convergence_figure(by_iteration, by_epochs, "MNIST")
    left, right = figure.axes
    assert left.get_position().y0 == pytest.approx(right.get_position().y0)
    assert left.get_position().x0 < right.get_position().x0
    lines = {line.get_label(): line for line in left.lines}
    assert list(lines) == ["RANDOM", "GP"]  # the seed's order
    assert lines["GP"].get_ydata().tolist() == [9.0, 8.0, 7.0]
    lines = {line.get_label(): line for line in right.lines}
    assert lines["RANDOM"].get_xdata().tolist() == [6.0]  # the NaN before it left out
    assert lines["GP"].get_ydata().tolist() == [9.0, 7.0]


def _curves_of_two_runs() -> pd.DataFrame:
    """GP on MNIST, two runs of three evaluations: best-so-far 10, 8, 8 and 12, 9, 6 (%),
    epochs 1, 2, 3 and 1, 3, 5."""
    rows = [
        ("g0", 1, 1.0, 10.0), ("g0", 2, 2.0, 8.0), ("g0", 3, 3.0, 8.0),
        ("g1", 1, 1.0, 12.0), ("g1", 2, 3.0, 9.0), ("g1", 3, 5.0, 6.0),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["run_id", "iteration", "epochs", "best"])
    return frame.assign(part="mnist", method="GP")


def test_the_part_section_writes_the_median_curve_by_iteration(tmp_path: Path) -> None:
    from analysis.render import FigureSet
    from analysis.surrogates import report

    results = results_with(errors_where("GP", 3))
    results.curves = _curves_of_two_runs()
    report.part_section(results, "mnist", lambda *_: "", FigureSet(tmp_path))
    saved = pd.read_csv(tmp_path / "tables" / "surrogates_mnist_convergence_iterations.csv")
    # medians of (10, 12), (8, 9), (8, 6)
    assert saved.set_index("iteration")["GP"].tolist() == pytest.approx([11.0, 8.5, 7.0])


def _mnist_random_search(runs: int, method: str = "rs") -> pd.DataFrame:
    """``runs`` × 4 evaluations of ``method`` on MNIST over the learning rate and the units."""
    rng = np.random.default_rng(1)
    u = rng.uniform(size=(4 * runs, 2))
    run_ids = np.repeat([f"{method}{r}" for r in range(runs)], 4)
    return pd.DataFrame(
        {"part": "mnist", "method": method, "run_id": run_ids,
         "iteration": np.tile(np.arange(1, 5), runs), "u_learning_rate": u[:, 0],
         "u_units_1": u[:, 1], "param_learning_rate": u[:, 0], "param_units_1": u[:, 1],
         "valid_loss": np.sin(3 * u[:, 0])}
    )  # fmt: skip


def test_the_ard_section_fits_the_random_search_runs_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from analysis.surrogates import report

    monkeypatch.setattr(ard, "relevance_table", lambda rows: _relevance_of(rows))
    results = results_with(errors_where("GP", 3))
    results.traces = pd.concat(
        [_mnist_random_search(2), _mnist_random_search(3, "tpe")], ignore_index=True
    )
    written: dict[str, pd.DataFrame] = {}

    def write(frame: pd.DataFrame, name: str, *_: object) -> str:
        written[name] = frame
        return ""

    text = report.ard_section(results, write)
    assert "of the 8 random-search configurations" in text  # 2 runs × 4, not tpe's 12
    assert written["surrogates_ard"]["median 1/ℓ"].tolist() == ["8.00", "8.00"]


def _relevance_of(rows: pd.DataFrame) -> pd.DataFrame:
    """A stand-in for the ARD fit: 1/ℓ = the number of rows fitted, for each hyperparameter."""
    names = pd.Index(["a", "b"], name="hyperparameter")
    n = float(len(rows))
    return pd.DataFrame({"median 1/ℓ": n, "q25": n, "q75": n}, index=names)


def test_the_layers_section_counts_mrbi_s_finished_hyperband_configurations_only() -> None:
    from analysis.surrogates import report

    results = results_with(errors_where("GP", 3))
    generated = traces_for("mrbi", "tpe", 0, param_layer_2=["False", "True"],
                           param_layer_3=["False", "False"])  # fmt: skip
    results.traces = generated
    # MRBI: one finished one-layer configuration; MNIST (not this table): two two-layer ones
    results.configs = pd.DataFrame(
        {"part": ["mrbi", "mnist", "mnist"], "run_id": ["a", "b", "b"], "bracket": [0, 0, 0],
         "finished": True, "layers": [1, 2, 2]}
    )  # fmt: skip
    written: dict[str, pd.DataFrame] = {}

    def write(frame: pd.DataFrame, name: str, *_: object) -> str:
        written[name] = frame
        return f"<{name}>"

    text = report.layers_section(results, write)
    assert text == (
        "## Tables 2.5–2.6: number of hidden layers (MRBI)\n\nThe prior is 50/25/25 %.\n\n"
        "<surrogates_layers_generated>\n<surrogates_layers_finished>"
    )
    generated_table = written["surrogates_layers_generated"]
    assert generated_table.loc["TPE, 1 layer", "all iterations"] == "50"  # 1 of 2
    assert generated_table.loc["TPE, 1 layer", "seed: all iterations"] == "71"  # Table 2.5
    finished = written["surrogates_layers_finished"]
    assert finished.loc["HYPERBAND, 1 layer", "all brackets"] == "100"  # 1 of 1, MRBI's
    assert finished.loc["HYPERBAND, 2 layers", "all brackets"] == "0"


def test_the_report_sections_end_with_the_claims_tally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.plugins import ReportContext
    from analysis.surrogates import report

    monkeypatch.setattr(ard, "relevance_table", lambda rows: _relevance_of(rows))
    results = results_with(errors_where("HYPERBAND", RUNS))
    results.traces = pd.concat(
        [_mnist_random_search(2), _mnist_random_search(3, "tpe")], ignore_index=True
    )
    monkeypatch.setattr(report, "Results", lambda context: results)
    written: dict[str, pd.DataFrame] = {}

    def write(frame: pd.DataFrame, name: str, *_: object) -> str:
        written[name] = frame
        return f"<{name}>"

    context = ReportContext(tmp_path, pd.DataFrame(), tmp_path, write)
    out = report.sections(context)
    assert "<surrogates_ard>" in out[-4]
    # S1 (Hyperband's lowest medians) is decided on 5 runs; the traces' claims are not
    records = {c.id: run_claim_status(c, results) for c in claims.CLAIMS}
    reproduced = sum(s == "reproduced" for s in records.values())
    assert f"{reproduced} reproduced" in out[-1]
    assert list(written["surrogates_claims"].index) == [c.id for c in claims.CLAIMS]


def run_claim_status(claim: object, results: object) -> str:
    from analysis.claims import run_claim

    return run_claim(claim, results).status
