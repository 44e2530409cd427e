"""Results → analysis inputs: outcome rows, per-dataset score tables, curves and dataset sizes.

Owns the step from the results files (README, "Results") to the tables ``analysis.stats`` reads:

* :func:`load_outcomes` reads a consolidated folder (``outcomes.parquet``) or a sweep folder (its
  ``consolidated/`` when that is newer than every run file, else its ``runs/<part>/…`` files,
  merged in memory as the sweep's consolidation would; run files at any depth under ``runs/``;
  a file that cannot be read is named in a warning, skipped, and listed in
  ``frame.attrs[UNREADABLE]`` so that the report can say how many were left out);
* :func:`final_outcomes` keeps each run's last iteration per method — the thesis's final model;
* :func:`per_dataset_errors` and :func:`score_tables`: test error in % of that final model,
  mean (and std) over repetitions, one table per (protocol, part) [thesis §3.3.1];
* :func:`iteration_errors`, :func:`rank_curves`: the per-iteration errors and ranks of Fig 3.3
  (thesis §3.3.1, Fig 3.3);
* :func:`dataset_sizes`: |D_TVS| from the catalog, by the rule of ``hpo.evaluation.protocol``
  [thesis §3.3.2, Fig 3.4].
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis import stats
from hpo.data.catalog import catalog
from hpo.evaluation.protocol import ProtocolSettings
from runfiles import layout

OUTCOME_COLUMNS = (
    "run_id", "method", "dataset", "protocol", "part", "repetition", "iteration", "budget",
    "incumbent_valid_loss", "incumbent_selection_loss", "test_error", "test_fit_limit_hit",
    "experiment", "git_revision", "versions", "run_seconds", "finished_at",
    "space", "learner", "n_members", "members", "distinct_valid_losses", "method_hash",
)  # fmt: skip
NAME_COLUMNS = (
    "run_id", "method", "dataset", "protocol", "part", "experiment", "space", "learner",
)  # fmt: skip
UNREADABLE = "unreadable_files"  # ``DataFrame.attrs`` key: results files skipped, with the error
PROTOCOLS = ("holdout", "cv5")
PROTOCOL_LABELS = {"holdout": "hold-out", "cv5": "5-fold"}
# The thesis's methods, each -pm after its run's method (Table 3.5's order); others follow.
THESIS_METHODS = (
    "grid", "rs", "gp", "gp-pm", "gp-sel", "gp-r", "gp-pm-r", "gp-sel-r", "cma", "cma-pv",
    "cma-bw", "cma-gv", "cma-r", "cma-pv-r", "cma-bw-r", "cma-gv-r",
)  # fmt: skip
RANK_STEP = (
    6  # ranks only where every method has an incumbent: t = 6k and the last t [thesis §3.3.1]
)

ScoreKey = tuple[str, str]  # (protocol, part)


# ----------------------------------------------------------------------------------- reading


# Provenance strings repeated on every row of a run (the ``versions`` JSON alone is ~300 bytes):
# read as categoricals, one copy per distinct value (a paper-scale result set).
REPEATED_STRINGS = ("versions", "git_revision", "finished_at")


def _read_columns(
    path: Path, wanted: tuple[str, ...], row_type: str | None, as_categories: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Columns ``wanted`` (those present) of one parquet file, the rows of ``row_type`` (all when
    None); the :data:`REPEATED_STRINGS` and ``as_categories`` come as categoricals straight from
    the file's dictionary pages, without building one Python-visible string per row."""
    present = set(pq.read_schema(path).names)
    columns = [c for c in wanted if c in present]
    table = pq.read_table(
        path,
        columns=columns,
        filters=None if row_type is None else [("row_type", "==", row_type)],
        read_dictionary=[c for c in (*REPEATED_STRINGS, *as_categories) if c in columns],
    )
    frame = table.to_pandas()
    for column in as_categories:  # the file's order of appearance → sorted, as ``astype`` gives
        if column in frame.columns:
            frame[column] = frame[column].cat.reorder_categories(
                frame[column].cat.categories.sort_values()
            )
    return frame


def _run_files(runs_dir: Path) -> list[Path]:
    """Every run file under ``runs_dir``, at any depth (``<part>/<dataset>/`` or ``<dataset>/``),
    without the predictions sidecars (:func:`runfiles.layout.run_files`)."""
    return layout.run_files(runs_dir)


def _part_of(path: Path, runs_dir: Path) -> str:
    """``runs/<part>/<dataset>/file``: ``<part>``; a layout without a part level: ``main``."""
    folders = path.relative_to(runs_dir).parts[:-1]
    return folders[0] if len(folders) >= 2 else "main"


def _read_run(path: Path, runs_dir: Path, unreadable: dict[str, str]) -> pd.DataFrame | None:
    """The run's outcome rows, or None (and a warning naming the file) when it cannot be read."""
    try:
        frame = _read_columns(path, OUTCOME_COLUMNS, "outcome")
    except (OSError, ValueError, pa.ArrowException) as error:  # truncated or not parquet
        unreadable[str(path)] = f"{type(error).__name__}: {error}"
        warnings.warn(f"skipping unreadable results file {path}: {error}", stacklevel=2)
        return None
    return frame.assign(part=_part_of(path, runs_dir))


def _consolidated_is_current(folder: Path) -> bool:
    consolidated = folder / layout.CONSOLIDATED / "outcomes.parquet"
    if not consolidated.is_file():
        return False
    newest_run = max((p.stat().st_mtime for p in _run_files(folder / layout.RUNS)), default=0.0)
    return consolidated.stat().st_mtime >= newest_run


def _from_runs(runs_dir: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """Outcome rows of every readable run file under ``runs_dir``, with ``part``; and the
    unreadable files (path → error)."""
    unreadable: dict[str, str] = {}
    frames = [_read_run(path, runs_dir, unreadable) for path in _run_files(runs_dir)]
    frames = [frame for frame in frames if frame is not None]
    if not frames:
        skipped = f" ({len(unreadable)} unreadable files skipped)" if unreadable else ""
        raise FileNotFoundError(f"no finished runs under {runs_dir}{skipped}")
    return pd.concat(frames, ignore_index=True), unreadable


def load_outcomes(folder: str | Path, categorical_names: bool = False) -> pd.DataFrame:
    """Outcome rows (columns :data:`OUTCOME_COLUMNS` that exist) of a results folder.

    ``folder``: a consolidated folder holding ``outcomes.parquet``, or a sweep folder
    (``results/<experiment>/<profile>``) holding ``consolidated/`` and/or ``runs/``.
    ``test_error`` stays a fraction, as in the results files. ``categorical_names``: the
    :data:`NAME_COLUMNS` as categoricals (:func:`with_categorical_names`), read as such from a
    consolidated file (a third of a paper-scale report's reading time otherwise).
    """
    folder = Path(folder)
    unreadable: dict[str, str] = {}
    as_categories = NAME_COLUMNS if categorical_names else ()
    if (folder / "outcomes.parquet").is_file():
        frame = _read_columns(folder / "outcomes.parquet", OUTCOME_COLUMNS, None, as_categories)
    elif _consolidated_is_current(folder):
        consolidated = folder / layout.CONSOLIDATED / "outcomes.parquet"
        frame = _read_columns(consolidated, OUTCOME_COLUMNS, None, as_categories)
    elif (folder / layout.RUNS).is_dir():
        frame, unreadable = _from_runs(folder / layout.RUNS)
    else:
        raise FileNotFoundError(
            f"{folder} holds neither outcomes.parquet, consolidated/outcomes.parquet nor runs/"
        )
    if "part" not in frame.columns:
        frame["part"] = "main"
    types = {"iteration": "int64", "repetition": "int64"}
    if not categorical_names:
        types["part"] = "string"
    frame = frame.astype(types).reset_index(drop=True)
    if categorical_names:  # run files, read one by one, concatenate as plain strings
        frame = with_categorical_names(frame)
    frame.attrs[UNREADABLE] = unreadable
    check_one_method_per_label(frame)
    return frame


class PooledLabelError(ValueError):
    """One label names runs of different methods (other settings or outside code)."""


def check_one_method_per_label(outcomes: pd.DataFrame) -> None:
    """Refuse, in one line, outcomes where one method label on one (dataset, space, protocol,
    part) covers runs of different methods (``method_hash``: their optimizer, settings, outside
    code or method flags differ), which every statistic would pool as one method. Runs written
    before the column existed are not checked."""
    if "method_hash" not in outcomes.columns:
        return
    keys = [c for c in ("method", "dataset", "space", "protocol", "part") if c in outcomes.columns]
    known = outcomes.dropna(subset=["method_hash"])
    if known.empty:
        return
    groups = known.groupby(keys, observed=True, sort=True)["method_hash"]
    counts = groups.nunique()
    pooled = counts[counts > 1]
    if pooled.empty:
        return
    where = dict(zip(keys, pooled.index[0], strict=True))
    hashes = sorted(groups.get_group(pooled.index[0]).astype(str).unique())
    raise PooledLabelError(
        f"label {where['method']!r} names {len(hashes)} different methods on dataset "
        f"{where.get('dataset')!r} (method hashes {', '.join(hashes)}: their settings or outside "
        "code differ) and would be pooled as one; rerun them so that each has its own label (an "
        "override of optimizer.settings now names it, e.g. smac[facade=RandomFacade]) or name "
        "each with optimizer.label=NAME, or analyse their folders apart"
    )


def load_traces(folder: str | Path) -> pd.DataFrame:
    """Trace rows (one per evaluation, every column but the repeated provenance strings) of a
    sweep folder: its ``consolidated/traces.parquet`` when current, else its run files, with
    ``part``. Empty when the folder has neither (a consolidated folder of outcomes only)."""
    folder = Path(folder)
    consolidated = folder / layout.CONSOLIDATED / "traces.parquet"
    if (folder / "traces.parquet").is_file():
        frames = [pd.read_parquet(folder / "traces.parquet")]
    elif _consolidated_is_current(folder) and consolidated.is_file():
        frames = [pd.read_parquet(consolidated)]
    elif (folder / layout.RUNS).is_dir():
        runs_dir = folder / layout.RUNS
        frames = []
        for path in _run_files(runs_dir):
            try:
                table = pd.read_parquet(path, filters=[("row_type", "==", "trace")])
            except (OSError, ValueError, pa.ArrowException):
                continue  # named by load_outcomes already
            frames.append(table.assign(part=_part_of(path, runs_dir)))
    else:
        frames = []
    if not frames:
        return pd.DataFrame()
    frame = pd.concat(frames, ignore_index=True)
    frame = frame.drop(columns=[c for c in REPEATED_STRINGS if c in frame.columns])
    if "part" not in frame.columns:
        frame["part"] = "main"
    return frame.astype({"part": "string"}).reset_index(drop=True)


def with_categorical_names(outcomes: pd.DataFrame) -> pd.DataFrame:
    """``outcomes`` with the :data:`NAME_COLUMNS` as categoricals: grouping by
    Arrow-backed strings factorizes them again for every groupby, a large share of a paper-scale
    report's statistics time. For plug-ins that only read those columns (``ChapterPlugin.
    categorical_names``); aggregates keep plain string labels (:func:`per_dataset_errors`)."""
    return _names_as(outcomes, "category")


def with_string_names(outcomes: pd.DataFrame) -> pd.DataFrame:
    """``outcomes`` with the :data:`NAME_COLUMNS` as plain strings again (the inverse of
    :func:`with_categorical_names`), for plug-ins that have not opted into categoricals."""
    return _names_as(outcomes, "string")


def _names_as(outcomes: pd.DataFrame, dtype: str) -> pd.DataFrame:
    names = [c for c in NAME_COLUMNS if c in outcomes.columns and outcomes[c].dtype != dtype]
    if not names:
        return outcomes
    converted = outcomes.astype(dict.fromkeys(names, dtype))
    converted.attrs = outcomes.attrs
    return converted


def default_report_dir(folder: str | Path) -> Path:
    """``<sweep>/report`` for a sweep folder or its ``consolidated/``; else ``<folder>/report``."""
    folder = Path(folder)
    if folder.name == layout.CONSOLIDATED:
        folder = folder.parent
    return folder / layout.REPORT


# ------------------------------------------------------------------------------ score tables


def method_order(methods: pd.Index | list[str]) -> list[str]:
    """Thesis methods in the thesis's order, then any other method alphabetically."""
    known = [m for m in THESIS_METHODS if m in set(methods)]
    return known + sorted(set(methods) - set(THESIS_METHODS))


def final_outcomes(outcomes: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, method): the incumbent after the run's last evaluation."""
    by_run = outcomes.groupby(["run_id", "method"], sort=False, observed=True)
    last = by_run["iteration"].transform("max")
    return outcomes[outcomes["iteration"] == last]


def per_dataset_errors(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Final test error in % per (protocol, part, dataset, method): mean, std, repetitions.

    ``std`` is over repetitions with ``ddof=0`` (NaN-free with one repetition).
    """
    final = final_outcomes(outcomes).assign(error=lambda f: 100.0 * f["test_error"])
    grouped = final.groupby(["protocol", "part", "dataset", "method"])["error"]
    return _plain_labels(
        pd.DataFrame(
            {"mean": grouped.mean(), "std": grouped.std(ddof=0), "repetitions": grouped.size()}
        )
    )


def _plain_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with string labels where grouping by :data:`NAME_COLUMNS` left categoricals: the
    tables and score tables other code reads keep plain string indexes."""

    def plain(labels: pd.Index) -> pd.Index:
        return labels.astype(str) if isinstance(labels, pd.CategoricalIndex) else labels

    index = frame.index
    if isinstance(index, pd.MultiIndex):
        index = index.set_levels([plain(level) for level in index.levels])
    return frame.set_axis(plain(index), axis=0).set_axis(plain(frame.columns), axis=1)


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


# ------------------------------------------------------------------------------------- curves


def iteration_errors(outcomes: pd.DataFrame, protocol: str, part: str) -> pd.DataFrame:
    """Mean over repetitions of the incumbent's test error in %: (dataset, iteration) × method.

    Each method has rows only at its own iterations (CMA-ES: t = 6k and the last).
    """
    rows = outcomes[(outcomes["protocol"] == protocol) & (outcomes["part"] == part)]
    means = rows.groupby(["dataset", "iteration", "method"])["test_error"].mean().mul(100.0)
    table = _plain_labels(means.unstack("method"))
    return table[method_order(table.columns)].rename_axis(columns=None)


def rank_iterations(budget: int) -> list[int]:
    """Multiples of 6 up to ``budget``, and ``budget`` itself."""
    return sorted({*range(RANK_STEP, budget + 1, RANK_STEP), budget})


def _carried_forward(errors: pd.DataFrame, iterations: list[int]) -> dict[int, pd.DataFrame]:
    """Per iteration t, datasets × methods of the last incumbent at or before t.

    A method that stopped early (the grid runs ⌊√budget⌋² evaluations) keeps its final choice.
    """
    datasets = errors.index.get_level_values("dataset").unique()
    steps = sorted({*errors.index.get_level_values("iteration"), *iterations})
    every = pd.MultiIndex.from_product([datasets, steps], names=["dataset", "iteration"])
    carried = errors.reindex(every).groupby(level="dataset", sort=False).ffill()
    return {
        t: carried.xs(t, level="iteration").rename_axis(None).rename_axis(None, axis=1)
        for t in iterations
    }


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


# -------------------------------------------------------------------------------- dataset size


def dataset_sizes(datasets: list[str] | pd.Index) -> pd.Series:
    """|D_TVS| per dataset: the training file's rows when the collection ships a test file,
    else ``n − round(test_frac · n)`` as ``hpo.evaluation.protocol`` splits it. NaN for unknown
    names."""
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
