"""Sweeps: resume after SIGKILL, concurrent workers, failures isolated, shared runs."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from experiments.sweep import consolidate, execute, plan, run_sweep, status
from experiments.sweep.cli import main as sweep_main
from runfiles import layout
from runfiles.files import without_timing

REPO = Path(__file__).resolve().parents[1]
SORT = ["run_id", "row_type", "method", "iteration"]


SLOW_EXPERIMENT = """
name: slow
profiles:
  default:
    parts:
      main: {datasets: [sklearn-iris, sklearn-wine, sklearn-breast-cancer], methods: [rs, cma_pv],
             protocols: [holdout], repetitions: 4, budget: 30}
"""


def _consolidated(root: Path, experiment: str = "ci") -> pd.DataFrame:
    runs = plan(experiment, None, root)
    paths = consolidate(runs, root / "merged")
    frames = [without_timing(pd.read_parquet(p)) for p in paths.values()]
    table = pd.concat(frames, ignore_index=True)
    table = table.drop(columns=["git_revision"])
    return table.sort_values(SORT).reset_index(drop=True)


def _sweep_command(root: Path, experiment: str = "ci") -> list[str]:
    return [
        sys.executable,
        "-m",
        "experiments.sweep",
        "run",
        experiment,
        "--results-root",
        str(root),
        "--jobs",
        "2",
    ]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("reference")
    counts = run_sweep(plan("ci", "default", root), n_jobs=1, progress=False)
    assert counts == {"done": 18, "failed": 0, "skipped": 0}
    return _consolidated(root)


@pytest.mark.slow
def test_killed_sweep_resumes_to_identical_results(tmp_path: Path) -> None:
    experiment = tmp_path / "slow.yaml"
    experiment.write_text(SLOW_EXPERIMENT)
    reference_root, root = tmp_path / "reference", tmp_path / "killed"
    run_sweep(plan(str(experiment), None, reference_root), n_jobs=1, progress=False)
    runs = plan(str(experiment), None, root)
    command = _sweep_command(root, str(experiment))
    process = subprocess.Popen(
        command,
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while sum(r.path.exists() for r in runs) < 2 and time.time() < deadline:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = sum(r.path.exists() for r in runs)
    assert 2 <= finished < len(runs), f"killed after {finished} of {len(runs)} runs"
    resumed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert all(r.path.exists() for r in runs)
    pd.testing.assert_frame_equal(
        _consolidated(root, str(experiment)), _consolidated(reference_root, str(experiment))
    )
    leftovers = [p for p in root.rglob("*") if p.is_file() and p.suffix != ".parquet"]
    leftovers = [p for p in leftovers if p.name != layout.DATASET_NOTES]  # the sweep's notes
    assert not [p for p in leftovers if "merged" not in p.parts and p.suffix != ".tmp"]


@pytest.mark.slow
def test_two_workers_on_one_directory_never_corrupt_a_file(tmp_path: Path, reference) -> None:
    processes = [
        subprocess.Popen(
            _sweep_command(tmp_path),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    pd.testing.assert_frame_equal(_consolidated(tmp_path), reference)


def test_a_failing_run_is_recorded_and_the_rest_completes(tmp_path: Path) -> None:
    runs = plan("ci", "default", tmp_path)
    broken = runs[3].spec.with_settings(optimizer_settings={"no_such_setting": 1})
    runs[3] = dataclasses.replace(runs[3], spec=broken)
    counts = run_sweep(runs, n_jobs=2, progress=False)
    assert counts == {"done": len(runs) - 1, "failed": 1, "skipped": 0}
    table = status(runs)
    failed = table[table["state"] == "failed"]
    assert len(failed) == 1 and "no_such_setting" in failed["error"].iloc[0]
    assert not runs[3].path.exists()
    # resuming retries only the failed run (and it fails again with the same error)
    assert run_sweep(runs, n_jobs=1, progress=False) == {
        "done": 0,
        "failed": 1,
        "skipped": len(runs) - 1,
    }


def test_status_command_exit_code_reports_failures(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "experiments.sweep",
        "status",
        "ci",
        "--results-root",
        str(tmp_path),
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert "18 runs: 0 done, 0 failed, 0 corrupt, 18 missing" in result.stdout
    # one run fails (its error recorded by the sweep's own execute): status now exits with 1
    run = plan("ci", "default", tmp_path)[3]
    broken = run.spec.with_settings(optimizer_settings={"no_such_setting": 1})
    assert execute(dataclasses.replace(run, spec=broken))[0] == "failed"
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "18 runs: 0 done, 1 failed, 0 corrupt, 17 missing" in result.stdout


def test_shared_runs_give_the_numbers_of_separate_runs(tmp_path: Path) -> None:
    shared = [r for r in plan("ci", "default", tmp_path) if r.spec.method.optimizer == "cma"][:1]
    assert set(shared[0].spec.method.rules) == {"cma-pv", "cma-bw"}
    alone = dataclasses.replace(
        shared[0],
        spec=shared[0].spec.with_labels({"cma-bw": "backwarding"}),
        path=tmp_path / "alone.parquet",
    )
    run_sweep([*shared, alone], n_jobs=1, progress=False)
    columns = ["iteration", "incumbent_iteration", "test_error", "param_C", "param_gamma"]

    def outcome(path: Path) -> pd.DataFrame:
        table = pd.read_parquet(path)
        rows = table[(table["row_type"] == "outcome") & (table["method"] == "cma-bw")]
        return rows[columns].reset_index(drop=True)

    pd.testing.assert_frame_equal(outcome(shared[0].path), outcome(alone.path))


def test_hydra_multirun_runs_shards(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "run.py",
        "-m",
        "experiment=ci",
        "n_shards=2",
        "shard=0,1",
        f"hydra.sweep.dir={tmp_path / 'hydra'}",
    ]
    env = dict(os.environ, HPO_RESULTS_ROOT=str(tmp_path))
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "shard 0/2" in result.stdout and "shard 1/2" in result.stdout
    assert all(r.path.exists() for r in plan("ci", "default", tmp_path))


TWO_PARTS = """
name: two
profiles:
  default:
    parts:
      a: {datasets: [sklearn-iris], methods: [rs], protocols: [holdout], repetitions: 2, budget: 3}
      b: {datasets: [sklearn-iris, sklearn-wine], methods: [rs], protocols: [holdout],
          repetitions: 1, budget: 3}
"""


def test_parts_option_restricts_the_command_to_the_named_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    experiment = tmp_path / "two.yaml"
    experiment.write_text(TWO_PARTS)
    common = [str(experiment), "--results-root", str(tmp_path)]
    assert sweep_main(["status", *common]) == 0
    assert "4 runs: 0 done" in capsys.readouterr().out
    assert sweep_main(["status", *common, "--parts", "b"]) == 0
    assert "2 runs: 0 done" in capsys.readouterr().out
    assert sweep_main(["status", *common, "--parts", "a,b"]) == 0
    assert "4 runs: 0 done" in capsys.readouterr().out
    assert sweep_main(["run", *common, "--parts", "c"]) == 2
    assert "unknown part 'c'; valid: a, b" in capsys.readouterr().err
    assert not (tmp_path / "two").exists()  # nothing written


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_sweep_stopped_by_a_signal_ends_in_one_line_and_says_interrupted(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """Ctrl-C (or SIGTERM) of a sweep: one line, the shell's code, the finished runs kept, the
    runs stopped mid-run shown as interrupted (not as a worker that died), and the same command
    goes on to the end."""
    experiment = tmp_path / "slow.yaml"
    experiment.write_text(SLOW_EXPERIMENT)
    root = tmp_path / "stopped"
    runs = plan(str(experiment), None, root)
    command = _sweep_command(root, str(experiment))
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 120
    while sum(r.path.exists() for r in runs) < 2 and time.time() < deadline:
        time.sleep(0.02)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + int(signum), stderr
    # the sweep's one line (joblib's resource tracker, another process, may warn after it)
    said = [line for line in stderr.splitlines() if line.startswith("interrupted (")]
    assert len(said) == 1, stderr
    assert said[0].startswith(f"interrupted ({signal.Signals(signum).name}): ") and (
        "run the same command to go on" in said[0]
    ), stderr
    assert "Traceback" not in stderr, stderr
    frame = status(runs)
    assert not frame["error"].str.contains("worker died").any(), frame
    assert set(frame["state"]) <= {"done", "missing", "interrupted"}, frame
    shown = subprocess.run(
        [sys.executable, "-m", "experiments.sweep", "status", str(experiment),
         "--results-root", str(root)],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    interrupted = int((frame["state"] == "interrupted").sum())
    assert interrupted == 0 or f"{interrupted} interrupted" in shown.stdout, shown.stdout
    resumed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert set(status(runs)["state"]) == {"done"}
