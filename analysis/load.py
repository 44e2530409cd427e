"""Results → analysis inputs: outcome rows, per-dataset score tables, curves and dataset sizes.

Owns the step from the results files (README, "Results") to the tables ``analysis.stats`` reads:

* :func:`load_outcomes` reads a consolidated folder (``outcomes.parquet``) or a sweep folder (its
  ``consolidated/`` when that is newer than every run file, else its ``runs/<part>/…`` files,
  merged in memory as ``experiments.sweep.consolidate`` would);
* :func:`final_outcomes` keeps each run's last iteration per method — the thesis's final model;
* :func:`per_dataset_errors` and :func:`score_tables`: test error in % of that final model,
  mean (and std) over repetitions, one table per (protocol, part) [spec ch2-3 §3.1];
* :func:`iteration_errors`, :func:`rank_curves`: the per-iteration errors and ranks of Fig 3.3
  [spec §3.7, §7.13, §7.19]; :func:`gp_holdout_curves`: the incumbent's validation and test error
  of ``gp`` with hold-out (Fig 3.1, claim C3.14);
* :func:`dataset_sizes`: |D_TVS| from the catalog, by the rule of ``hpo.protocol`` [spec §3.8].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from analysis import stats
from analysis.claims import MAIN_METHODS, PM_METHODS, SIZE_BIN_EDGES
from hpo.datasets import catalog
from hpo.protocol import ProtocolSettings

OUTCOME_COLUMNS = (
    "run_id", "method", "dataset", "protocol", "part", "repetition", "iteration", "budget",
    "incumbent_valid_loss", "incumbent_selection_loss", "test_error", "test_fit_limit_hit",
)  # fmt: skip
PROTOCOLS = ("holdout", "cv5")
PROTOCOL_LABELS = {"holdout": "hold-out", "cv5": "5-fold"}
# The thesis's methods, each -pm after its run's method (Table 3.5's order); others follow.
THESIS_METHODS = (
    "grid", "rs", "gp", "gp-pm", "gp-sel", "gp-r", "gp-pm-r", "gp-sel-r", "cma", "cma-pv",
    "cma-bw", "cma-gv", "cma-r", "cma-pv-r", "cma-bw-r", "cma-gv-r",
)  # fmt: skip
RANK_STEP = 6  # ranks only where every method has an incumbent: t = 6k and the last t [§3.7]

ScoreKey = tuple[str, str]  # (protocol, part)


# ----------------------------------------------------------------------------------- reading


def _read_columns(path: Path, wanted: tuple[str, ...], row_type: str | None) -> pd.DataFrame:
    present = set(pq.read_schema(path).names)
    columns = [c for c in wanted if c in present]
    if row_type is not None:
        frame = pd.read_parquet(path, columns=[*columns, "row_type"])
        return frame[frame["row_type"] == row_type].drop(columns="row_type")
    return pd.read_parquet(path, columns=columns)


def _run_files(runs_dir: Path) -> list[Path]:
    return sorted(runs_dir.glob("*/*/*.parquet"))


def _consolidated_is_current(folder: Path) -> bool:
    consolidated = folder / "consolidated" / "outcomes.parquet"
    if not consolidated.is_file():
        return False
    newest_run = max((p.stat().st_mtime for p in _run_files(folder / "runs")), default=0.0)
    return consolidated.stat().st_mtime >= newest_run


def _from_runs(runs_dir: Path) -> pd.DataFrame:
    """Outcome rows of every finished run under ``runs_dir/<part>/<dataset>/``, with ``part``."""
    frames = [
        _read_columns(path, OUTCOME_COLUMNS, "outcome").assign(part=path.parents[1].name)
        for path in _run_files(runs_dir)
    ]
    if not frames:
        raise FileNotFoundError(f"no finished runs under {runs_dir}")
    return pd.concat(frames, ignore_index=True)


def load_outcomes(folder: str | Path) -> pd.DataFrame:
    """Outcome rows (columns :data:`OUTCOME_COLUMNS` that exist) of a results folder.

    ``folder``: a consolidated folder holding ``outcomes.parquet``, or a sweep folder
    (``results/<experiment>/<profile>``) holding ``consolidated/`` and/or ``runs/``.
    ``test_error`` stays a fraction, as in the results files.
    """
    folder = Path(folder)
    if (folder / "outcomes.parquet").is_file():
        frame = _read_columns(folder / "outcomes.parquet", OUTCOME_COLUMNS, None)
    elif _consolidated_is_current(folder):
        frame = _read_columns(folder / "consolidated" / "outcomes.parquet", OUTCOME_COLUMNS, None)
    elif (folder / "runs").is_dir():
        frame = _from_runs(folder / "runs")
    else:
        raise FileNotFoundError(
            f"{folder} holds neither outcomes.parquet, consolidated/outcomes.parquet nor runs/"
        )
    if "part" not in frame.columns:
        frame["part"] = "main"
    types = {"iteration": "int64", "repetition": "int64", "part": "string"}
    return frame.astype(types).reset_index(drop=True)


def default_report_dir(folder: str | Path) -> Path:
    """``<sweep>/report`` for a sweep folder or its ``consolidated/``; else ``<folder>/report``."""
    folder = Path(folder)
    if folder.name == "consolidated":
        folder = folder.parent
    return folder / "report"


# ------------------------------------------------------------------------------ score tables


def method_order(methods: pd.Index | list[str]) -> list[str]:
    """Thesis methods in the thesis's order, then any other method alphabetically."""
    known = [m for m in THESIS_METHODS if m in set(methods)]
    return known + sorted(set(methods) - set(THESIS_METHODS))


def final_outcomes(outcomes: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, method): the incumbent after the run's last evaluation."""
    last = outcomes.groupby(["run_id", "method"], sort=False)["iteration"].transform("max")
    return outcomes[outcomes["iteration"] == last]


def per_dataset_errors(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Final test error in % per (protocol, part, dataset, method): mean, std, repetitions.

    ``std`` is over repetitions with ``ddof=0`` (NaN-free with one repetition).
    """
    final = final_outcomes(outcomes).assign(error=lambda f: 100.0 * f["test_error"])
    grouped = final.groupby(["protocol", "part", "dataset", "method"])["error"]
    return pd.DataFrame(
        {"mean": grouped.mean(), "std": grouped.std(ddof=0), "repetitions": grouped.size()}
    )


def _pivot(errors: pd.DataFrame, key: ScoreKey, column: str) -> pd.DataFrame:
    table = errors.loc[key, column].unstack("method")
    return table[method_order(table.columns)].rename_axis(columns=None)


def score_tables(errors: pd.DataFrame, column: str = "mean") -> dict[ScoreKey, pd.DataFrame]:
    """``{(protocol, part): datasets × methods}`` of ``column`` of :func:`per_dataset_errors`.

    With the default ``"mean"``: the score tables of ``analysis.stats`` (NaN where a method has
    no finished run on a dataset).
    """
    keys = errors.index.droplevel(["dataset", "method"]).unique()
    return {key: _pivot(errors, key, column) for key in keys}


def complete(scores: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``scores`` without all-missing methods and without datasets that still miss a score.

    Returns the table and the datasets dropped, so a report can say what it left out.
    """
    present = scores.dropna(axis=1, how="all")
    incomplete = present.index[present.isna().any(axis=1)]
    return present.drop(index=incomplete), list(incomplete)


def thesis_experiment_tables(
    tables: dict[ScoreKey, pd.DataFrame],
) -> dict[ScoreKey, pd.DataFrame]:
    """Score tables of the thesis's two experiments, keyed (protocol, "main" | "pm").

    ``main``: the Table 3.1 methods of part ``main``. ``pm``: the Table 3.5 methods of part
    ``pm``, or of part ``main`` when the results have no ``pm`` part (e.g. the ``medium``
    profile runs gp-pm and gp-pm-r within ``main``). Tables with fewer than 2 methods are left out.
    """
    selected = {}
    for protocol in PROTOCOLS:
        for experiment, methods in (("main", MAIN_METHODS), ("pm", PM_METHODS)):
            source = tables.get((protocol, experiment))
            if source is None and experiment == "pm":
                source = tables.get((protocol, "main"))
            if source is None:
                continue
            columns = [m for m in methods if m in source.columns]
            if len(columns) >= 2:
                selected[(protocol, experiment)] = source[columns]
    return selected


# ------------------------------------------------------------------------------------- curves


def iteration_errors(outcomes: pd.DataFrame, protocol: str, part: str) -> pd.DataFrame:
    """Mean over repetitions of the incumbent's test error in %: (dataset, iteration) × method.

    Each method has rows only at its own iterations (CMA-ES: t = 6k and the last).
    """
    rows = outcomes[(outcomes["protocol"] == protocol) & (outcomes["part"] == part)]
    means = rows.groupby(["dataset", "iteration", "method"])["test_error"].mean().mul(100.0)
    table = means.unstack("method")
    return table[method_order(table.columns)].rename_axis(columns=None)


def rank_iterations(budget: int) -> list[int]:
    """Multiples of 6 up to ``budget``, and ``budget`` itself."""
    return sorted({*range(RANK_STEP, budget + 1, RANK_STEP), budget})


def _carried_forward(errors: pd.DataFrame, iterations: list[int]) -> dict[int, pd.DataFrame]:
    """Per iteration t, datasets × methods of the last incumbent at or before t.

    A method that stopped early (the grid runs ⌊√budget⌋² evaluations) keeps its final choice.
    """
    by_dataset = {
        dataset: block.droplevel("dataset")
        .reindex(sorted({*block.index.get_level_values("iteration"), *iterations}))
        .ffill()
        for dataset, block in errors.groupby(level="dataset")
    }
    return {t: pd.DataFrame({d: b.loc[t] for d, b in by_dataset.items()}).T for t in iterations}


def rank_curves(errors: pd.DataFrame, budget: int) -> pd.DataFrame:
    """Average rank (over datasets, among all methods of ``errors``) at :func:`rank_iterations`.

    Datasets without a score for every method at t are left out at that t.
    """
    iterations = rank_iterations(budget)
    curves = {}
    for t, scores in _carried_forward(errors, iterations).items():
        kept, _ = complete(scores)
        if len(kept) and kept.shape[1] >= 2:
            curves[t] = stats.average_ranks(kept)
    return pd.DataFrame(curves).T.rename_axis("iteration")


def gp_holdout_curves(outcomes: pd.DataFrame, part: str = "main") -> pd.DataFrame:
    """``gp`` with hold-out: mean over repetitions of the incumbent's errors in %.

    Columns: dataset, iteration, test_error, valid_error (the input of claim C3.14 and Fig 3.1).
    """
    rows = outcomes[
        (outcomes["method"] == "gp")
        & (outcomes["protocol"] == "holdout")
        & (outcomes["part"] == part)
    ]
    means = rows.groupby(["dataset", "iteration"])[["test_error", "incumbent_valid_loss"]].mean()
    return means.mul(100.0).rename(columns={"incumbent_valid_loss": "valid_error"}).reset_index()


# -------------------------------------------------------------------------------- dataset size


def dataset_sizes(datasets: list[str] | pd.Index) -> pd.Series:
    """|D_TVS| per dataset: the training file's rows when the collection ships a test file,
    else ``n − round(test_frac · n)`` as ``hpo.protocol`` splits it. NaN for unknown names."""
    table = catalog()
    test_frac = ProtocolSettings().test_frac
    sizes = {}
    for name in datasets:
        if name not in table.index:
            sizes[name] = np.nan
            continue
        n_rows = int(table.loc[name, "n_rows"])
        predefined = table.loc[name, "predefined_test"] == "yes"
        sizes[name] = n_rows if predefined else n_rows - int(round(test_frac * n_rows))
    return pd.Series(sizes, name="size_tvs", dtype=float)


def ranks_by_size_bin(
    scores: pd.DataFrame, sizes: pd.Series, labels: tuple[str, ...]
) -> tuple[pd.DataFrame, pd.Series]:
    """Average per-dataset rank (among all methods of ``scores``) per Fig 3.4 |D_TVS| bin.

    Returns (bins × methods, datasets per bin); bins are ``analysis.claims.SIZE_BIN_EDGES``
    (right-closed) named by ``labels``. Datasets of unknown size are left out.
    """
    bins = pd.cut(sizes.reindex(scores.index), SIZE_BIN_EDGES, right=True, labels=list(labels))
    grouped = stats.per_dataset_ranks(scores).groupby(bins, observed=False)
    return grouped.mean(), grouped.size()
