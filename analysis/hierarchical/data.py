"""What the seed-003 report reads (Bermúdez-Chacón 2014, §3.5 and §5): the model-selection
stage's rows of every run (``row_type == "selection"``, :mod:`hpo.significance.stage`), and
Table 5.1 computed from them.

Per (dataset, method): *Default Worst/Best* are the lowest and highest mean hold-out index of the
defaults baseline's rows (``ms_kind == "default"``: each learner at scikit-learn's defaults, on
the same folds of H; computed once per dataset, by one method of the experiment, and shared);
*Optimized* is the mean hold-out index of the model ranked first by the cascade (Algorithm 3);
*Boost* = (Optimized − Best) / Best × 100 (§5, checked on the seed's balance-scale row: 12.52 %);
*Family* the learner of the first-ranked model, in the seed's names (Appendix A).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from hpo.data.catalog import SEED003_DATASETS
from runfiles import layout

METHOD_NAMES = {"hrs": "HRS", "pds": "PDS", "hypercube": "HC"}  # §3.4 (a), (c), (b)
# our learner -> the seed's name (Appendix A; "StochasicGradientDescent" sic)
SEED_FAMILY = {
    "knn": "KNN",
    "radius_neighbors": "RadiusNeighbors",
    "nearest_centroid": "NearestCentroid",
    "sgd": "StochasicGradientDescent",
    "logistic_regression": "LogisticRegression",
    "svm": "SVM",
    "linear_svm": "LinearSVM",
    "nu_svm": "NuSVM",
    "decision_tree": "DecisionTree",
    "random_forest": "RandomForest",
    "extra_trees": "ExtraTreeEnsemble",
    "ridge": "Ridge",
    "lda": "LinearDiscriminant",
    "qda": "QuadraticDiscriminant",
    "gradient_boosting": "GradientBoosting",
    "passive_aggressive": "PassiveAggressive",
    "gaussian_nb": "GaussianNB",
}
# the name run -> the seed's name (hpo.data.catalog.SEED003_DATASETS)
# (scikit-learn's iris and wine are the same UCI data sets as UCI-121's: runs on them, e.g. in
# the tests, are reported under the seed's names too)
SEED_NAME_OF = {run: seed for seed, (run, _) in SEED003_DATASETS.items() if run is not None}
SEED_NAME_OF |= {"sklearn-iris": "iris", "sklearn-wine": "wine"}


def dataset_label(run_name: str) -> str:
    """The one name a dataset has in the report, its tables, figures and file names: the seed's
    name, with the name it runs as in parentheses only where the two differ (``tae
    (teaching)``, ``iris``)."""
    seed_name = SEED_NAME_OF.get(run_name, run_name)
    return seed_name if seed_name == run_name else f"{seed_name} ({run_name})"


COLUMNS = (
    "dataset",
    "method",
    "learner",
    "ms_kind",
    "ms_signature",
    "ms_rank",
    "ms_p_value",
    "ms_tied",
    "ms_holdout_mean",
    "ms_holdout_std",
    "ms_holdout_scores",
    "ms_holdout_fit_seconds",
    "iteration",
    "selection_fit_seconds",
    "selection_stage_seconds",
    "run_seconds",
)


def selection_rows(source: Path) -> pd.DataFrame:
    """The selection rows of every run file under ``source/runs`` (empty when there is none),
    with ``part`` (the run's folder below ``runs``) and ``scores`` (the hold-out scores, parsed)."""
    runs_dir = Path(source) / layout.RUNS
    frames = []
    for path in layout.run_files(runs_dir) if runs_dir.is_dir() else []:
        present = set(pq.read_schema(path).names)
        if "ms_kind" not in present:
            continue
        wanted = [c for c in COLUMNS if c in present]
        frame = pq.read_table(
            path, columns=wanted, filters=[("row_type", "==", "selection")]
        ).to_pandas()
        folders = path.relative_to(runs_dir).parts[:-1]
        frames.append(frame.assign(part=folders[0] if len(folders) >= 2 else "main"))
    if not frames:
        return pd.DataFrame(columns=[*COLUMNS, "part", "scores"])
    rows = pd.concat(frames, ignore_index=True)
    rows["scores"] = [np.asarray(json.loads(s), dtype=float) for s in rows["ms_holdout_scores"]]
    return rows


def defaults_of(rows: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The defaults baseline of ``dataset``: one row per learner (the first run that has it)."""
    mine = rows[(rows["dataset"] == dataset) & (rows["ms_kind"] == "default")]
    return mine.drop_duplicates("learner")


def table_5_1(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 5.1 per (dataset, method), ours (the module docstring); NaN where a part is missing
    (no defaults rows, or no ranked model)."""
    records = []
    optimized = rows[rows["ms_kind"] == "optimized"]
    for (dataset, method), frame in optimized.groupby(["dataset", "method"], sort=True):
        defaults = defaults_of(rows, str(dataset))
        ranked = frame[frame["ms_rank"].notna()].sort_values("ms_rank", kind="stable")
        worst = float(defaults["ms_holdout_mean"].min()) if len(defaults) else np.nan
        best = float(defaults["ms_holdout_mean"].max()) if len(defaults) else np.nan
        score = float(ranked["ms_holdout_mean"].iloc[0]) if len(ranked) else np.nan
        learner = str(ranked["learner"].iloc[0]) if len(ranked) else ""
        records.append(
            {
                "dataset": SEED_NAME_OF.get(str(dataset), str(dataset)),
                "run as": str(dataset),
                "method": METHOD_NAMES.get(str(method), str(method)),
                "default worst": worst,
                "default best": best,
                "optimized": score,
                "boost %": (score - best) / best * 100 if best else np.nan,
                "family": SEED_FAMILY.get(learner, learner),
                "tied with the best": int(ranked["ms_tied"].fillna(False).astype(bool).sum()),
                "defaults learners": len(defaults),
            }
        )
    return pd.DataFrame(records)


def cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per run: its seconds, the model-selection stage's and its CV fits' (the issue's "how much
    of the run they took")."""
    runs = rows.drop_duplicates(["dataset", "method"])
    table = pd.DataFrame(
        {
            "dataset": runs["dataset"].map(dataset_label).to_numpy(),
            "method": runs["method"].map(lambda m: METHOD_NAMES.get(m, m)).to_numpy(),
            "run s": runs["run_seconds"].to_numpy(dtype=float),
            "stage s": runs["selection_stage_seconds"].to_numpy(dtype=float),
            "CV fits s": runs["selection_fit_seconds"].to_numpy(dtype=float),
        }
    )
    table["CV fits % of run"] = 100 * table["CV fits s"] / table["run s"]
    return table
