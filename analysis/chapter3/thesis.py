"""Loaders for the thesis's own result tables, copied in ``analysis/thesis_tables`` (see README).

Every value returned here is **the thesis's number** (Lévesque 2018), never ours; reports place them
next to the output of ``analysis.stats`` computed from our runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

TABLES_DIR = Path(__file__).resolve().parent / "thesis_tables"

_SUMMARY_FILES = {"3.1": "table3.1_summary.tsv", "3.5": "table3.5_pm_summary.tsv"}
_WINLOSS_FILES = {
    "3.2": "table3.2_winloss_holdout.tsv",
    "3.3": "table3.3_winloss_5fold.tsv",
    "3.4a": "table3.4a_winloss_pm_holdout.tsv",
    "3.4b": "table3.4b_winloss_pm_5fold.tsv",
}


def _table_file(table: str, files: dict[str, str]) -> Path:
    if table not in files:
        raise ValueError(f"unknown thesis table {table!r}; expected one of {sorted(files)}")
    return TABLES_DIR / files[table]


def thesis_summary(table: str = "3.1") -> pd.DataFrame:
    """Table 3.1 (14 methods) or 3.5 (posterior-mean experiment), indexed by method.

    Columns: ``{holdout,fivefold}_{median,q3_minus_q1,winrate,rank}``, in the thesis's row order.
    """
    return pd.read_csv(_table_file(table, _SUMMARY_FILES), sep="\t", index_col="method")


def thesis_winloss(table: str = "3.2") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Win/loss counts of Table 3.2, 3.3, 3.4a or 3.4b and their significance marks.

    Returns ``(counts, marks)``, both indexed and labelled by method name in the thesis's order:
    ``counts`` holds ints, ``marks`` is True where the cell is bold+underlined (Wilcoxon p < 0.05).
    """
    raw = pd.read_csv(_table_file(table, _WINLOSS_FILES), sep="\t", dtype=str)
    methods = list(raw["method"])
    cells = raw.drop(columns=["idx", "method"])
    cells.index, cells.columns = methods, methods
    counts = cells.apply(lambda column: column.str.rstrip("*").astype(int))
    marks = cells.apply(lambda column: column.str.endswith("*"))
    return counts, marks


def thesis_datasets_118() -> pd.DataFrame:
    """The 118 Chapter-3 datasets: thesis name, Fernández-Delgado (2014) name, App. B labels."""
    return pd.read_csv(TABLES_DIR / "datasets-118.csv")
