"""Seed 004's report sections (the ``autoweka`` plug-in of the report engine) from the results
files of a sweep (``results/autoweka/<profile>``) or any folder of seed-004 runs: each run's
final choice, oracle points and trajectory rows (experiments/autoweka.py) read into one summary
row per run (:func:`load_summaries`), errors in the seed's units (error %, RMSE).

* **Best-of-k bootstrap** (seed §4.1): for each (dataset, method), ``n_bootstrap`` draws of k of
  the R runs (without replacement); the run with the lowest CV error is selected and its CV and
  test errors recorded. Tables give the mean over draws; Welch's t-test (p = 0.01) on the draws
  decides every "significantly better" (spec B4). A deterministic method (Ex-Def, grid: every
  run identical) enters as zero-variance draws [decision]; two zero-variance samples differ
  significantly iff their values differ.
* **Tables** 4.3/4.4 (classification, CV and test error %), 4.7/4.8 (regression RMSE), 4.5/4.9
  (test, gap = CV - test, Spearman rho of the diagnostic), 4.10-4.17 (SMAC vs its variants):
  ours beside the seed's (``seed_tables/*.tsv``, labelled "seed") where the dataset maps.
* **Table 4.2**: the Ex-Def and grid oracles (best and worst test error over the models each
  completed, every model retrained on the whole training set). **Limited grid** (§4.1): a
  bootstrap over the grid runs' completed points, drawn until their fit seconds exceed the
  budget of k parallel runs; it enters every table and matrix as ``limited_grid``.
* **Win matrices** (Appendix A): datasets on which the row is significantly better than the
  column, with the virtual methods "best of Auto-WEKA" (SMAC, TPE, I/F-Race), "best baseline"
  (Ex-Def, grid, random search) and "best limited baseline" (Ex-Def, limited grid, random
  search): on each dataset, the member with the lowest mean.
* **Trajectories** (Figs 4.10-4.11): incumbent CV estimate against wall time, median over runs
  with a 10-90 % band; **selection frequencies** (Figs 4.1-4.7) of learners, meta-method bases
  and feature selection over the SMAC, TPE and I/F-Race runs; **claims** on the claims engine.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import yaml
from scipy import stats

from analysis.claims import Claim, MissingInput, Outcome, records_frame, run_claim
from analysis.figures import method_styles
from analysis.render import markdown
from hpo.cash import paper_method_name
from hpo.optimizers.cash_baselines import limited_grid

SEED_TABLES = Path(__file__).parent / "seed_tables"
CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
ALPHA = 0.01  # seed §4.1: Welch's t-test at p = 0.01
METHOD_NAMES = {  # ours -> the seed's column names
    "exdef": "Ex-Def",
    "grid": "Grid Search",
    "limited_grid": "Lim. Grid Search",
    "random": "Rand. Search",
    "irace": "I/F-Race",
    "tpe": "TPE",
    "smac": "SMAC",
    "smac_10batch": "SMAC-10-Batch",
    "smac_multilevel": "SMAC-Multi-Level",
    "smac_rrsv": "SMAC-RRSV",
    "smac_long": "SMAC-Long",
}
AUTOWEKA = ("smac", "tpe", "irace")
BASELINES = ("exdef", "grid", "random")
LIMITED_BASELINES = ("exdef", "limited_grid", "random")  # Appendix A's "best limited baseline"
VIRTUAL = {
    "best_autoweka": AUTOWEKA,
    "best_baseline": BASELINES,
    "best_limited_baseline": LIMITED_BASELINES,
}
VARIANTS = {"10": "smac_10batch", "12": "smac_multilevel", "14": "smac_rrsv", "16": "smac_long"}


def in_table_units(loss: float, task: str) -> float:
    """A loss in the seed's tables' units: error % for classification, RMSE for regression (the
    losses are error rates and mean squared errors)."""
    return float(loss) * 100.0 if task == "classification" else float(np.sqrt(loss))


@functools.cache
def seed_datasets() -> dict[str, Any]:
    """``conf/autoweka/datasets.yaml``: the seed's datasets mapped to ours, by task."""
    return yaml.safe_load((CONF_DIR / "autoweka" / "datasets.yaml").read_text())


def experiment_profiles() -> dict[str, Any]:
    """The profiles of ``conf/experiment/autoweka.yaml`` (their ``best_of`` and ``bootstrap``)."""
    return yaml.safe_load((CONF_DIR / "experiment" / "autoweka.yaml").read_text())["profiles"]


def run_files(folder: Path) -> list[Path]:
    """The seed-004 results files below ``folder`` (a sweep's ``runs/`` or any folder)."""
    return sorted(p for p in Path(folder).rglob("aw_*.parquet") if ".predictions" not in p.name)


def load_summaries(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One summary row per finished seed-004 run below ``folder`` (method by its seed-004 name,
    errors in the tables' units, its oracle points as a list) and every run's trajectory rows
    (dataset, method, seed, wall seconds, CV estimate)."""
    rows, trajectories = [], []
    for path in run_files(folder):
        try:
            table = pd.read_parquet(path)
            spec = json.loads(pq.read_schema(path).metadata[b"hpo.run_spec"])
        except Exception as err:  # noqa: BLE001 - an unreadable file is named, not fatal
            warnings.warn(f"skipping unreadable results file {path}: {err}", stacklevel=2)
            continue
        outcomes = table[table.row_type == "outcome"]
        final = outcomes[outcomes.rule == "final"]
        if final.empty:
            continue
        first, last = table.iloc[0], final.iloc[0]
        task = str(first["task"])
        method = paper_method_name(str(first["run_method"]))
        factor = float(dict(spec.get("optimizer_settings") or {}).get("budget_factor", 1.0))
        timed = spec.get("time_budget") is not None
        oracle = outcomes[outcomes.rule == "oracle"]
        rows.append(
            {
                "method": method,
                "dataset": str(first["dataset"]),
                "task": task,
                "seed": int(first["seed"]),
                "repetition": int(first["repetition"]),
                "budget_seconds": (
                    float(spec["time_budget"]) * factor if timed else spec["budget"] * factor
                ),
                "budget_kind": spec.get("time_budget_kind", "wall") if timed else "evaluations",
                "learner": str(last["learner"]),
                "base": "" if pd.isna(last["base"]) else str(last["base"]),
                "fs_search": str(last["fs_search"]),
                "fs_eval": "" if pd.isna(last["fs_eval"]) else str(last["fs_eval"]),
                "incumbent": str(last["config"]),
                "cv_error": in_table_units(last["incumbent_valid_loss"], task),
                "test_error": in_table_units(last["test_error"], task),
                "spearman": float(first["spearman"]),
                "evaluations": int(first["evaluations"]),
                "breaches": int(first["breaches"]),
                "wall_seconds": float(first["wall_seconds"]),
                "cpu_seconds": float(first["cpu_seconds"]),
                "optimizer_seconds": float(first["optimizer_seconds_total"]),
                "setup_seconds": float(first["setup_seconds"]),
                "oracle_points": [
                    {
                        "config": str(o.config),
                        "learner": str(o.learner),
                        "cv_error": in_table_units(o.incumbent_valid_loss, task),
                        "test_error": in_table_units(o.test_error, task),
                        "seconds": float(o.fit_seconds),
                        "evaluations": int(o.n_instances),
                    }
                    for o in oracle.itertuples()
                ],
            }
        )
        points = outcomes[outcomes.rule == "trajectory"]
        trajectories.append(
            pd.DataFrame(
                {
                    "dataset": str(first["dataset"]),
                    "method": method,
                    "seed": int(first["seed"]),
                    "wall": points.elapsed_seconds.to_numpy(float),
                    "estimate": points.incumbent_valid_loss.to_numpy(float),
                }
            )
        )
    if not rows:
        raise FileNotFoundError(f"no finished seed-004 runs below {folder}")
    return pd.DataFrame(rows), pd.concat(trajectories, ignore_index=True)


def optimiser_time(summaries: pd.DataFrame) -> pd.DataFrame:
    """Per method: the optimiser's seconds (ask + tell), the runs' wall seconds, evaluations and
    setup seconds (building the optimisers; a method's total only when every one of its runs
    measured it, else NaN), and the optimiser's milliseconds per evaluation and share."""
    setup = summaries.get("setup_seconds", pd.Series(np.nan, summaries.index))
    overhead = summaries.groupby("method")[["optimizer_seconds", "wall_seconds", "evaluations"]]
    overhead = overhead.sum()
    overhead["setup_seconds"] = setup.groupby(summaries.method).agg(
        lambda seconds: seconds.sum() if seconds.notna().all() else np.nan
    )
    overhead["optimizer ms / evaluation"] = 1e3 * overhead.optimizer_seconds / overhead.evaluations
    overhead["wall ms / evaluation"] = 1e3 * overhead.wall_seconds / overhead.evaluations
    overhead["optimizer share %"] = 100 * overhead.optimizer_seconds / overhead.wall_seconds
    return overhead


def best_of_k(
    runs: pd.DataFrame, k: int, n_bootstrap: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Draws of the seed's best-of-k bootstrap for one (dataset, method): the CV and test error
    of the run with the lowest CV error among k runs drawn without replacement."""
    cv, test = runs["cv_error"].to_numpy(float), runs["test_error"].to_numpy(float)
    k = min(k, len(cv))
    picks = np.array([rng.choice(len(cv), size=k, replace=False) for _ in range(n_bootstrap)])
    best = picks[np.arange(n_bootstrap), np.argmin(cv[picks], axis=1)]
    return {"cv": cv[best], "test": test[best]}


def bootstrap_all(
    summaries: pd.DataFrame, k: int, n_bootstrap: int, seed: int = 0
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """The bootstrap draws of every (dataset, method), seeded."""
    rng = np.random.default_rng(seed)
    return {
        (str(d), str(m)): best_of_k(group, k, n_bootstrap, rng)
        for (d, m), group in summaries.groupby(["dataset", "method"], sort=True)
    }


def grid_points(summaries: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The grid points that ``dataset``'s grid runs scored on every fold (each once, in the
    runs' order; every run visits the same grid in its own order), with their CV and test errors
    and fit seconds (``oracle_points`` of experiments/autoweka.py)."""
    runs = summaries[(summaries.dataset == dataset) & (summaries.method == "grid")]
    rows = [
        p for points in runs.get("oracle_points", []) if isinstance(points, list) for p in points
    ]
    columns = ["config", "learner", "cv_error", "test_error", "seconds", "evaluations"]
    return pd.DataFrame(rows, columns=columns).drop_duplicates("config", ignore_index=True)


def limited_grid_draws(
    summaries: pd.DataFrame, k: int, n_bootstrap: int, seed: int = 0
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """The seed's limited grid (§4.1) per dataset with grid runs: grid points drawn until their
    fit seconds (evaluations, for a budget in evaluations) exceed the budget of k parallel runs
    (the seed: 4 x 30 = 120 CPU h), the CV and test error of the best-CV point drawn,
    ``n_bootstrap`` times."""
    rng = np.random.default_rng(seed)
    out = {}
    for dataset in sorted(summaries[summaries.method == "grid"].dataset.unique()):
        points = grid_points(summaries, dataset)
        runs = summaries[(summaries.dataset == dataset) & (summaries.method == "grid")]
        cost = points.evaluations if runs.budget_kind.iloc[0] == "evaluations" else points.seconds
        if points.empty or not cost.sum() > 0:
            continue
        budget = k * float(runs.budget_seconds.iloc[0])
        chosen = limited_grid(cost, points.cv_error, budget, rng, n_bootstrap)
        out[(str(dataset), "limited_grid")] = {
            "cv": points.cv_error.to_numpy(float)[chosen],
            "test": points.test_error.to_numpy(float)[chosen],
        }
    return out


def significantly_better(first: np.ndarray, second: np.ndarray, alpha: float = ALPHA) -> bool:
    """``first`` has the lower mean and Welch's t-test rejects equal means at ``alpha`` (two
    zero-variance samples: their values differ)."""
    if not np.mean(first) < np.mean(second):
        return False
    if np.ptp(first) == 0 and np.ptp(second) == 0:
        return True
    return bool(stats.ttest_ind(first, second, equal_var=False).pvalue < alpha)


def with_virtual(
    draws: Mapping[tuple[str, str], dict[str, np.ndarray]], metric: str
) -> dict[str, dict[str, np.ndarray]]:
    """Per dataset, each method's draws plus the virtual best-of methods (Appendix A)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for (dataset, method), d in draws.items():
        out.setdefault(dataset, {})[method] = d[metric]
    for methods in out.values():
        for name, group in VIRTUAL.items():
            present = [m for m in group if m in methods]
            if present:
                methods[name] = methods[min(present, key=lambda m: np.mean(methods[m]))]
    return out


def win_matrix(per_dataset: Mapping[str, Mapping[str, np.ndarray]]) -> pd.DataFrame:
    """Datasets on which the row method is significantly better than the column method."""
    methods = sorted({m for d in per_dataset.values() for m in d}, key=_order)
    table = pd.DataFrame(0, index=methods, columns=methods, dtype=int)
    for samples in per_dataset.values():
        for a in samples:
            for b in samples:
                if a != b and significantly_better(samples[a], samples[b]):
                    table.loc[a, b] += 1
    return table


def _order(method: str) -> int:
    order = [*METHOD_NAMES, *VIRTUAL]
    return order.index(method) if method in order else len(order)


def seed_name_of(datasets_config: Mapping[str, Mapping[str, Mapping]]) -> dict[str, str]:
    """Our dataset name (an offline copy or ``openml:<id>``) -> the seed's (only datasets that
    map)."""
    out = {}
    for task in ("classification", "regression"):
        for seed_name, entry in datasets_config.get(task, {}).items():
            if entry.get("ours"):
                out[str(entry["ours"])] = seed_name
            if entry.get("openml"):
                out[f"openml:{entry['openml']}"] = seed_name
    return out


def read_seed_table(number: int | str) -> pd.DataFrame:
    """A table of the seed, indexed by its dataset names (``?`` = lost in the thesis)."""
    frame = pd.read_csv(SEED_TABLES / f"table_4_{number}.tsv", sep="\t", comment="#", na_values="?")
    return frame.set_index("Dataset")


def _dataset_cells(dataset: str, seed_names: Mapping[str, str]) -> tuple[str, dict[str, object]]:
    """A table row's first cells: our dataset and the seed's counterpart, ``(substitute)`` where
    it has none; and the seed's name (empty where none) to look its values up."""
    seed_name = seed_names.get(dataset, "")
    return seed_name, {"dataset": dataset, "seed dataset": seed_name or "(substitute)"}


def results_table(
    draws: Mapping[tuple[str, str], dict[str, np.ndarray]],
    metric: str,
    methods: Sequence[str],
    seed_table: pd.DataFrame | None,
    seed_names: Mapping[str, str],
    task_datasets: Sequence[str],
) -> pd.DataFrame:
    """Ours (mean over bootstrap draws) beside the seed's value for each method."""
    rows = []
    for dataset in task_datasets:
        seed_name, row = _dataset_cells(dataset, seed_names)
        for method in methods:
            d = draws.get((dataset, method))
            row[f"{method} ours"] = float(np.mean(d[metric])) if d is not None else np.nan
            column = METHOD_NAMES[method]
            seed_value = np.nan
            if seed_table is not None and seed_name in seed_table.index and column in seed_table:
                seed_value = seed_table.loc[seed_name, column]
            row[f"{method} seed"] = seed_value
        rows.append(row)
    return pd.DataFrame(rows)


def variant_table(
    draws: Mapping[tuple[str, str], dict[str, np.ndarray]],
    variant: str,
    seed_table: pd.DataFrame,
    seed_names: Mapping[str, str],
    task_datasets: Sequence[str],
) -> pd.DataFrame:
    """Tables 4.10-4.17: SMAC and one variant, train and test, ours beside the seed's."""
    label = METHOD_NAMES[variant]
    rows = []
    for dataset in task_datasets:
        seed_name, row = _dataset_cells(dataset, seed_names)
        for metric, word in (("cv", "Train"), ("test", "Test")):
            for method, column in (("smac", f"{word} SMAC"), (variant, f"{word} {label}")):
                d = draws.get((dataset, method))
                row[f"{column} ours"] = float(np.mean(d[metric])) if d is not None else np.nan
                known = seed_name in seed_table.index and column in seed_table
                row[f"{column} seed"] = seed_table.loc[seed_name, column] if known else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def diagnostic_table(
    summaries: pd.DataFrame, draws: Mapping, datasets: Sequence[str]
) -> pd.DataFrame:
    """Tables 4.5/4.9: test error, gap (CV - test) and mean Spearman rho per Auto-WEKA method."""
    rows = []
    for dataset in datasets:
        row: dict[str, object] = {"dataset": dataset}
        for method in AUTOWEKA:
            d = draws.get((dataset, method))
            runs = summaries[(summaries.dataset == dataset) & (summaries.method == method)]
            row[f"{method} test"] = float(np.mean(d["test"])) if d else np.nan
            row[f"{method} gap"] = float(np.mean(d["cv"]) - np.mean(d["test"])) if d else np.nan
            row[f"{method} corr"] = float(runs["spearman"].mean()) if len(runs) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def oracle_table(
    summaries: pd.DataFrame, seed_names: Mapping[str, str], datasets: Sequence[str]
) -> pd.DataFrame:
    """Table 4.2's oracles beside the seed's: the best and worst test error, and the gap, over
    every learner at its defaults (Ex-Def; from the first Ex-Def run of each dataset, as every
    Ex-Def run evaluates the same models) and over the grid points the grid runs completed
    (ours are cut by the runs' budget; the seed's grid is the full one), each model retrained on
    the whole training set; with the fit seconds they cost (the seed: hours)."""
    seed = read_seed_table(2)
    rows = []
    for dataset in datasets:
        exdef = summaries[(summaries.dataset == dataset) & (summaries.method == "exdef")]
        first = next((p for p in exdef.get("oracle_points", []) if isinstance(p, list) and p), [])
        seed_name, row = _dataset_cells(dataset, seed_names)
        for method, points in (
            ("ExDef", pd.DataFrame(first)),
            ("Grid", grid_points(summaries, dataset)),
        ):
            errors = points["test_error"].to_numpy(float) if len(points) else np.array([])
            for label, value in (
                ("Best", errors.min() if errors.size else np.nan),
                ("Worst", errors.max() if errors.size else np.nan),
                ("Gap", np.ptp(errors) if errors.size else np.nan),
            ):
                row[f"{method} {label} ours"] = value
                column = f"{method} {label} %"
                row[f"{method} {label} seed"] = (
                    seed.loc[seed_name, column] if seed_name in seed.index else np.nan
                )
            row[f"{method} models"] = len(points)
            row[f"{method} fit s"] = float(points["seconds"].sum()) if len(points) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def selection_frequencies(summaries: pd.DataFrame) -> pd.DataFrame:
    """How often each learner, base learner and feature selection was chosen by SMAC, TPE and
    I/F-Race (Figs 4.1, 4.3, 4.5, 4.7), per task."""
    chosen = summaries[summaries.method.isin(AUTOWEKA)]
    rows = []
    for task, group in chosen.groupby("task"):
        for what in ("learner", "base", "fs_search", "fs_eval"):
            counts = group[what].replace("", "(none)").value_counts()
            for value, count in counts.items():
                rows.append(
                    {
                        "task": task,
                        "what": what,
                        "value": value,
                        "runs": int(count),
                        "share": count / len(group),
                    }
                )
    return pd.DataFrame(rows)


def trajectory_figure(
    trajectories: pd.DataFrame, summaries: pd.DataFrame, out: Path
) -> Path | None:
    """Incumbent CV estimate against wall seconds, median over runs and a 10-90 % band, one
    panel per dataset (Figs 4.10-4.11)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted(summaries.dataset.unique())
    if not datasets:
        return None
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.6), squeeze=False)
    styles = method_styles(summaries.method.unique())
    for ax, dataset in zip(axes[0], datasets, strict=True):
        for method in [m for m in (*AUTOWEKA, "random") if m in set(summaries.method)]:
            curves = []
            runs = summaries[(summaries.dataset == dataset) & (summaries.method == method)]
            horizon = float(runs["budget_seconds"].max()) if len(runs) else 1.0
            grid = np.linspace(0, horizon, 60)
            for seed in runs.seed:
                points = trajectories[
                    (trajectories.dataset == dataset)
                    & (trajectories.method == method)
                    & (trajectories.seed == seed)
                ].sort_values("wall", kind="stable")
                if points.empty:
                    continue
                index = np.searchsorted(points.wall.to_numpy(), grid, side="right") - 1
                values = np.where(
                    index >= 0, points.estimate.to_numpy()[np.maximum(index, 0)], np.nan
                )
                curves.append(values)
            if not curves:
                continue
            curves = np.array(curves)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN before a first point
                median = np.nanmedian(curves, axis=0)
                low, high = np.nanquantile(curves, 0.1, axis=0), np.nanquantile(curves, 0.9, axis=0)
            style = styles[method]
            ax.plot(grid, median, label=METHOD_NAMES[method], **style.line(False))
            ax.fill_between(grid, low, high, alpha=0.2, color=style.color)
        ax.set_title(dataset)
        ax.set_xlabel("wall seconds")
        ax.set_ylabel("incumbent CV loss (folds evaluated)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "trajectories.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _md(frame: pd.DataFrame, digits: str = ".4g") -> str:
    """``frame`` as a markdown table (no index), numbers formatted with ``digits``."""
    shown = frame.map(lambda v: format(v, digits) if isinstance(v, float) else v)
    return markdown(shown.set_index(shown.columns[0]))


def _count(matrix: pd.DataFrame, a: str, b: str) -> tuple[int, int]:
    if a not in matrix.index or b not in matrix.index:
        raise MissingInput(f"the win matrix lacks {a if a not in matrix.index else b}")
    return int(matrix.loc[a, b]), int(matrix.loc[b, a])


def _more_wins(a: str, b: str, which: str) -> Claim:
    def evaluate(matrices: Mapping[str, pd.DataFrame]) -> Outcome:
        wins, losses = _count(matrices[which], a, b)
        return Outcome(
            f"{a} better on {wins}, worse on {losses}",
            [(f"{a} wins more than it loses", wins > losses)],
        )

    return evaluate  # type: ignore[return-value]


CLAIMS = [
    Claim(
        "C4.3-a",
        "SMAC beats TPE in training (CV) performance",
        "20/21 better",
        _more_wins("smac", "tpe", "cv"),
    ),
    Claim(
        "C4.3-b",
        "SMAC beats I/F-Race in training performance",
        "15/21 better",
        _more_wins("smac", "irace", "cv"),
    ),
    Claim(
        "C4.3-c",
        "Grid search beats Ex-Def in training performance",
        "17/21 better",
        _more_wins("grid", "exdef", "cv"),
    ),
    Claim(
        "C4.3-d",
        "The best Auto-WEKA method beats the best baseline in training performance",
        "10/21 better",
        _more_wins("best_autoweka", "best_baseline", "cv"),
    ),
    Claim(
        "A.1-a",
        "SMAC beats the limited grid in training performance",
        "20/21 better, 0/21 worse",
        _more_wins("smac", "limited_grid", "cv"),
    ),
    Claim(
        "C4.4-a",
        "SMAC beats TPE in test performance",
        "16/21 better, 5/21 worse",
        _more_wins("smac", "tpe", "test"),
    ),
    Claim(
        "C4.4-b",
        "The best Auto-WEKA method beats the best baseline in test performance",
        "10/21 better, 7/21 worse",
        _more_wins("best_autoweka", "best_baseline", "test"),
    ),
    Claim(
        "C4.10",
        "SMAC beats SMAC-10-Batch in training performance",
        "19/21 better",
        _more_wins("smac", "smac_10batch", "cv"),
    ),
]


def sections(
    folder: Path,
    out_dir: Path,
    datasets_config: Mapping,
    profile: Mapping,
    k: int,
    n_bootstrap: int,
    not_run: Mapping[str, str] | None = None,
) -> list[str]:
    """The report's sections (title first) on the seed-004 runs below ``folder``, their tables
    and figures written to ``out_dir``; ``not_run`` (dataset -> why) listed after the header."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summaries, trajectories = load_summaries(folder)
    draws = {
        **bootstrap_all(summaries, k, n_bootstrap),
        **limited_grid_draws(summaries, k, n_bootstrap),
    }
    seed_names = seed_name_of(datasets_config)
    budgets = summaries.groupby("budget_kind").budget_seconds.max()
    budget = ", ".join(f"{b:g} {kind} s" for kind, b in budgets.items())
    sections = [
        "# Seed 004 (Thornton 2014, Auto-WEKA): our runs beside the seed's numbers",
        f"Profile: {profile.get('name', '?')}; {len(summaries)} runs; "
        f"budget per run {budget} (the seed: 30 CPU hours = 108,000 s); "
        f"best of {k} of {int(summaries.groupby(['dataset', 'method']).size().max())} runs, "
        f"{n_bootstrap} bootstrap draws; Welch's t-test at p = {ALPHA}. Columns `seed` are the "
        "SEED'S numbers (Thornton 2014), on the seed's dataset named beside ours; "
        "`(substitute)` rows have no seed counterpart.",
    ]
    if not_run:
        sections.append(
            "## Datasets of the profile not run\n\n"
            + "\n".join(f"* **{name}**: {why}" for name, why in not_run.items())
        )
    classification = sorted(summaries[summaries.task == "classification"].dataset.unique())
    if classification and "exdef" in set(summaries.method):
        table = oracle_table(summaries, seed_names, classification)
        table.to_csv(out_dir / "table_4_2.tsv", sep="\t", index=False)
        sections.append(
            "## Table 4.2: Ex-Def and grid oracles (test error % over every learner at its "
            "defaults and over the grid points our grid runs completed, each retrained on the "
            "whole training set)\n\n" + _md(table)
        )
    for task, unit, numbers, diag in (
        ("classification", "error %", ("3", "4"), "5"),
        ("regression", "RMSE", ("7", "8"), "9"),
    ):
        datasets = sorted(summaries[summaries.task == task].dataset.unique())
        if not datasets:
            sections.append(f"## {task}: no runs")
            continue
        methods = [
            m
            for m in METHOD_NAMES
            if m in {method for _, method in draws}
            and m in (*LIMITED_BASELINES, *BASELINES, *AUTOWEKA)
        ]
        for metric, number, label in (
            ("cv", numbers[0], "training (10-fold CV)"),
            ("test", numbers[1], "test"),
        ):
            table = results_table(
                draws, metric, methods, read_seed_table(number), seed_names, datasets
            )
            table.to_csv(out_dir / f"table_4_{number}.tsv", sep="\t", index=False)
            sections.append(
                f"## Table 4.{number}: {label} performance, {task} ({unit})\n\n" + _md(table, ".4g")
            )
        table = diagnostic_table(summaries, draws, datasets)
        table.to_csv(out_dir / f"table_4_{diag}.tsv", sep="\t", index=False)
        sections.append(
            f"## Table 4.{diag}: overfitting diagnostic, {task} "
            "(test, gap = CV - test, Spearman rho)\n\n" + _md(table, ".3g")
        )
        for first, variant in VARIANTS.items():
            if variant not in set(summaries.method):
                continue
            number = int(first) if task == "classification" else int(first) + 1
            table = variant_table(draws, variant, read_seed_table(number), seed_names, datasets)
            table.to_csv(out_dir / f"table_4_{number}.tsv", sep="\t", index=False)
            sections.append(
                f"## Table 4.{number}: SMAC vs {METHOD_NAMES[variant]}, {task}\n\n"
                + _md(table, ".4g")
            )
    matrices = {}
    for metric in ("cv", "test"):
        for task in ("classification", "regression"):
            task_draws = {
                key: d
                for key, d in draws.items()
                if key[0] in set(summaries[summaries.task == task].dataset)
            }
            if not task_draws:
                continue
            matrix = win_matrix(with_virtual(task_draws, metric))
            matrix.to_csv(out_dir / f"wins_{task}_{metric}.tsv", sep="\t")
            sections.append(
                f"## Win matrix ({task}, {'training' if metric == 'cv' else 'test'}): "
                "datasets where the row is significantly better (Appendix A)\n\n" + markdown(matrix)
            )
            if task == "classification":
                matrices[metric] = matrix
    frequencies = selection_frequencies(summaries)
    frequencies.to_csv(out_dir / "selection_frequencies.tsv", sep="\t", index=False)
    sections.append(
        "## Selected learners, bases and feature selection "
        "(SMAC, TPE, I/F-Race runs; Figs 4.1-4.7)\n\n"
        + (_md(frequencies, ".2f") if len(frequencies) else "no runs")
    )
    figure = trajectory_figure(trajectories, summaries, out_dir)
    if figure is not None:
        sections.append(f"## Trajectories (Figs 4.10-4.11)\n\n![trajectories]({figure.name})")
    records = records_frame(run_claim(c, matrices) for c in CLAIMS)
    records.to_csv(out_dir / "claims.tsv", sep="\t")  # the index: the claim id
    sections.append(
        "## Claims (classification win matrices; the seed's counts are out of 21 datasets)\n\n"
        + _md(
            records.reset_index()[
                ["id", "statement", "thesis_value", "our_value", "status", "reason"]
            ]
        )
    )
    columns = [
        "dataset",
        "method",
        "seed",
        "learner",
        "base",
        "fs_search",
        "fs_eval",
        "cv_error",
        "test_error",
        "evaluations",
        "breaches",
        "wall_seconds",
        "optimizer_seconds",
    ]
    sections.append(
        "## Every run\n\n" + _md(summaries[columns].sort_values(["dataset", "method", "seed"]))
    )
    overhead = optimiser_time(summaries)
    sections.append(
        "## Optimiser time (ask + tell) as a share of the runs' wall time\n\n"
        "An evaluation is one configuration on one instance (fold). The optimiser's time per "
        "evaluation depends on the space, not on the data; the share falls as fits lengthen. "
        "`setup_seconds`: building the optimisers (SMAC's initial design; hyperopt's domain "
        "in a process's first TPE run), before each run's budget clock starts (empty when runs "
        "of the method were recorded before it was measured).\n\n"
        + _md(overhead.reset_index(), ".3g")
    )
    return sections
