"""Loaders for the seed's own numbers, copied in ``seed_tables/`` (see its README).

Every value returned here is **the seed's number** (Jůzlová 2018, §2.2: Tables 2.2–2.6 and the
per-bracket medians of §2.2.1.4, on the real MNIST-basic and MRBI, 10 runs), never ours.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

TABLES_DIR = Path(__file__).resolve().parent / "seed_tables"
ERROR_FILES = {"mnist": "table2.2_mnist_error.tsv", "mrbi": "table2.4_mrbi_error.tsv"}
ERROR_COLUMNS = {
    "val_mean": "valid mean", "val_median": "valid median", "val_std": "valid std",
    "test_mean": "test mean", "test_median": "test median", "test_std": "test std",
}  # fmt: skip
RUNS = 10  # §2.1.2: 10 runs per method


def _read(name: str, index: str | list[str]) -> pd.DataFrame:
    return pd.read_csv(TABLES_DIR / name, sep="\t").set_index(index)


def error_table(part: str) -> pd.DataFrame | None:
    """Table 2.2 (``mnist``) or 2.4 (``mrbi``): per method, validation and test error (%) mean,
    median, std, and ``runs``; None for a part the seed did not run."""
    if part not in ERROR_FILES:
        return None
    return _read(ERROR_FILES[part], "method").rename(columns=ERROR_COLUMNS).assign(runs=RUNS)


def ard_table() -> pd.Series:
    """Table 2.3: median 1/length-scale per MNIST hyperparameter (our parameter names)."""
    return _read("table2.3_mnist_ard.tsv", "hyperparameter")["inverse_length_scale"]


def bracket_medians(part: str) -> dict[int, float]:
    """§2.2.1.4: median validation error (%) of the best configuration per Hyperband bracket,
    keyed by the bracket's number of configurations (MNIST only; {} otherwise)."""
    if part != "mnist":
        return {}
    table = _read("text_mnist_hyperband_brackets.tsv", "bracket_configurations")
    return {int(n): float(v) for n, v in table["median_best_validation_error"].items()}


def generated_layers() -> pd.DataFrame:
    """Table 2.5: rows (method, layers), columns ``all iterations``, ``last 10 iterations``."""
    table = _read("table2.5_mrbi_layers_generated.tsv", ["method", "layers"])
    return table.rename(columns=lambda c: c.replace("_", " "))


def finished_layers() -> pd.DataFrame:
    """Table 2.6: rows (HYPERBAND, layers), columns ``all brackets``, ``first 3 brackets``."""
    table = _read("table2.6_mrbi_layers_finished_hyperband.tsv", ["method", "layers"])
    return table.rename(columns=lambda c: c.replace("_", " "))
