"""The command line: one run, clear one-line errors with exit code 2, nothing overwritten."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.configuration.command_line import check_overrides
from experiments.configuration.config import UsageError
from runfiles.files import without_timing

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "run.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("optimizer=gp-r", "unknown optimizer 'gp-r' (did you mean 'gp_r'?)"),
        ("protocol=cv10", "unknown protocol 'cv10'"),
        ("space=svm", "unknown space 'svm' (did you mean 'svm_rbf'?)"),
        ("dataset=abalon", "unknown dataset 'abalon' (did you mean 'abalone'?)"),
        ("budgett=3", "unknown setting 'budgett' (did you mean 'budget'?)"),
    ],
)
def test_bad_names_are_one_clear_line(override: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_overrides([override])
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_input_exits_2_without_output(tmp_path: Path, isolated_env: dict) -> None:
    bad_setting = ["optimizer=gp", "dataset=iris", "+optimizer.settings.standardise=true"]
    for args in (["optimizer=nope"], ["budget=-1"], ["dataset=nope"], bad_setting):
        result = _run([*args, f"results_dir={tmp_path}"], isolated_env)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "valid: kernel," in result.stderr  # the last one names the gp settings
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["optimizer=hyperband", "space=svm_rbf", "dataset=sklearn-iris"],  # no epochs
        ["optimizer=bohb", "space=svm_rbf", "dataset=sklearn-iris"],  # no epochs either
        ["optimizer=bohb", "optimizer.settings.eta=1", "dataset=sklearn-digits"],  # eta < 2
        ["optimizer=bohb", "optimizer.settings.max_resource=3", "dataset=sklearn-digits"],  # R<eta
        ["optimizer=tpe", "dataset=sklearn-digits", "space.settings.device=cuda"],
        ["optimizer=tpe", "dataset=mnist-basic"],  # files absent: names the download
    ],
)
def test_a_run_refused_at_its_start_leaves_nothing(
    tmp_path: Path, isolated_env: dict, args: list[str]
) -> None:
    import torch

    if "device=cuda" in args[-1] and torch.cuda.is_available():
        pytest.skip("a GPU is present: device=cuda is valid here")
    env = {**isolated_env, "HPO_MNIST_DIR": str(tmp_path / "no-mnist")}
    result = _run([*args, f"results_dir={tmp_path / 'results'}"], env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_one_run_twice_gives_the_same_file_and_never_overwrites(
    tmp_path: Path, isolated_env: dict
) -> None:
    args = ["optimizer=rs", "dataset=sklearn-iris", "budget=5", "seed=3"]
    first = _run([*args, f"results_dir={tmp_path / 'a'}"], isolated_env)
    assert first.returncode == 0, first.stderr
    assert "test_error_%" in first.stdout and "results: " in first.stdout
    second = _run([*args, f"results_dir={tmp_path / 'b'}"], isolated_env)
    assert second.returncode == 0, second.stderr
    (path_a,) = (tmp_path / "a").rglob("*.parquet")
    (path_b,) = (tmp_path / "b").rglob("*.parquet")
    assert path_a.relative_to(tmp_path / "a") == path_b.relative_to(tmp_path / "b")
    pd.testing.assert_frame_equal(
        without_timing(pd.read_parquet(path_a)), without_timing(pd.read_parquet(path_b))
    )
    before = path_a.stat().st_mtime_ns
    again = _run([*args, f"results_dir={tmp_path / 'a'}"], isolated_env)
    assert again.returncode == 0 and "already finished" in again.stdout
    assert path_a.stat().st_mtime_ns == before
