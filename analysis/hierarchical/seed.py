"""The seed's published numbers (Bermúdez-Chacón 2014, Table 5.1), as printed, transcribed
in ``seed_tables/``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

TABLES = Path(__file__).parent / "seed_tables"


@lru_cache(maxsize=1)
def table_5_1() -> pd.DataFrame:
    """Table 5.1 indexed by the seed's dataset name: default worst/best, optimized, the printed
    boost (%), the selected family and the group (standard or biological)."""
    return pd.read_csv(TABLES / "table_5_1.tsv", sep="\t").set_index("dataset")
