"""A user's own data as a dataset, the task taken from the data, and sources a user adds.

``dataset=file:PATH[:COLUMN]`` reads a CSV or parquet file; ``openml:<id>`` decides regression
from a numeric target (``tests/data/openml_numeric_target.csv``: 60 generated rows shaped like
OpenML's diamonds, id 42225 — carat, cut, depth and a numeric ``price``; not the real data).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.compose import compose_run
from experiments.run.results import config_hash, run_filename
from experiments.run.runner import run
from hpo.data import files, openml_sets, sources
from hpo.data.catalog import dataset_fingerprint, dataset_task, load_dataset
from hpo.data.sources import Source, register_source
from hpo.data.types import Dataset, DatasetError, zscore
from runfiles import layout

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
    assert result.data_provenance["dataset_sha256"] == load_dataset(spec.task.dataset).checksum()


def _without_timings(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if c.endswith("_seconds")])


def test_one_file_under_two_paths_gives_one_run(iris_csv: Path, tmp_path: Path) -> None:
    """A file's random streams come from its content: a copy of it elsewhere, named through a
    ``..`` spelling, gives the same splits, seeds and so every trace and outcome value."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(iris_csv, elsewhere / "copy.csv")
    names = [f"file:{iris_csv}:species", f"file:{elsewhere}/../elsewhere/copy.csv:species"]
    specs = [compose_run([f"dataset={n}", "optimizer=rs", "budget=3"]) for n in names]
    assert config_hash(specs[0]) == config_hash(specs[1])  # one identity: the content's
    assert specs[0].identity()["dataset"] == files.fingerprint(names[0])
    path = run_filename(specs[0])  # one results file: the second run finds the first's
    assert path == run_filename(specs[1]) and ":" not in path and "=" not in path
    assert path.startswith(f"file-sha256-{files.content_digest(iris_csv)}-species/")
    first, second = (run(spec) for spec in specs)
    pd.testing.assert_frame_equal(_without_timings(first.trace), _without_timings(second.trace))
    pd.testing.assert_frame_equal(
        _without_timings(first.outcomes), _without_timings(second.outcomes)
    )
    assert first.data_provenance == second.data_provenance


def test_a_changed_file_is_another_dataset(iris_csv: Path) -> None:
    name = f"file:{iris_csv}:species"
    before = load_dataset(name)
    digest = files.content_digest(iris_csv)
    assert before.stream_name == files.fingerprint(name) == f"file:sha256={digest}:species"
    assert len(digest) == 16 and before.name == name  # messages still name the path
    identity = config_hash(compose_run([f"dataset={name}", "optimizer=rs", "budget=3"]))
    pd.read_csv(iris_csv).iloc[:-10].to_csv(iris_csv, index=False)  # ten rows dropped
    assert config_hash(compose_run([f"dataset={name}", "optimizer=rs", "budget=3"])) != identity
    after = load_dataset(name)
    assert after.stream_name == files.fingerprint(name) != before.stream_name
    assert after.stream_name.endswith(":species") and len(after.y) == 140


def test_the_fingerprint_is_the_content_and_never_stale(iris_csv: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.csv"
    shutil.copyfile(iris_csv, copy)
    link = tmp_path / "link.csv"
    link.symlink_to(copy)
    fingerprint = files.fingerprint(f"file:{iris_csv}")
    assert fingerprint == f"file:sha256={files.content_digest(iris_csv)}:target"
    assert files.fingerprint(f"file:{copy}") == files.fingerprint(f"file:{link}") == fingerprint
    assert files.fingerprint(f"file:{copy}:target") == fingerprint  # the default target named
    assert files.fingerprint(f"file:{copy}:species") != fingerprint  # another target column
    # Rewritten with as many bytes (one letter changed) and a later modification time.
    text = copy.read_text()
    copy.write_text(text.replace("blue", "bluf", 1))
    stat = copy.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert copy.stat().st_size == iris_csv.stat().st_size
    changed = files.fingerprint(f"file:{copy}")
    assert changed != fingerprint and files.fingerprint(f"file:{link}") == changed
    copy.write_text(text[: len(text) // 2])  # and shorter: another size
    assert files.fingerprint(f"file:{copy}") not in (fingerprint, changed)
    copy.write_text(text)  # the first content again: the first fingerprint
    assert files.fingerprint(f"file:{copy}") == fingerprint
    with pytest.raises(DatasetError, match="not found"):
        files.fingerprint(f"file:{tmp_path / 'none.csv'}")


def test_a_built_in_dataset_streams_by_its_name(iris_csv: Path) -> None:
    data = load_dataset("sklearn-iris")
    assert data.streams is None and data.stream_name == data.name == "sklearn-iris"
    assert load_dataset("binary:sklearn-iris").stream_name == "binary:sklearn-iris"
    for name in ("sklearn-iris", "binary:sklearn-iris", "iris", "sklearn-diabetes"):
        assert dataset_fingerprint(name) is None  # a fixed collection: its name is its data
    name = f"file:{iris_csv}:species"
    fingerprint = files.fingerprint(name)
    assert dataset_fingerprint(name) == fingerprint == load_dataset(name).stream_name
    binary = load_dataset(f"binary:{name}")
    assert dataset_fingerprint(f"binary:{name}") == "binary:" + fingerprint == binary.stream_name


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
    monkeypatch.setattr(openml_sets, "_check_reachable", lambda url, timeout_s: None)


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
    monkeypatch.setattr(openml_sets, "_fetch_openml", lambda *a: pytest.fail("fetched again"))
    np.testing.assert_array_equal(load_dataset(name).y, data.y)


def test_an_openml_set_is_fingerprinted_by_its_cached_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HPO_OPENML_DIR", str(tmp_path))
    _fake_openml(monkeypatch, pd.read_csv(NUMERIC_TARGET), "cut")
    assert dataset_fingerprint("openml:999003") is None  # not cached: no content to hash
    data = load_dataset("openml:999003")
    assert data.stream_name == "openml:999003"  # an id names one set: streams by its name
    digest = files.content_digest(tmp_path / "openml-999003.npz")
    fingerprint = f"openml:999003:sha256={digest}"
    assert dataset_fingerprint("openml:999003") == fingerprint
    assert dataset_fingerprint("binary:openml:999003") == "binary:" + fingerprint
    with pytest.raises(DatasetError, match="an OpenML dataset is named openml:<id>"):
        dataset_fingerprint("openml:diamonds")


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

    monkeypatch.setitem(sources.SOURCES, "toy", None)  # removed again after the test
    register_source("toy", Source(load, lambda name: "classification", lambda name: None))
    data = load_dataset("toy:40")
    assert data.name == "toy:40" and data.X.shape == (40, 2)
    assert dataset_task("toy:40") == "classification"


# ------------------------------------------------ a file's preprocessing and the checks on it


def _write(tmp_path: Path, frame: pd.DataFrame, name: str = "d.csv") -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _small(rows: int = 40) -> pd.DataFrame:
    """Two numeric features, a category and two classes."""
    generator = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "x1": generator.normal(5.0, 3.0, rows),
            "x2": generator.normal(-2.0, 0.5, rows),
            "colour": np.where(np.arange(rows) % 3 == 0, "red", "blue"),
            "target": np.where(np.arange(rows) % 2 == 0, "yes", "no"),
        }
    )


def _refusal(name: str) -> str:
    with pytest.raises(DatasetError) as raised:
        load_dataset(name)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_file_is_standardised_as_the_bundled_sets_are(tmp_path: Path) -> None:
    """A CSV of a bundled set loads as that set, bit for bit (features z-scored over the whole
    file); ``standardize:false`` keeps the file's numbers; the bundled set is as it was."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    path = _write(tmp_path, bunch.frame, "breast.csv")
    bundled = load_dataset("sklearn-breast-cancer")
    expected = zscore(np.asarray(bunch.data, dtype=np.float64))
    np.testing.assert_array_equal(bundled.X, expected)  # the bundled set, as before
    data = load_dataset(f"file:{path}")
    assert data.checksum() == bundled.checksum()
    np.testing.assert_allclose(data.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(data.X.std(axis=0, ddof=1), 1.0)
    raw = load_dataset(f"file:{path}?standardize:false")
    np.testing.assert_array_equal(raw.X, bunch.data.to_numpy())
    np.testing.assert_array_equal(raw.y, data.y)
    assert raw.stream_name == data.stream_name == files.fingerprint(f"file:{path}")  # paired
    assert files.fingerprint(f"file:{path}:target?standardize:false") == (
        f"file:sha256={files.content_digest(path)}:target?standardize:false"
    )


def test_a_file_option_is_part_of_the_run_identity(iris_csv: Path) -> None:
    def identity(name: str) -> str:
        return config_hash(compose_run([f"dataset={name}", "optimizer=rs", "budget=3"]))

    name = f"file:{iris_csv}:species"
    assert identity(f"{name}?standardize:true") == identity(name)  # the default, named
    assert identity(f"{name}?standardize:false") != identity(name)
    assert _refusal(f"{name}?scale:no") == (
        f"dataset '{name}?scale:no': unknown option 'scale:no'; valid options (after a ?, "
        "joined by +): standardize:true, standardize:false, impute:none, impute:mean, "
        "impute:zero, task:data, task:classification, task:regression"
    )


def test_missing_feature_values_are_refused_or_imputed(tmp_path: Path) -> None:
    frame = _small()
    frame.loc[[3, 5], "x1"] = np.nan
    frame.loc[7, "colour"] = np.nan
    path = _write(tmp_path, frame)
    assert _refusal(f"file:{path}") == (
        f"dataset file '{path}': missing values in columns 'x1' (2), 'colour' (1); drop or fill "
        f"those rows first, or impute them: file:{path}:target?impute:mean (a column's mean) "
        "or ?impute:zero"
    )
    mean = load_dataset(f"file:{path}?impute:mean+standardize:false")
    assert mean.X[3, 0] == mean.X[5, 0] == frame["x1"].mean()
    assert mean.X[7, 2:].tolist() == [0.0, 0.0]  # no category: every one-hot column 0
    zero = load_dataset(f"file:{path}:target?standardize:false+impute:zero")
    assert zero.X[3, 0] == zero.X[5, 0] == 0.0
    assert not np.isnan(load_dataset(f"file:{path}?impute:mean").X).any()


def test_infinite_feature_values_are_refused(tmp_path: Path) -> None:
    frame = _small()
    frame.loc[4, "x2"] = np.inf
    path = _write(tmp_path, frame)
    assert _refusal(f"file:{path}") == (
        f"dataset file '{path}': infinite values in column 'x2' (1); replace them or drop "
        "those rows first"
    )


def test_a_target_with_one_class_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _small().assign(target="yes"))
    message = (
        f"dataset file '{path}': target column 'target' has one class only ('yes'); a dataset "
        "needs two or more (name another target column, or add the rows of the others)"
    )
    assert _refusal(f"file:{path}") == message
    with pytest.raises(DatasetError, match=r"has one class only \('yes'\)"):
        dataset_task(f"file:{path}")  # refused before a run composes


def test_an_identifier_column_is_refused(tmp_path: Path) -> None:
    frame = _small()
    frame.insert(0, "patient", [f"P{i:04d}" for i in range(len(frame))])
    path = _write(tmp_path, frame)
    assert _refusal(f"file:{path}") == (
        f"dataset file '{path}': column 'patient' looks like an identifier (40 distinct values "
        "in 40 rows), no feature; drop it from the file"
    )


def test_an_integer_target_with_many_values_needs_its_task_named(tmp_path: Path) -> None:
    frame = _small(60).assign(target=np.arange(60) % 30)
    path = _write(tmp_path, frame)
    message = (
        f"dataset file '{path}': target column 'target' holds 30 distinct integers in 60 rows: "
        "classes or numbers? An integer target with more than 20 values (or more than 2 and "
        "over half the rows) is ambiguous; name the task: "
        f"file:{path}:target?task:classification or ?task:regression"
    )
    assert _refusal(f"file:{path}") == message
    with pytest.raises(DatasetError) as raised:
        dataset_task(f"file:{path}")
    assert str(raised.value) == message
    regression = load_dataset(f"file:{path}?task:regression")
    assert regression.task == "regression" and regression.y.tolist() == frame["target"].tolist()
    assert dataset_task(f"file:{path}?task:regression") == "regression"
    classes = load_dataset(f"file:{path}?task:classification")
    assert classes.task == "classification" and classes.y.max() == 29
    few = _write(tmp_path, _small(60).assign(target=np.arange(60) % 20), "few.csv")
    assert load_dataset(f"file:{few}").task == "classification"  # 20 values: classes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty; write a header row of column names, then the rows, comma separated"),
        ("x,target\n", "has no rows; write the rows below its header"),
        (
            "x,target\n1,a\n2,b,3\n",
            "cannot be read: Error tokenizing data. C error: Expected 2 fields in line 3, saw 3",
        ),
    ],
)
def test_an_empty_or_malformed_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    assert _refusal(f"file:{path}") == f"dataset file '{path}' {message}"


def test_the_command_line_refuses_an_empty_file_and_writes_nothing(
    tmp_path: Path, isolated_env: dict
) -> None:
    empty = tmp_path / "empty.csv"
    empty.touch()
    results = tmp_path / "results"
    command = [
        sys.executable,
        "run.py",
        f"dataset=file:{empty}",
        "optimizer=rs",
        "budget=2",
        f"results_dir={results}",
    ]
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: dataset file '{empty}' is empty; write a header row of column names, then the "
        "rows, comma separated\n"
    )
    assert not results.exists()


@pytest.mark.parametrize(
    ("dataset", "folder"),
    [
        ("sklearn-iris", "sklearn-iris"),  # a built-in name keeps its folder
        ("openml:31", "openml-31"),
        ("binary:file:sha256=ab12:y", "binary-file-sha256-ab12-y"),
    ],
)
def test_a_results_folder_name_holds_no_colon(dataset: str, folder: str) -> None:
    assert layout.dataset_folder(dataset) == folder
