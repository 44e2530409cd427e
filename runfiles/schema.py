"""The columns of a run's files and their types (README, "Results schema" and "Predictions
sidecar"): the schema's version, the columns of measured time (left out of every comparison of
results), the typed columns of a results table and its first columns, and the predictions
sidecar's columns and storage options."""

from __future__ import annotations

SCHEMA_VERSION = 2  # 2: experiment, failure, n_members, members columns; predictions sidecar
TIMING_COLUMNS = (
    "fit_seconds",
    "optimizer_seconds",
    "elapsed_seconds",
    "test_fit_seconds",
    "ms_holdout_fit_seconds",
    "selection_fit_seconds",
    "selection_stage_seconds",
    "run_seconds",
    "finished_at",
    "cpu_seconds",  # seed 004's runs: CPU seconds spent, the run's own and its optimiser's
    "wall_seconds",
    "optimizer_seconds_total",
    "setup_seconds",
)

# The results schema's typed columns (README, "Results schema"); a column a run lacks is skipped.
STRING_COLUMNS = (
    "row_type", "method", "rule", "run_id", "run_method", "experiment", "optimizer", "dataset",
    "protocol", "space", "status", "config_hash", "method_hash", "versions", "git_revision",
    "finished_at", "dataset_sha256",
)  # fmt: skip
INTEGER_COLUMNS = (
    "batch",
    "n_fits",
    "fit_limit_hits",
    "iteration",
    "incumbent_iteration",
    "ms_rank",
)
BOOLEAN_COLUMNS = ("test_fit_limit_hit",)
FIRST_COLUMNS = (
    "run_id", "row_type", "method", "rule", "dataset", "protocol", "repetition", "seed",
    "iteration",
)  # fmt: skip

PREDICTION_KINDS = {"valid": 0, "selection": 1, "test": 2}  # the sidecar's ``split`` codes
PREDICTION_COLUMNS = ("model", "split", "fold", "row", "prediction")
PROBABILITY_PREFIX = "proba_"  # proba_<class>: the sidecar's probability columns (seed 003)

# The sidecar's rows are sorted within each block: delta-encoded they cost almost nothing, so the
# size is mostly the predictions' own entropy (about 1 byte per prediction, benchmarks/
# predictions_size.py).
SIDECAR_OPTIONS = {
    "compression": "zstd",
    "use_dictionary": ["model", "split", "fold", "prediction"],
    "column_encoding": {"row": "DELTA_BINARY_PACKED"},
}
