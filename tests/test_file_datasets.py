"""A user's own data as a dataset, the task taken from the data, and sources a user adds.

``dataset=file:PATH[:COLUMN]`` reads a CSV or parquet file; ``openml:<id>`` decides regression
from a numeric target (``tests/data/openml_numeric_target.csv``: 60 generated rows shaped like
OpenML's diamonds, id 42225 — carat, cut, depth and a numeric ``price``; not the real data).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from experiments.compose import compose_run
from experiments.runner import run
from hpo.data import catalog
from hpo.data.catalog import Source, dataset_task, load_dataset, register_source
from hpo.data.types import Dataset, DatasetError

REPO = Path(__file__).resolve().parents[1]
NUMERIC_TARGET = REPO / "tests" / "data" / "openml_numeric_target.csv"


@pytest.fixture
def iris_csv(tmp_path: Path) -> Path:
    from sklearn.datasets import load_iris

    bunch = load_iris(as_frame=True)
    frame = bunch.frame.drop(columns="target")
    frame["colour"] = np.where(bunch.target == 0, "red", "blue")  # a feature that is not numeric
    frame["species"] = np.asarray(bunch.target_names)[bunch.target]
    path = tmp_path / "iris.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_csv_with_named_classes_is_a_classification_set(iris_csv: Path) -> None:
    data = load_dataset(f"file:{iris_csv}:species")
    assert data.task == "classification" and data.y.dtype == np.int64
    assert sorted(np.unique(data.y)) == [0, 1, 2] and np.bincount(data.y).tolist() == [50] * 3
    assert data.X.shape == (150, 6)  # four numbers and the colour one-hot encoded
    assert dataset_task(f"file:{iris_csv}:species") == "classification"


def test_a_parquet_file_with_a_float_target_is_a_regression_set(tmp_path: Path) -> None:
    frame = pd.read_csv(NUMERIC_TARGET).rename(columns={"price": "target"})
    frame.to_parquet(tmp_path / "d.parquet")
    data = load_dataset(f"file:{tmp_path / 'd.parquet'}")  # the default target column
    assert data.task == "regression"
    np.testing.assert_array_equal(data.y, frame["target"].to_numpy())  # kept as it is
    assert dataset_task(f"file:{tmp_path / 'd.parquet'}") == "regression"


def test_integer_labels_are_classes(tmp_path: Path) -> None:
    frame = pd.DataFrame({"x": np.arange(20.0), "target": np.tile([3, 7], 10)})
    frame.to_csv(tmp_path / "c.csv", index=False)
    data = load_dataset(f"file:{tmp_path / 'c.csv'}")
    assert data.task == "classification" and data.y.tolist() == [0, 1] * 10


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("file:{dir}/iris.csv", "has no target column 'target'; its columns: sepal length"),
        ("file:{dir}/none.csv", "dataset file '{dir}/none.csv' not found"),
        ("file:{dir}/iris.txt", "has an unknown suffix; valid: .csv, .parquet, .pq"),
        ("openml:diamonds", "an OpenML dataset is named openml:<id>"),
    ],
)
def test_a_bad_file_dataset_is_one_line(iris_csv: Path, name: str, message: str) -> None:
    directory = str(iris_csv.parent)
    with pytest.raises(DatasetError, match=message.format(dir=directory).replace("(", r"\(")):
        load_dataset(name.format(dir=directory))


def test_the_command_line_refuses_a_missing_target_column_and_writes_nothing(
    iris_csv: Path, tmp_path: Path, isolated_env: dict
) -> None:
    results = tmp_path / "results"
    command = [sys.executable, "run.py", f"dataset=file:{iris_csv}:kind", f"results_dir={results}"]
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: dataset file '{iris_csv}' has no target column 'kind'")
    assert len(done.stderr.splitlines()) == 1 and not results.exists()


def test_a_run_on_a_file_dataset(iris_csv: Path) -> None:
    spec = compose_run([f"dataset=file:{iris_csv}:species", "optimizer=rs", "budget=3"])
    result = run(spec)
    assert len(result.trace) == 3 and result.outcomes["test_error"].between(0, 1).all()
    assert result.data_provenance["dataset_sha256"] == load_dataset(spec.dataset).checksum()


def _fake_openml(monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, target: str) -> None:
    """OpenML's client answering with ``frame`` (no network): its ``get_data`` returns the
    features and the target as the client does, nominal columns as categories."""
    import openml

    frame = frame.copy()
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = frame[column].astype("category")

    def get_data(target: str, dataset_format: str) -> tuple:
        return frame.drop(columns=target), frame[target], None, None

    fake = SimpleNamespace(default_target_attribute=target, get_data=get_data)
    monkeypatch.setattr(openml.datasets, "get_dataset", lambda *a, **k: fake)
    monkeypatch.setattr(catalog, "_check_reachable", lambda url, timeout_s: None)


def test_openml_decides_regression_from_a_numeric_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HPO_OPENML_DIR", str(tmp_path))
    frame = pd.read_csv(NUMERIC_TARGET)
    _fake_openml(monkeypatch, frame, "price")
    name = "openml:999001"  # not in any list of this project: only the data can say
    assert dataset_task(name) == "classification"  # before a fetch nothing is known
    data = load_dataset(name)
    assert data.task == "regression" and data.X.shape == (60, 6)  # cut one-hot encoded
    assert abs(data.y.mean()) < 1e-12  # z-scored, as every OpenML regression target
    assert dataset_task(name) == "regression"  # the cached file answers now
    monkeypatch.setattr(catalog, "_fetch_openml", lambda *a: pytest.fail("fetched again"))
    np.testing.assert_array_equal(load_dataset(name).y, data.y)


def test_openml_keeps_a_nominal_target_as_classes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HPO_OPENML_DIR", str(tmp_path))
    _fake_openml(monkeypatch, pd.read_csv(NUMERIC_TARGET), "cut")
    data = load_dataset("openml:999002")
    assert data.task == "classification" and sorted(np.unique(data.y)) == [0, 1, 2, 3]


def test_a_user_registers_a_source(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(name: str, data_dir: object) -> Dataset:
        size = int(name.split(":")[1])
        X = np.arange(2.0 * size).reshape(size, 2)
        return Dataset(name, X, (X[:, 0] > size).astype(np.int64))

    monkeypatch.setitem(catalog.SOURCES, "toy", None)  # removed again after the test
    register_source("toy", Source(load, lambda name: "classification", lambda name: None))
    data = load_dataset("toy:40")
    assert data.name == "toy:40" and data.X.shape == (40, 2)
    assert dataset_task("toy:40") == "classification"
