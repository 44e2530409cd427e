"""An optimizer from another package, named by configuration: the example package
``examples/my_optimizer`` (put on ``PYTHONPATH``, as ``pip install -e examples/my_optimizer``
would install it) ships a method file on Hydra's search path whose ``_target_`` names its class.
Its runs are reproducible, record the class's module and version, and every bad input is one
line, exit 2, nothing written; the built-in families keep their run identities
(``tests/test_run_identity.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError
from hpo.optimizers import make_optimizer, optimizer_class, optimizer_versions, setting_names
from hpo.testing import check_optimizer
from runfiles.files import without_timing

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "my_optimizer"
SEARCH = "hydra.searchpath=[pkg://my_optimizer/conf]"
TARGET = "my_optimizer.LocalSearch"
RUN = [SEARCH, "optimizer=my_local_search", "dataset=sklearn-iris", "budget=5"]


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))


@pytest.fixture
def example_env(isolated_env: dict) -> dict:
    path = [str(EXAMPLE), *filter(None, [isolated_env.get("PYTHONPATH")])]
    return {**isolated_env, "PYTHONPATH": os.pathsep.join(path)}


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "run.py", *args], cwd=REPO, env=env, capture_output=True, text=True
    )


def test_the_example_optimizer_runs_twice_to_the_same_results(
    tmp_path: Path, example_env: dict
) -> None:
    tables = []
    for folder in ("a", "b"):
        result = _run([*RUN, "seed=4", f"results_dir={tmp_path / folder}"], example_env)
        assert result.returncode == 0, result.stderr
        (path,) = (tmp_path / folder).rglob("*.parquet")
        tables.append(pd.read_parquet(path))
    pd.testing.assert_frame_equal(without_timing(tables[0]), without_timing(tables[1]))
    table = tables[0]
    assert set(table["optimizer"]) == {TARGET}
    assert table.loc[table["row_type"] == "trace", "iteration"].tolist() == [1, 2, 3, 4, 5]
    versions = json.loads(table["versions"].iloc[0])
    assert versions[f"optimizer:{TARGET}"] == "0.1.0"


@pytest.mark.usefixtures("example")
def test_the_registry_takes_a_dotted_path_as_a_family() -> None:
    cls = optimizer_class(TARGET)
    assert cls.__name__ == "LocalSearch"
    assert setting_names(TARGET) == ("n_initial", "scale")
    assert optimizer_versions(TARGET) == {f"optimizer:{TARGET}": "0.1.0"}
    assert optimizer_versions("rs") == {}  # a built-in family's provenance is as before
    spec = compose_run(RUN)
    assert spec.method.optimizer == TARGET and dict(spec.method.settings) == {
        "n_initial": 3,
        "scale": 0.1,
    }
    with pytest.raises(ValueError, match="unknown setting.*valid: n_initial, scale"):
        make_optimizer(TARGET, None, 5, None, step=2)  # type: ignore[arg-type]
    check_optimizer(cls, n_initial=2)


def _method_file(folder: Path, target: str, partial: str = "true") -> str:
    (folder / "optimizer").mkdir(parents=True)
    (folder / "optimizer" / "outside.yaml").write_text(
        f"name: outside\n_target_: {target}\n_partial_: {partial}\nreshuffle: false\n"
        "selection_split: false\nrules: {outside: best_validation}\nsettings: {}\n"
    )
    return f"hydra.searchpath=[file://{folder}]"


@pytest.mark.parametrize(
    ("target", "partial", "message"),
    [
        ("no_such_package.Optimizer", "true", "'no_such_package.Optimizer' does not import"),
        ("collections.OrderedDict", "true", "is not an optimizer: subclass hpo.optimizers"),
        ("hpo.optimizers.NoSuchClass", "true", "module 'hpo.optimizers' has no 'NoSuchClass'"),
        ("hpo.optimizers.RandomSearch", "false", "needs _partial_: true"),
    ],
)
def test_a_bad_target_is_one_line(tmp_path: Path, target: str, partial: str, message: str) -> None:
    search = _method_file(tmp_path / "conf", target, partial)
    with pytest.raises(UsageError, match=message) as caught:
        compose_run([search, "optimizer=outside", "dataset=sklearn-iris"])
    assert "\n" not in str(caught.value)


@pytest.mark.usefixtures("example")
def test_an_unknown_method_file_lists_the_search_path() -> None:
    with pytest.raises(UsageError) as caught:
        compose_run([SEARCH, "optimizer=my_local"])
    message = str(caught.value)
    assert message.startswith("unknown optimizer 'my_local' (did you mean 'my_local_search'?)")
    assert message.endswith("; search path: conf (this repository), pkg://my_optimizer/conf")
    with pytest.raises(UsageError, match="pkg://no_such_pkg/conf does not import"):
        compose_run(["hydra.searchpath=[pkg://no_such_pkg/conf]", "optimizer=rs"])


def test_a_refused_target_on_the_command_line_exits_2_and_writes_nothing(
    tmp_path: Path, isolated_env: dict
) -> None:
    search = _method_file(tmp_path / "conf", "collections.OrderedDict")
    args = [search, "optimizer=outside", "dataset=sklearn-iris", "budget=2"]
    result = _run([*args, f"results_dir={tmp_path / 'results'}"], isolated_env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: optimizer _target_ 'collections.OrderedDict' is not")
    assert result.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conf"]
