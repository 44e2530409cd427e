"""Dataset catalog, loaders, checksums and the download path."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

import hpo.data.catalog as data_catalog
from hpo.data import download as data_download
from hpo.data.catalog import DatasetError, catalog, load_dataset, resolve_name
from hpo.data.openml_sets import load_openml
from hpo.data.sklearn_sets import SKLEARN_DATASETS


def test_catalog_lists_121_uci_datasets_and_the_thesis_118() -> None:
    assert len(data_catalog.dataset_names("uci121")) == 121
    assert len(data_catalog.dataset_names("uci121", thesis_118=True)) == 118
    assert set(data_catalog.dataset_names("sklearn")) == set(SKLEARN_DATASETS)
    assert not {"balloons", "lenses", "trains"} & set(data_catalog.dataset_names(thesis_118=True))


def test_every_available_uci_dataset_matches_the_catalog(uci_dir: Path) -> None:
    missing, checked = [], 0
    for name in data_catalog.dataset_names("uci121"):
        entry = catalog().loc[name]
        try:
            ds = load_dataset(name, uci_dir)
        except DatasetError as err:
            assert "missing" in str(err) or "not part of" in str(err), err
            missing.append(name)
            continue
        checked += 1
        assert ds.X.shape == (int(entry["n_rows"]), int(entry["n_features"])), name
        assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
        assert ds.has_predefined_test == (entry["predefined_test"] == "yes"), name
        if ds.has_predefined_test:
            assert ds.X_test.shape == (int(entry["n_rows_test"]), int(entry["n_features"]))
        assert ds.n_classes == int(entry["n_classes"]), name
    print(f"loaded {checked} datasets; missing: {missing}")
    assert missing == ["miniboone"]
    assert checked == 120


def test_thesis_spellings_resolve() -> None:
    assert resolve_name("cardiotocography-10clas") == "cardiotocography-10clases"
    assert resolve_name("statlog-australian-cred") == "statlog-australian-credit"
    assert resolve_name("abalone") == "abalone"


def test_unknown_dataset_names_the_close_matches_first() -> None:
    with pytest.raises(DatasetError, match=r"unknown dataset 'abalon' \(did you mean 'abalone'"):
        resolve_name("abalon")


def test_sklearn_sets_load_standardized() -> None:
    ds = load_dataset("sklearn-wine")
    assert ds.X.shape == (178, 13) and ds.n_classes == 3
    np.testing.assert_allclose(ds.X.mean(axis=0), 0.0, atol=1e-12)


def _copy_dataset(uci_dir: Path, name: str, dest: Path) -> Path:
    shutil.copytree(uci_dir / name, dest / name)
    return dest / name


def test_missing_and_malformed_files_say_which_file(uci_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"missing data file .*iris_R\.dat.*make data"):
        load_dataset("iris", tmp_path)
    folder = _copy_dataset(uci_dir, "iris", tmp_path)
    target = folder / "iris_R.dat"
    target.chmod(0o644)
    target.write_text("\tf1\tclase\n1\t0.5\t0\n")
    with pytest.raises(DatasetError, match=r"malformed data file .*iris_R\.dat"):
        load_dataset("iris", tmp_path)


def test_verify_flags_mismatches_and_missing_files(uci_dir: Path, tmp_path: Path) -> None:
    for name in ("iris", "adult"):
        _copy_dataset(uci_dir, name, tmp_path)
    (tmp_path / "iris" / "iris_R.dat").chmod(0o644)
    with (tmp_path / "iris" / "iris_R.dat").open("a") as handle:
        handle.write("\n")
    status = {(c.dataset, c.file): c.status for c in data_download.verify(tmp_path)}
    assert status[("iris", "iris_R.dat")] == "mismatch"
    assert status[("adult", "adult_train_R.dat")] == "ok"
    assert status[("abalone", "abalone_R.dat")] == "missing"
    assert status[("miniboone", "miniboone_R.dat")] == "missing"


def _archive(source: Path, names: list[str], dest: Path) -> str:
    path = dest / "data.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in names:
            tar.add(source / name, arcname=f"data/{name}")
    return path.as_uri()


def test_download_unpacks_and_verifies(uci_dir: Path, tmp_path: Path) -> None:
    url = _archive(uci_dir, ["abalone", "iris"], tmp_path)
    target = data_download.download(tmp_path / "uci", url=url)
    assert load_dataset("iris", target).X.shape == (150, 4)


def test_download_rejects_a_corrupted_archive(uci_dir: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    for name in ("abalone", "iris"):
        _copy_dataset(uci_dir, name, staging)
    (staging / "iris" / "iris_R.dat").chmod(0o644)
    (staging / "iris" / "iris_R.dat").write_bytes(b"corrupted")
    url = _archive(staging, ["abalone", "iris"], tmp_path)
    with pytest.raises(DatasetError, match="fail their checksum: iris/iris_R.dat"):
        data_download.download(tmp_path / "uci", url=url)


def test_download_reports_being_offline(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="could not download"):
        data_download.download(tmp_path / "uci", url=(tmp_path / "nowhere.tar.gz").as_uri())
    assert not (tmp_path / "uci").exists()


def test_openml_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import openml

    monkeypatch.setattr(openml.config, "server", "http://127.0.0.1:9/api/v1/xml")
    with pytest.raises(DatasetError, match="unreachable.*network"):
        load_openml(46, timeout_s=2)


def test_rebuilt_file_mismatch_is_a_warning(uci_dir: Path, tmp_path: Path) -> None:
    _copy_dataset(uci_dir, "adult", tmp_path)
    path = tmp_path / "adult" / "adult_train_R.dat"
    path.chmod(0o644)
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.warns(UserWarning, match="rebuilt from other public sources"):
        data_download.report_verification(tmp_path)
