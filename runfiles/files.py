"""A run's files on disk: written atomically (a results file exists if and only if its run
finished: it is written under a temporary name in its folder and linked into place, never
overwriting one), read, compared bit by bit without the columns of measured time, checked to be
a finished run of a given identity, and set aside (never deleted)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from runfiles import layout
from runfiles.schema import TIMING_COLUMNS


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


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


def write_parquet(arrow: pa.Table, path: Path, overwrite: bool, **options: Any) -> None:
    """Write ``arrow`` to ``path`` atomically (:func:`write_file_atomically`)."""
    write_file_atomically(path, lambda file: pq.write_table(arrow, file, **options), overwrite)


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


def inspect_run_file(path: Path, identity: Mapping[str, Any]) -> str | None:
    """Why ``path`` is not a finished run of the run whose identity is ``identity`` (None when
    it is): its footer and its first column must read, its stored run specification must be
    ``identity``, it must have rows."""
    try:
        meta = pq.read_metadata(path)
        pq.read_table(path, columns=["row_type"])
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported as such
        return f"unreadable ({type(err).__name__}: {str(err).splitlines()[0]})"
    stored = (meta.metadata or {}).get(b"hpo.run_spec")
    if stored is None:
        return "no run specification in its metadata"
    ours = json.loads(json.dumps(identity, sort_keys=True, default=str))
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
