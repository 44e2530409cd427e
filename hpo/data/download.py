"""The UCI-121 archive: download it, verify every data file against the catalog's SHA-256 sums,
and rebuild the catalog (``data/catalog.tsv``) from a copy."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hpo.data.catalog import catalog
from hpo.data.sklearn_sets import SKLEARN_DATASETS, load_sklearn
from hpo.data.types import DatasetError
from hpo.data.uci121 import UCI121_URL, uci121_dir


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file at ``path``, in hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileCheck:
    """The verification of one data file against the catalog."""

    dataset: str
    file: str
    status: str  # ok | missing | mismatch | mismatch-rebuilt | unchecked
    detail: str = ""


def verify(data_dir: str | os.PathLike[str] | None = None) -> list[FileCheck]:
    """Check every UCI-121 data file under ``data_dir`` against the catalog's SHA-256 sums.

    Files the shared copy rebuilt from other public sources (``status == rebuilt``) may differ
    from the authors' archive: their mismatch is ``mismatch-rebuilt`` (a warning, not an error).
    """
    root = uci121_dir(data_dir)
    checks = []
    for name, entry in catalog()[catalog()["source"] == "uci121"].iterrows():
        sums = entry["sha256"].split("+") if entry["sha256"] else []
        for index, file in enumerate(entry["files"].split("+")):
            path = root / name / file
            expected = sums[index] if index < len(sums) and sums[index] != "-" else ""
            if not path.is_file():
                checks.append(FileCheck(name, file, "missing"))
            elif not expected:
                checks.append(FileCheck(name, file, "unchecked", "no checksum in the catalog"))
            elif sha256_of(path) == expected:
                checks.append(FileCheck(name, file, "ok"))
            else:
                rebuilt = entry["status"] == "rebuilt"
                checks.append(FileCheck(name, file, "mismatch-rebuilt" if rebuilt else "mismatch"))
    return checks


def download(
    dest: str | os.PathLike[str] | None = None, url: str = UCI121_URL, force: bool = False
) -> Path:
    """Download the authors' archive, unpack it into ``dest`` and verify it.

    Nothing is written to ``dest`` unless the archive was fetched and unpacked completely; an
    existing copy is kept unless ``force``. Raises :class:`DatasetError` on failure.
    """
    target = uci121_dir(dest)
    if target.exists() and any(target.iterdir()) and not force:
        print(f"{target} already exists; verifying it (use --force to download again)")
        report_verification(target)
        return target
    with tempfile.TemporaryDirectory(dir=target.parent if target.parent.exists() else None) as tmp:
        archive = Path(tmp) / "data.tar.gz"
        print(f"downloading {url} ...")
        try:
            urllib.request.urlretrieve(url, archive)  # noqa: S310 - fixed public URL or file://
        except OSError as err:
            raise DatasetError(f"could not download {url} ({err}); are you offline?") from err
        unpacked = Path(tmp) / "unpacked"
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as err:
            raise DatasetError(f"could not unpack {archive}: {err}") from err
        root = _collection_root(unpacked)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(root), target)
    report_verification(target)
    return target


def _collection_root(unpacked: Path) -> Path:
    """The folder of the unpacked archive that holds one sub-folder per dataset."""
    for candidate in [unpacked, *sorted(p for p in unpacked.rglob("*") if p.is_dir())]:
        if (candidate / "abalone").is_dir() and (candidate / "iris").is_dir():
            return candidate
    raise DatasetError(f"the archive holds no UCI-121 dataset folders (looked in {unpacked})")


def report_verification(root: Path) -> None:
    """Verify the copy at ``root`` and print the counts; warn of each rebuilt file that differs
    and raise :class:`DatasetError` naming the files that fail their checksum."""
    checks = verify(root)
    counts = pd.Series([c.status for c in checks]).value_counts().to_dict()
    print(f"verified {len(checks)} files under {root}: {counts}")
    for check in checks:
        if check.status == "mismatch-rebuilt":
            warnings.warn(
                f"{check.dataset}/{check.file}: checksum differs from the catalog, which "
                "records a copy rebuilt from other public sources (see README, data provenance)",
                stacklevel=2,
            )
    bad = [c for c in checks if c.status == "mismatch"]
    if bad:
        names = ", ".join(f"{c.dataset}/{c.file}" for c in bad[:10])
        raise DatasetError(f"{len(bad)} files fail their checksum: {names}")


def build_catalog(source_dir: Path, thesis_names_csv: Path) -> pd.DataFrame:
    """Rebuild ``data/catalog.tsv`` from a UCI-121 copy (its ``datasets.tsv``) and the thesis's
    dataset list; adds checksums of every data file and the scikit-learn sets."""
    meta = pd.read_csv(source_dir / "datasets.tsv", sep="\t", keep_default_na=False)
    thesis = pd.read_csv(thesis_names_csv)
    thesis_by_fd = dict(zip(thesis["fd2014_name"], thesis["dataset"], strict=True))
    rows = []
    for entry in meta.itertuples(index=False):
        files = entry.files.split("+")
        sums = [
            sha256_of(source_dir / entry.name / f)
            if (source_dir / entry.name / f).is_file()
            else "-"
            for f in files
        ]
        rows.append(
            {
                "name": entry.name,
                "thesis_name": thesis_by_fd.get(entry.name, ""),
                "source": "uci121",
                "files": entry.files,
                "sha256": "+".join(sums),
                "n_rows": entry.n_rows_main,
                "n_rows_test": entry.n_rows_test,
                "n_features": entry.n_features,
                "n_classes": entry.classes_seen or entry.n_classes_meta,
                "predefined_test": "yes" if len(files) == 2 else "no",
                "in_thesis_118": entry.in_thesis_118,
                "status": "absent" if entry.status.startswith("absent") else entry.status,
            }
        )
    for name in SKLEARN_DATASETS:
        ds = load_sklearn(name)
        rows.append(
            {
                "name": name,
                "thesis_name": "",
                "source": "sklearn",
                "files": "",
                "sha256": "",
                "n_rows": len(ds.y),
                "n_rows_test": "",
                "n_features": ds.X.shape[1],
                "n_classes": "" if ds.task == "regression" else ds.n_classes,
                "predefined_test": "no",
                "in_thesis_118": "no",
                "status": "bundled",
            }
        )
    return pd.DataFrame(rows)
