"""A run's results file as this run's: its name (a hash of the run's identity), its provenance
(code revision, package versions), the one long table of its trace, outcome and stage rows with
the run's identity on every row, and writing it. Where files live, their columns and how they are
written and read atomically are :mod:`runfiles`' (the schema is documented in the README,
"Results")."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from experiments.configuration.spec import RunSpec
from experiments.run.run_tables import RunResult
from hpo.optimizers import optimizer_versions
from runfiles import layout
from runfiles.files import inspect_run_file, stored_revision, write_parquet
from runfiles.schema import (
    BOOLEAN_COLUMNS,
    FIRST_COLUMNS,
    INTEGER_COLUMNS,
    SCHEMA_VERSION,
    SIDECAR_OPTIONS,
    STRING_COLUMNS,
)

# Every package that can change a number of a run.
_PACKAGES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "pyarrow",
    "cma",
    "numba",
    "hydra-core",
    "omegaconf",
    "smac",
    "torch",  # seed 002's network
    "hyperopt",  # seed 002's TPE
    "hpo-thesis",
)
REPO_ROOT = Path(__file__).resolve().parents[2]


def config_hash(spec: RunSpec) -> str:
    """A short stable hash of everything the run's results depend on."""
    text = json.dumps(spec.identity(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def method_hash(spec: RunSpec) -> str:
    """A short stable hash of the method's part of the run: its optimizer family, settings and
    outside code, and the protocol flags its method file sets (reshuffling, a selection split).
    Two runs whose labels agree and whose method hashes differ ran different methods; the
    analysis refuses to pool them (:func:`analysis.load.check_one_method_per_label`)."""
    method = {
        "optimizer": spec.method.optimizer,
        "settings": dict(spec.method.settings),
        "outside_code": spec.outside_code(),
        "reshuffle": spec.task.protocol.reshuffle,
        "selection_split": spec.task.protocol.selection_split,
    }
    text = json.dumps(method, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_filename(spec: RunSpec) -> str:
    """The run's file name below a runs folder (:func:`runfiles.layout.run_filename`)."""
    return layout.run_filename(
        spec.task.dataset_identity,  # a data file by its content, under any path
        spec.method.name,
        spec.task.protocol_name,
        spec.seed,
        spec.repetition,
        config_hash(spec),
    )


def run_provenance(spec: RunSpec) -> dict[str, str]:
    """:func:`provenance` for ``spec``'s optimizer with its settings."""
    settings = json.dumps(dict(spec.method.settings), sort_keys=True, default=str)
    return provenance(spec.method.optimizer, settings)


@lru_cache(maxsize=8)
def provenance(optimizer: str = "", settings: str = "{}") -> dict[str, str]:
    """Package versions, Python, platform and git revision of this checkout; with the run's
    ``optimizer`` (a family or a class's dotted path) and its ``settings`` (JSON), the versions
    they add: an outside class's module and version, an adapter's library
    (:func:`hpo.optimizers.optimizer_versions`)."""
    versions = optimizer_versions(optimizer, json.loads(settings)) if optimizer else {}
    for package in _PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "unknown"
    versions["python"] = platform.python_version()
    try:
        revision = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        revision += "-dirty" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        revision = "unknown"
    return {"versions": json.dumps(versions, sort_keys=True), "git_revision": revision}


def assemble(
    spec: RunSpec,
    trace: pd.DataFrame,
    outcomes: pd.DataFrame,
    run_seconds: float,
    data_provenance: dict[str, Any] | None = None,
    stage_rows: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """One long table: trace rows then outcome rows (then the rows of the run's post-run
    stages under their row types, e.g. seed 003's ``selection`` rows), with the run's identity
    (and the data's checksum and split sizes) on every row."""
    trace = trace.assign(row_type="trace", method=spec.method.name, rule=pd.NA)
    outcomes = outcomes.assign(row_type="outcome")
    parts = [trace, outcomes]
    for row_type, rows in (stage_rows or {}).items():
        parts.append(rows.assign(row_type=row_type, method=spec.method.name, rule=pd.NA))
    table = pd.concat(parts, ignore_index=True, sort=False)
    columns = _identity_columns(spec, trace, run_seconds, data_provenance or {})
    for column, value in columns.items():
        table[column] = value
    return _typed(table)


def _identity_columns(
    spec: RunSpec, trace: pd.DataFrame, run_seconds: float, data_provenance: Mapping[str, Any]
) -> dict[str, Any]:
    """What every row of a run's table carries: its identity, provenance and timing."""
    digest = config_hash(spec)  # once: the identity fingerprints the outside code and data file
    return {
        "run_id": f"{spec.method.name}:{spec.task.dataset}:{spec.task.protocol_name}:{spec.seed}:"
        f"{spec.repetition}:{digest}",
        "run_method": spec.method.name,
        "experiment": spec.outputs.experiment,
        "optimizer": spec.method.optimizer,
        "dataset": spec.task.dataset,
        "protocol": spec.task.protocol_name,
        "space": spec.task.space_name,
        "reshuffle": spec.task.protocol.reshuffle,
        "selection_split": spec.task.protocol.selection_split,
        "budget": spec.budget.evaluations,
        "seed": spec.seed,
        "repetition": spec.repetition,
        "status": "ok",
        "distinct_valid_losses": int(trace["valid_loss"].nunique()),  # 1: stuck on a plateau
        "config_hash": digest,
        "method_hash": method_hash(spec),
        "schema_version": SCHEMA_VERSION,
        **run_provenance(spec),
        **data_provenance,
        "run_seconds": run_seconds,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the schema's column types and its first columns first."""
    strings = [c for c in STRING_COLUMNS if c in table]
    table[strings] = table[strings].astype("string")
    for column in INTEGER_COLUMNS:
        if column in table:
            table[column] = table[column].astype("Int64")
    for column in BOOLEAN_COLUMNS:
        if column in table:
            table[column] = table[column].astype("boolean")
    first = list(FIRST_COLUMNS)
    return table[first + [c for c in table.columns if c not in first]]


def write_atomic(
    table: pd.DataFrame, path: Path, spec: RunSpec, predictions: pd.DataFrame | None = None
) -> Path:
    """Write ``table`` to ``path`` (and ``predictions`` to its sidecar first) through temporary
    files and renames; never overwrite a finished results file.

    The sidecar is written before the results file, so a results file never lacks the sidecar
    its run asked for; a sidecar without a results file is left by an unfinished attempt and is
    replaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise FileExistsError(f"{path} exists; finished results are never overwritten")
    spec_json = json.dumps(spec.identity(), sort_keys=True, default=str).encode()
    if predictions is not None:
        sidecar = pa.Table.from_pandas(predictions, preserve_index=False)
        sidecar = sidecar.replace_schema_metadata({b"hpo.run_spec": spec_json})
        write_parquet(sidecar, layout.predictions_path(path), overwrite=True, **SIDECAR_OPTIONS)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    metadata_ = dict(arrow.schema.metadata or {})
    metadata_[b"hpo.run_spec"] = spec_json
    metadata_[b"hpo.git_revision"] = provenance()["git_revision"].encode()
    write_parquet(arrow.replace_schema_metadata(metadata_), path, overwrite=False)
    return path


def write_run(result: RunResult, path: Path, spec: RunSpec, run_seconds: float) -> Path:
    """Write a finished run's results file (and its predictions sidecar)."""
    table = assemble(
        spec,
        result.trace,
        result.outcomes,
        run_seconds,
        dict(result.data_provenance),
        result.stage_rows,
    )
    return write_atomic(table, path, spec, result.predictions)


def inspect_results_file(path: Path, spec: RunSpec) -> str | None:
    """Why ``path`` is not a finished run of ``spec`` (None when it is;
    :func:`runfiles.files.inspect_run_file` with ``spec``'s identity)."""
    return inspect_run_file(path, spec.identity())


def is_stale(path: Path) -> bool:
    """Whether a results file was written by another code revision than this checkout's."""
    return stored_revision(path) != provenance()["git_revision"]
