"""What the seed-002 report reads: the final incumbent of every run, best-so-far curves against
evaluations and against epochs, the layer counts of generated configurations, and the
configurations that *finished* under Hyperband (Jůzlová 2018, §2.2).

Methods and their names in the seed: ``rs`` → RANDOM, ``skopt-gp`` → GP, ``tpe`` → TPE,
``skopt-rf`` → RF, ``hyperband`` → HYPERBAND. Parts: ``mnist`` (Table 2.2, space ``ffnn_mnist``)
and ``mrbi`` (Table 2.4, ``ffnn_mrbi``). Errors are in %.

A Hyperband configuration *finished* its evaluation (the seed's Table 2.6 and Fig 2.14) when it
was trained up to its bracket's largest resource or stopped early: its epochs spent, summed over
its evaluations (each resumes the last), fall short of the largest resource it was asked for
(times its fits, one per fold).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import load

SEED_NAMES = {
    "rs": "RANDOM",
    "skopt-gp": "GP",
    "tpe": "TPE",
    "skopt-rf": "RF",
    "hyperband": "HYPERBAND",
}
SEED_ORDER = ("RANDOM", "GP", "TPE", "RF", "HYPERBAND")
MODEL_BASED = ("GP", "TPE", "RF")
# part -> (label, the seed's table of errors)
PARTS = {"mnist": ("MNIST", "Table 2.2"), "mrbi": ("MRBI", "Table 2.4")}
LAST_ITERATIONS = 10  # Table 2.5's "last 10 iterations"
FIRST_BRACKETS = 3  # Table 2.6's "first 3 brackets"


def seed_names(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the five methods, with ``method`` in the seed's spelling."""
    rows = frame[frame["method"].isin(list(SEED_NAMES))].copy()
    rows["method"] = rows["method"].map(SEED_NAMES)
    return rows


def final_errors(outcomes: pd.DataFrame) -> pd.DataFrame:
    """``part, dataset, repetition, method, valid, test``: each run's final incumbent, in %."""
    final = seed_names(load.final_outcomes(outcomes))
    return pd.DataFrame(
        {
            "part": final["part"].astype(str).to_numpy(),
            "dataset": final["dataset"].astype(str).to_numpy(),
            "repetition": final["repetition"].to_numpy(),
            "method": final["method"].to_numpy(),
            "valid": 100 * final["incumbent_valid_loss"].to_numpy(dtype=float),
            "test": 100 * final["test_error"].to_numpy(dtype=float),
        }
    )


def error_summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Per method (the seed's order): mean, median and std (n − 1) of the validation and test
    error of the configuration found, as Tables 2.2 and 2.4."""
    stats = {}
    for column in ("valid", "test"):
        grouped = errors.groupby("method")[column]
        stats[f"{column} mean"] = grouped.mean()
        stats[f"{column} median"] = grouped.median()
        stats[f"{column} std"] = grouped.std()
    stats["runs"] = errors.groupby("method").size()
    table = pd.DataFrame(stats)
    return table.reindex([m for m in SEED_ORDER if m in table.index])


# ------------------------------------------------------------------------------------ traces


def _run_order(traces: pd.DataFrame) -> pd.DataFrame:
    return traces.sort_values(["run_id", "iteration"], kind="stable")


def best_so_far(traces: pd.DataFrame) -> pd.DataFrame:
    """``part, method, run_id, iteration, epochs, best``: the best validation error (%) after
    each evaluation, and the run's cumulative epochs (``resource_cumulative``) at that point."""
    rows = _run_order(seed_names(traces))
    best = 100 * rows.groupby("run_id", sort=False)["valid_loss"].cummin()
    epochs = rows.get("resource_cumulative", np.nan)
    return pd.DataFrame(
        {
            "part": rows["part"].astype(str),
            "method": rows["method"],
            "run_id": rows["run_id"],
            "iteration": rows["iteration"],
            "epochs": epochs,
            "best": best,
        }
    ).reset_index(drop=True)


def median_by_iteration(curves: pd.DataFrame) -> pd.DataFrame:
    """Iteration × method: the median over runs of the best-so-far error (Figs 2.3/2.10)."""
    return curves.pivot_table(index="iteration", columns="method", values="best", aggfunc="median")


def median_by_epochs(curves: pd.DataFrame, points: int = 60) -> pd.DataFrame:
    """Epochs (a log grid up to the largest run's total) × method: the median over a method's
    runs of the best-so-far error after that many epochs, where every run has started."""
    spent = curves["epochs"].dropna()
    if spent.empty or spent.max() <= 0:
        return pd.DataFrame()
    grid = np.unique(np.geomspace(max(1.0, spent[spent > 0].min()), spent.max(), points).round())
    columns = {}
    for method, frame in curves.groupby("method"):
        values = []
        for _, run in frame.groupby("run_id"):
            at = np.searchsorted(run["epochs"].to_numpy(), grid, side="right") - 1
            best = run["best"].to_numpy()
            values.append(np.where(at >= 0, best[np.maximum(at, 0)], np.nan))
        stacked = np.vstack(values)
        complete = ~np.isnan(stacked).any(axis=0)
        median = np.full(len(grid), np.nan)
        median[complete] = np.median(stacked[:, complete], axis=0)
        columns[method] = median
    return pd.DataFrame(columns, index=pd.Index(grid, name="epochs"))


def layers(traces: pd.DataFrame) -> pd.Series:
    """Hidden layers of each evaluated configuration (1–3, from the "next layer exists" flags;
    1 where the space has none)."""

    def flag(name: str) -> np.ndarray:
        if name not in traces:
            return np.zeros(len(traces), dtype=bool)
        return traces[name].astype("string").fillna("False").eq("True").to_numpy()

    second = flag("param_layer_2")
    third = second & flag("param_layer_3")
    return pd.Series(1 + second.astype(int) + third.astype(int), index=traces.index)


def layer_shares(frame: pd.DataFrame, groups: dict[str, pd.Series]) -> pd.DataFrame:
    """Rows (method, layers), one column per group (a boolean mask of ``frame``): the share in %
    of the configurations with 1, 2 and 3 layers."""
    columns = {}
    for name, mask in groups.items():
        chosen = frame[mask]
        counts = chosen.groupby(["method", "layers"]).size()
        totals = counts.groupby(level="method").transform("sum")
        columns[name] = 100 * counts / totals
    table = pd.DataFrame(columns)
    full = pd.MultiIndex.from_product([SEED_ORDER, [1, 2, 3]], names=["method", "layers"])
    present = [key for key in full if key[0] in table.index.get_level_values(0)]
    return table.reindex(present).fillna(0.0)


def generated_layers(traces: pd.DataFrame) -> pd.DataFrame:
    """Table 2.5: the model-free and model-based methods' shares of 1-, 2- and 3-layer
    configurations over all iterations and over each run's last :data:`LAST_ITERATIONS`."""
    rows = _run_order(seed_names(traces))
    rows = rows[rows["method"] != "HYPERBAND"].assign(layers=layers(rows))
    last = rows.groupby("run_id")["iteration"].transform("max")
    return layer_shares(
        rows,
        {
            "all iterations": pd.Series(True, index=rows.index),
            f"last {LAST_ITERATIONS} iterations": rows["iteration"] > last - LAST_ITERATIONS,
        },
    )


def hyperband_configurations(traces: pd.DataFrame) -> pd.DataFrame:
    """One row per Hyperband configuration of each run and bracket: ``part, run_id, bracket,
    configurations`` (the bracket's first rung), ``valid`` (its last validation error, %),
    ``asked`` (largest resource asked), ``finished`` (module docstring), ``layers``."""
    rows = _run_order(traces[traces["method"] == "hyperband"])
    if rows.empty:
        return pd.DataFrame()
    unit = sorted(c for c in rows.columns if c.startswith("u_"))
    coordinates = rows[unit].fillna(-1.0).round(12)  # another part's space: NaN columns
    rows = rows.assign(
        key=pd.util.hash_pandas_object(coordinates, index=False).to_numpy(), layers=layers(rows)
    )
    grouped = rows.groupby(["part", "run_id", "bracket", "key"], sort=False)
    configs = grouped.agg(
        valid=("valid_loss", "last"),
        asked=("resource", "max"),
        spent=("resource_spent", "sum"),
        fits=("n_fits", "last"),
        layers=("layers", "first"),
    ).reset_index()
    largest = configs.groupby(["run_id", "bracket"])["asked"].transform("max")
    top = configs.groupby("run_id")["asked"].transform("max")
    stopped = configs["spent"] < configs["asked"] * configs["fits"] - 1e-9
    configs["finished"] = (configs["asked"] >= top - 1e-9) | stopped
    configs["valid"] *= 100
    configs["configurations"] = configs.groupby(["run_id", "bracket"])["key"].transform("size")
    configs["bracket_top"] = configs["asked"] >= largest - 1e-9
    return configs.drop(columns=["key", "spent", "fits"])


def best_finished_per_bracket(configs: pd.DataFrame) -> pd.DataFrame:
    """``part, run_id, bracket, configurations, valid``: the best validation error (%) among
    each bracket's finished configurations (Fig 2.14)."""
    finished = configs[configs["finished"]]
    keys = ["part", "run_id", "bracket", "configurations"]
    return finished.groupby(keys, as_index=False)["valid"].min()


def finished_layers(configs: pd.DataFrame) -> pd.DataFrame:
    """Table 2.6: Hyperband's shares of 1-, 2- and 3-layer configurations among those that
    finished, over all brackets and the first :data:`FIRST_BRACKETS` (the most exploratory)."""
    finished = configs[configs["finished"]].assign(method="HYPERBAND")
    top = finished.groupby("run_id")["bracket"].transform("max")
    return layer_shares(
        finished,
        {
            "all brackets": pd.Series(True, index=finished.index),
            f"first {FIRST_BRACKETS} brackets": finished["bracket"] > top - FIRST_BRACKETS,
        },
    )
