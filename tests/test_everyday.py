"""Everyday use without surprises: multirun over config groups, damaged results healed,
work refused before it starts when it could not be saved, workers sharing a folder, pre-flight
checks, file modes, provenance."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.configuration.spec import RunSpec
from experiments.run import results
from experiments.run.results import inspect_results_file
from experiments.run.single import prepare, run_and_save
from experiments.sweep import plan, run_sweep, status
from runfiles.files import without_timing

REPO = Path(__file__).resolve().parents[1]


def _run_py(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, str(REPO / "run.py"), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _spec(**overrides) -> RunSpec:
    values = dict(dataset="sklearn-iris", optimizer="rs", rules={"rs": "best_validation"}, budget=4)
    return RunSpec.of(**{**values, **overrides})


def test_multirun_over_config_groups_runs_one_job_per_combination(tmp_path: Path) -> None:
    result = _run_py(
        "-m",
        "optimizer=gp,rs",
        "protocol=holdout,cv5",
        "dataset=sklearn-iris",
        "budget=3",
        f"results_dir={tmp_path / 'runs'}",
        f"hydra.sweep.dir={tmp_path / 'hydra'}",
    )
    assert result.returncode == 0, result.stderr
    files = sorted(p.name.split("__seed")[0] for p in (tmp_path / "runs").rglob("*.parquet"))
    assert files == ["gp__cv5", "gp__holdout", "rs__cv5", "rs__holdout"]
    bad = _run_py("-m", "optimizer=gp,rsx", f"results_dir={tmp_path / 'runs'}")
    assert bad.returncode == 2 and "unknown optimizer 'rsx'" in bad.stderr


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:2000])


def test_truncated_results_file_is_moved_aside_and_the_run_done_again(tmp_path: Path) -> None:
    spec, path = _spec(), tmp_path / "iris" / "run.parquet"
    run_and_save(spec, path)
    reference = without_timing(pd.read_parquet(path))
    _truncate(path)
    assert "unreadable" in inspect_results_file(path, spec)
    finished, messages = prepare(path, spec)
    assert not finished and "moved to run.parquet.corrupt" in messages[0]
    assert (tmp_path / "iris" / "run.parquet.corrupt").exists()  # kept, never deleted
    run_and_save(spec, path)
    pd.testing.assert_frame_equal(without_timing(pd.read_parquet(path)), reference)
    assert prepare(path, spec) == (True, [])
    other = _spec(seed=1)
    assert inspect_results_file(path, other) == "its stored run specification is not this run's"


def test_sweep_reports_heals_and_consolidates_around_a_truncated_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = plan("ci", "default", tmp_path)[:3]
    run_sweep(runs, n_jobs=1, progress=False)
    _truncate(runs[0].path)
    assert list(status(runs)["state"]) == ["corrupt", "done", "done"]
    from experiments.sweep import consolidate

    consolidate(runs, tmp_path / "merged")
    assert f"left out unreadable results file {runs[0].path}" in capsys.readouterr().err
    counts = run_sweep(runs, n_jobs=1, progress=False)
    assert counts == {"done": 1, "failed": 0, "skipped": 2}
    assert "moved to" in capsys.readouterr().err
    assert list(status(runs)["state"]) == ["done", "done", "done"]


def test_unwritable_results_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = _run_py("optimizer=gp", "dataset=sklearn-iris", f"results_dir={blocker / 'runs'}")
    assert result.returncode == 2
    assert re.fullmatch(r"error: results folder .* is not writable .*\n", result.stderr)
    assert "method" not in result.stdout  # nothing was run


def test_two_workers_on_one_folder_compute_every_run_exactly_once(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "experiments.sweep", "run", "ci"]
    command += ["--results-root", str(tmp_path), "--jobs", "1"]
    workers = [
        subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=600)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers), outputs
    counts = [
        json.loads(re.search(r"finished: (\{.*\})", o).group(1).replace("'", '"')) for o in outputs
    ]
    runs = plan("ci", "default", tmp_path)
    assert sum(c["done"] for c in counts) == len(runs)  # no run computed twice
    assert all(r.path.exists() and not r.marker_path.exists() for r in runs)


def test_a_dead_workers_claim_is_taken_over(tmp_path: Path) -> None:
    from experiments.sweep import execute

    run = plan("ci", "default", tmp_path)[0]
    run.path.parent.mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    import socket

    run.marker_path.write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout)}))
    assert execute(run)[0] == "done"
    alive = {"host": socket.gethostname(), "pid": os.getpid()}
    other = plan("ci", "default", tmp_path)[1]
    other.path.parent.mkdir(parents=True, exist_ok=True)
    other.marker_path.write_text(json.dumps(alive))
    assert execute(other)[0] == "skipped" and not other.path.exists()


def test_missing_data_is_one_line_before_any_run(tmp_path: Path) -> None:
    env = dict(os.environ, HPO_UCI121_DIR=str(tmp_path / "none"), HPO_RESULTS_ROOT=str(tmp_path))
    for args in (
        ["reproduce", "chapter3", "--profile", "smoke"],
        ["sweep", "status", "chapter3", "--profile", "medium"],
    ):
        module = f"experiments.{args[0]}"
        result = subprocess.run(
            [sys.executable, "-m", module, *args[1:]],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "make data" in result.stderr
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("protocol.valid_frac=0", r"protocol.valid_frac must be in \(0, 1\), got 0"),
        ("protocol.test_frac=0", r"protocol.test_frac must be in \(0, 1\)"),
        ("curves=maybe", "curves must be true or false, got 'maybe'"),
        ("predictions=maybe", "predictions must be true or false"),
    ],
)
def test_settings_out_of_range_are_one_line_and_exit_2(
    tmp_path: Path, override: str, message: str
) -> None:
    result = _run_py(override, "budget=2", f"results_dir={tmp_path}")
    assert result.returncode == 2 and re.search(message, result.stderr), result.stderr
    assert not list(tmp_path.rglob("*.parquet"))


def test_selection_split_that_leaves_no_training_rows_is_refused(tmp_path: Path) -> None:
    result = _run_py("optimizer=gp_sel", "protocol.selection_frac=0.99", f"results_dir={tmp_path}")
    assert result.returncode == 2 and "selection_frac=0.99" in result.stderr


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664)])
def test_results_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        path = run_and_save(_spec(predictions=True), tmp_path / "run.parquet")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    sidecar = path.with_name("run.predictions.parquet")
    assert stat.S_IMODE(sidecar.stat().st_mode) == mode


def test_every_row_carries_data_checksum_split_sizes_and_versions(tmp_path: Path) -> None:
    table = pd.read_parquet(run_and_save(_spec(), tmp_path / "run.parquet"))
    assert table["dataset_sha256"].nunique() == 1 and len(table["dataset_sha256"].iloc[0]) == 64
    assert (table[["n_rows", "n_test", "n_train", "n_valid"]].iloc[0] == [150, 50, 67, 33]).all()
    versions = json.loads(table["versions"].iloc[0])
    assert {"numba", "hydra-core", "scipy", "scikit-learn", "numpy", "cma"} <= set(versions)


def test_results_of_another_code_revision_are_flagged_and_rerun_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, path = _spec(), tmp_path / "run.parquet"
    run_and_save(spec, path)
    monkeypatch.setattr(
        results, "provenance", lambda: {"git_revision": "another", "versions": "{}"}
    )
    finished, messages = prepare(path, spec)
    assert finished and "came from code revision" in messages[0]
    finished, messages = prepare(path, spec, rerun_stale=True)
    assert not finished and (tmp_path / "run.parquet.stale").exists()


def test_long_choice_lists_show_close_matches_and_the_listing_command() -> None:
    result = _run_py("dataset=irs")
    assert result.returncode == 2
    assert "did you mean 'iris'" in result.stderr and "python -m hpo.data list" in result.stderr
    result = _run_py("optimizer=gpx")
    assert all(name in result.stderr for name in ("rs", "grid", "cma_gv_r", "eo_sig"))  # all listed


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["space.learner=svm_rbff"], "names unknown learner 'svm_rbff' (did you mean 'svm_rbf'?)"),
        (["space.parameters.C.type=reall"], "parameter 'C': unknown type 'reall'; valid"),
        (
            ["space=sklearn_cash", "space.parameters.qda__reg_param.condition.classifier=[qdaa]"],
            "condition value 'qdaa' is not a choice of 'classifier'",
        ),
    ],
)
def test_bad_spaces_and_learners_are_one_line_and_exit_2(
    tmp_path: Path, overrides: list[str], message: str
) -> None:
    result = _run_py(*overrides, f"results_dir={tmp_path}")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and not list(tmp_path.rglob("*.parquet"))
