"""Code from outside this repository is part of a run's identity
(``experiments/configuration/outside_code.py``): an outside optimizer, a class in an optimizer's
settings, an estimator class as the learner. A changed outside optimizer (its source or its
version) is a new run with a new results file, not the old result reused; this repository's own
code is not part of the identity."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.outside_code import outside_classes, outside_code, targets_in
from experiments.run.results import config_hash

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "my_optimizer"
TARGET = "my_optimizer.LocalSearch"
RUN = [
    "hydra.searchpath=[pkg://my_optimizer/conf]",
    "optimizer=my_local_search",
    "dataset=sklearn-iris",
    "budget=4",
]


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example optimizer's package, importable, that a test may edit."""
    copy = tmp_path / "pkg"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    monkeypatch.syspath_prepend(str(copy))
    for name in [m for m in sys.modules if m.split(".")[0] == "my_optimizer"]:
        monkeypatch.delitem(sys.modules, name)  # imported from the example by another test
    return copy / "my_optimizer" / "__init__.py"


def _edit(source: Path, old: str, new: str) -> None:
    text = source.read_text()
    assert old in text
    source.write_text(text.replace(old, new))
    stat = source.stat()  # a later mtime even on a coarse clock
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_an_outside_optimizer_enters_the_identity_with_its_version_and_source(package: Path):
    spec = compose_run(RUN)
    code = spec.identity()["outside_code"]
    assert list(code) == [TARGET]
    assert code[TARGET]["distribution"] == "my_optimizer" and code[TARGET]["version"] == "0.1.0"
    before = config_hash(spec)
    _edit(package, "scale: float = 0.1,", "scale: float = 0.1,  # edited")
    edited = config_hash(compose_run(RUN))
    assert edited != before  # a changed source is a new run
    _edit(package, "scale: float = 0.1,  # edited", "scale: float = 0.1,")
    assert config_hash(compose_run(RUN)) == before  # the same code is the same run again


def test_a_class_in_the_settings_and_a_learner_by_dotted_path_are_outside_code() -> None:
    spec = compose_run(["optimizer=optuna_tpe", "dataset=sklearn-iris"])
    assert list(spec.identity()["outside_code"]) == ["optuna.samplers.TPESampler"]
    other = compose_run(
        ["optimizer=optuna_tpe", "dataset=sklearn-iris",
         "optimizer.settings.sampler._target_=optuna.samplers.RandomSampler"]
    )  # fmt: skip
    assert list(other.identity()["outside_code"]) == ["optuna.samplers.RandomSampler"]
    assert config_hash(other) != config_hash(spec)
    settings = {"sampler": {"_target_": "a.B", "inner": [{"_target_": "c.D"}]}}
    assert targets_in(settings) == ["a.B", "c.D"]
    assert outside_classes("rs", settings, ["svm_rbf", "sklearn.svm.SVC"]) == [
        "a.B",
        "c.D",
        "sklearn.svm.SVC",
    ]


def test_this_repositorys_code_is_not_part_of_the_identity() -> None:
    assert outside_classes("hpo.optimizers.random_search.RandomSearch", {}, ["svm_rbf"]) == []
    assert "outside_code" not in compose_run(["optimizer=gp_r", "dataset=sklearn-iris"]).identity()
    assert outside_code("gp", {}, ["svm_rbf"]) == {}


@pytest.mark.slow
def test_a_changed_outside_optimizer_is_run_again_not_reused(tmp_path: Path, isolated_env: dict):
    """The same command after an edit of the outside optimizer (its version bumped) runs again
    into a new results file; the first file stays as it was."""
    copy = tmp_path / "pkg"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    env = {**isolated_env, "PYTHONPATH": os.pathsep.join([str(copy), str(REPO)])}
    command = [sys.executable, "run.py", *RUN, f"results_dir={tmp_path / 'results'}"]
    first = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    (written,) = (tmp_path / "results").rglob("*.parquet")
    content = written.read_bytes()
    _edit(copy / "my_optimizer" / "__init__.py", '__version__ = "0.1.0"', '__version__ = "0.1.1"')
    second = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "already finished" not in second.stdout
    assert len(list((tmp_path / "results").rglob("*.parquet"))) == 2
    assert written.read_bytes() == content


SOURCE_MODULE = '''
import numpy as np

from hpo.data.types import Dataset


def load(name, data_dir=None):
    """Two Gaussian blobs, 40 rows."""
    y = np.repeat([0, 1], 20)
    return Dataset(name, np.random.default_rng(0).normal(size=(40, 2)) + y[:, None], y)
'''


def test_a_registered_sources_code_enters_the_identity_of_its_datasets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset of a package's source (``blobsrc:two``) is what the source's code makes of its
    name: an edit of that code is a new run, as for an outside optimizer."""
    from hpo.data import sources

    package = tmp_path / "blob_source"
    package.mkdir()
    (package / "__init__.py").write_text(SOURCE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "blob_source", raising=False)
    import blob_source  # noqa: PLC0415 - the scratch package above

    source = sources.Source(blob_source.load, lambda name: "classification", lambda name: None)
    monkeypatch.setitem(sources.SOURCES, "blobsrc", source)
    run = ["optimizer=rs", "dataset=blobsrc:two", "budget=4"]
    spec = compose_run(run)
    code = spec.identity()["outside_code"]
    assert list(code) == ["blob_source.load"] and code["blob_source.load"]["source"]
    before = config_hash(spec)
    _edit(package / "__init__.py", "+ y[:, None]", "+ 2 * y[:, None]")
    assert config_hash(compose_run(run)) != before  # other data: a new run
    binary = compose_run(["optimizer=rs", "dataset=binary:blobsrc:two", "budget=4"])
    assert list(binary.identity()["outside_code"]) == ["blob_source.load"]
    assert "outside_code" not in compose_run(["optimizer=rs", "dataset=sklearn-iris"]).identity()
