"""Loaders for the thesis's Chapter-4 result tables, copied in ``thesis_tables/`` (see its README).

Every value returned here is **the thesis's number** (Lévesque 2018, §4.4.1–4.4.2), never ours:
Tables 4.3/4.5 (pairwise Wilcoxon p-values across the 18 datasets) and 4.4/4.6 (mean test error
per dataset and average rank), and the 18 datasets' column abbreviations. Reports place them next
to the numbers ``analysis.stats`` computes from our runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.thesis_comparison import read_wilcoxon_table

TABLES_DIR = Path(__file__).resolve().parent / "thesis_tables"
SVM, SKLEARN = "svm_kernels", "sklearn_cash"
SPACES = (SVM, SKLEARN)
ERROR_TABLES = {SVM: "4.4", SKLEARN: "4.6"}  # space -> thesis table of test errors
WILCOXON_TABLES = {SVM: "4.3", SKLEARN: "4.5"}  # space -> thesis table of Wilcoxon p-values
_FILES = {
    "4.3": "table4.3_wilcoxon_svm.tsv",
    "4.4": "table4.4_svm_space_test_error.tsv",
    "4.5": "table4.5_wilcoxon_sklearn.tsv",
    "4.6": "table4.6_sklearn_space_test_error.tsv",
}


def _path(table: str) -> Path:
    if table not in _FILES:
        raise ValueError(f"unknown thesis table {table!r}; expected one of {sorted(_FILES)}")
    return TABLES_DIR / _FILES[table]


def thesis_errors(table: str) -> tuple[pd.DataFrame, pd.Series]:
    """Table 4.4 or 4.6: ``(methods × dataset abbreviations test error in %, average ranks)``.

    Rows in the thesis's order; columns in the thesis's order (``adlt`` … ``wine``).
    """
    if table not in ERROR_TABLES.values():
        raise ValueError(f"Table {table} holds no test errors; expected 4.4 or 4.6")
    raw = pd.read_csv(_path(table), sep="\t", index_col="method")
    return raw.drop(columns="ranks").rename_axis(columns=None), raw["ranks"].rename("rank")


def thesis_wilcoxon(table: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 4.3 or 4.5: ``(p-values, worse)``, both methods × methods in the thesis's order.

    ``p-values``: the printed two-decimal p (NaN on the diagonal); ``worse``: True where the
    cell is in parentheses, i.e. the row method has the worse average rank (thesis convention).
    """
    if table not in WILCOXON_TABLES.values():
        raise ValueError(f"Table {table} holds no Wilcoxon p-values; expected 4.3 or 4.5")
    return read_wilcoxon_table(_path(table))


def thesis_datasets() -> pd.DataFrame:
    """The 18 UCI datasets of Chapter 4: ``abbrev`` (the tables' columns), ``name_in_thesis``,
    ``likely_source_name`` (our catalog name), in the tables' column order."""
    table = pd.read_csv(TABLES_DIR / "datasets-ch4-ch5.csv")
    return table[table["used_in"].str.contains("ch4")].reset_index(drop=True)


def abbreviations() -> dict[str, str]:
    """Catalog name → the thesis's column abbreviation (``statlog-image`` → ``s-im``)."""
    table = thesis_datasets()
    return dict(zip(table["likely_source_name"], table["abbrev"], strict=True))
