"""Loaders for the thesis's Chapter-5 result tables, copied in ``thesis_tables/`` (see its README).

Every value returned here is **the thesis's number** (Lévesque 2018, §5.5.1), never ours: Table 5.2
(mean test error per method × dataset over 10 repetitions, and average ranks), Table 5.3 (pairwise
Wilcoxon p-values across the 24 datasets, rows 10–11 repaired), the 24 datasets' column labels,
and the numbers the thesis states in its text (Friedman p, Nemenyi CD, per-dataset significance
counts). Reports place them next to the numbers ``analysis.stats`` computes from our runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.thesis_comparison import read_wilcoxon_table

TABLES_DIR = Path(__file__).resolve().parent / "thesis_tables"
ERRORS_FILE = "table5.2_conditional_test_error.tsv"
WILCOXON_FILE = "table5.3_wilcoxon_conditional_REPAIRED.tsv"

# The 11 methods in the order of Tables 5.2 and 5.3 (Table 5.2's spellings).
METHODS = (
    "RS", "Spearmint", "SMAC", "CMA", "GP-matern-noimpute", "GP-matern", "GP-cond",
    "GP-laplace", "GP-matern-ls", "GP-cond-ls", "GP-laplace-ls",
)  # fmt: skip
# Table 5.3's abbreviation of a Table 5.2 name.
TABLE_5_3_NAMES = {"GP-matern-noimp.": "GP-matern-noimpute"}
# The thesis's text (§5.5.1) and Fig 5.6.
FRIEDMAN_P = "9e-12"
NEMENYI_CD = 3.082  # k = 11, N = 24, alpha = 0.05 (Fig 5.6)
# Datasets where each method is significantly worse than the dataset's best (per-dataset Wilcoxon
# over repetitions, §5.5.1); the thesis states these three only.
SIGNIFICANTLY_WORSE = {"GP-matern-ls": 1, "SMAC": 10, "Spearmint": 14, "GP-cond-ls": 0}


def thesis_errors() -> tuple[pd.DataFrame, pd.Series]:
    """Table 5.2: ``(methods × dataset columns test error in %, average ranks)``.

    Rows in the thesis's order (:data:`METHODS`); columns in the thesis's order (``46`` …
    ``1049``, ``adlt`` … ``wine``).
    """
    raw = pd.read_csv(TABLES_DIR / ERRORS_FILE, sep="\t", index_col="method", dtype={"method": str})
    raw.columns = [str(c) for c in raw.columns]
    return raw.drop(columns="ranks").rename_axis(columns=None), raw["ranks"].rename("rank")


def thesis_wilcoxon() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5.3 (repaired): ``(p-values, worse)``, both 11 × 11 in the thesis's order with
    Table 5.2's method names.

    ``p-values``: the printed two-decimal p (NaN on the diagonal); ``worse``: True where the
    cell is in parentheses, i.e. the row method has the worse average rank.
    """
    return read_wilcoxon_table(TABLES_DIR / WILCOXON_FILE, TABLE_5_3_NAMES)


def thesis_datasets() -> pd.DataFrame:
    """The 24 datasets of Chapter 5: ``abbrev`` (Table 5.2's column), ``name_in_thesis``,
    ``likely_source_name`` (our catalog name for the UCI ones), ``source``."""
    table = pd.read_csv(TABLES_DIR / "datasets-ch4-ch5.csv", dtype=str)
    return table[table["used_in"].str.contains("ch5")].reset_index(drop=True)


def column_of_dataset() -> dict[str, str]:
    """Our dataset name → Table 5.2's column: UCI catalog names (``statlog-image`` → ``s-im``)
    and the OpenML ids as the runs name them (``openml:46`` → ``46``)."""
    table = thesis_datasets()
    names = {}
    for abbrev, name, source in zip(
        table["abbrev"], table["likely_source_name"], table["source"], strict=True
    ):
        names[f"openml:{abbrev}" if source == "OpenML" else name] = abbrev
    return names
