"""Results files: one parquet file per finished run, written atomically, plus provenance.

A results file exists if and only if its run finished: it is written under a temporary name in the
same folder and renamed into place, so a sweep that skips runs whose file exists resumes without
losing, duplicating or truncating anything. The schema is documented in the README ("Results").
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis import layout
from experiments.run_tables import RunResult
from experiments.spec import RunSpec
from hpo.optimizers import optimizer_versions

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
REPO_ROOT = Path(__file__).resolve().parents[1]


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
    """The run's file name below a runs folder (:func:`analysis.layout.run_filename`)."""
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


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# The sidecar's rows are sorted within each block: delta-encoded they cost almost nothing, so the
# size is mostly the predictions' own entropy (about 1 byte per prediction, benchmarks/
# predictions_size.py).
SIDECAR_OPTIONS = {
    "compression": "zstd",
    "use_dictionary": ["model", "split", "fold", "prediction"],
    "column_encoding": {"row": "DELTA_BINARY_PACKED"},
}


def write_file_atomically(path: Path, write: Callable[[str], None], overwrite: bool) -> None:
    """``write(temporary)`` to a temporary file in ``path``'s folder, with the process's umask
    (mkstemp's 0600 would hide results from collaborators), then link it to ``path`` (refuses to
    overwrite) or replace ``path``; the temporary file is removed whatever happens."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        os.chmod(temporary, 0o666 & ~_umask())
        write(temporary)
        if overwrite:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # atomic, and fails instead of overwriting a finished file
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def write_json_atomically(path: Path, record: Mapping[str, Any]) -> None:
    """Write ``record`` as JSON to ``path`` atomically, replacing what was there
    (:func:`write_file_atomically`): a reader sees the old record or the new one, never a part."""
    text = json.dumps(record, indent=1, default=str)
    write_file_atomically(path, lambda file: Path(file).write_text(text), overwrite=True)


def _write_parquet(arrow: pa.Table, path: Path, overwrite: bool, **options: Any) -> None:
    """Write ``arrow`` to ``path`` atomically (:func:`write_file_atomically`)."""
    write_file_atomically(path, lambda file: pq.write_table(arrow, file, **options), overwrite)


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
        _write_parquet(sidecar, layout.predictions_path(path), overwrite=True, **SIDECAR_OPTIONS)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    metadata_ = dict(arrow.schema.metadata or {})
    metadata_[b"hpo.run_spec"] = spec_json
    metadata_[b"hpo.git_revision"] = provenance()["git_revision"].encode()
    _write_parquet(arrow.replace_schema_metadata(metadata_), path, overwrite=False)
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


def read_predictions(run_path: Path) -> pd.DataFrame:
    """The predictions sidecar of a run file (layout: README, "Predictions sidecar")."""
    sidecar = layout.predictions_path(run_path)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar} not found: the run kept no predictions")
    return pd.read_parquet(sidecar)


def read_run(path: Path) -> pd.DataFrame:
    """Read one results file."""
    return pd.read_parquet(path)


def without_timing(table: pd.DataFrame) -> pd.DataFrame:
    """The table minus timing and provenance-time columns (for determinism checks)."""
    return table.drop(columns=[c for c in TIMING_COLUMNS if c in table.columns])


def bit_differences(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """The columns whose values differ in any bit (floats by their IEEE-754 patterns)."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return [f"shape or columns differ: {list(a.columns)} vs {list(b.columns)}"]
    differing = []
    for column in a.columns:
        x, y = a[column].to_numpy(), b[column].to_numpy()
        if x.dtype.kind == "f":
            same = x.dtype == y.dtype and np.array_equal(x.view(np.uint64), y.view(np.uint64))
        else:
            same = pd.Series(x).equals(pd.Series(y))
        if not same:
            differing.append(column)
    return differing


def spec_from_file(path: Path) -> dict[str, Any]:
    """The run specification stored in a results file's metadata."""
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[b"hpo.run_spec"])


def inspect_results_file(path: Path, spec: RunSpec) -> str | None:
    """Why ``path`` is not a finished run of ``spec`` (None when it is): its footer and its
    first column must read, its stored run specification must be ``spec``'s, it must have rows.
    """
    try:
        meta = pq.read_metadata(path)
        pq.read_table(path, columns=["row_type"])
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported as such
        return f"unreadable ({type(err).__name__}: {str(err).splitlines()[0]})"
    stored = (meta.metadata or {}).get(b"hpo.run_spec")
    if stored is None:
        return "no run specification in its metadata"
    ours = json.loads(json.dumps(spec.identity(), sort_keys=True, default=str))
    if json.loads(stored) != ours:
        return "its stored run specification is not this run's"
    if meta.num_rows < 1:
        return "no rows"
    return None


def stored_revision(path: Path) -> str:
    """The git revision of the code that wrote a results file."""
    meta = pq.read_metadata(path).metadata or {}
    if b"hpo.git_revision" in meta:
        return meta[b"hpo.git_revision"].decode()
    return str(pq.read_table(path, columns=["git_revision"]).column(0)[0])


def is_stale(path: Path) -> bool:
    """Whether a results file was written by another code revision than this checkout's."""
    return stored_revision(path) != provenance()["git_revision"]


def set_aside(path: Path, reason: str) -> Path:
    """Move a results file (and its sidecar) to ``<file>.<reason>[.k]``; nothing is deleted."""
    target = path.with_name(f"{path.name}.{reason}")
    k = 1
    while target.exists():
        target = path.with_name(f"{path.name}.{reason}.{k}")
        k += 1
    os.replace(path, target)
    sidecar = layout.predictions_path(path)
    if sidecar.exists():
        os.replace(sidecar, sidecar.with_name(target.name.replace(path.name, sidecar.name, 1)))
    return target


def ensure_writable(folder: Path) -> None:
    """Raise ``PermissionError`` naming ``folder`` unless results can be written there."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as err:
        raise PermissionError(
            f"results folder {folder} is not writable ({err.strerror or err}); "
            "choose another with results_dir=... (sweeps: --results-root or HPO_RESULTS_ROOT)"
        ) from err
