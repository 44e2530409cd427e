"""The sweep's fault matrix (docs/running-at-scale.md, "Fault matrix"): the rows that no other
test file proves. Each test injects one fault into a small sweep on a bundled dataset (budgets
of 3) and checks what is recorded, what ``sweep status`` says, what the same command does next,
and that nothing finished is lost or overwritten (a finished file keeps its inode and its
modification time; a damaged one is moved aside, never deleted):

* a results file truncated, or another run's file at a run's path: ``corrupt``, moved aside to
  ``*.corrupt`` and run again to the numbers of the original run;
* a disk full while a results file is written: the run fails with the error, no partial file is
  left (neither at its path nor as a temporary), the other runs finish, a resume finishes it;
* a worker process killed (SIGKILL) mid-run under ``--jobs 2``, and a run over the sweep's
  memory cap (``--max-memory-gb``): failed runs with the cause, the rest finish, a resume
  finishes them;
* a job told to end at its time limit (submitit's error raised mid-run): the run is left
  missing, not failed, and the same command runs it;
* a part that runs after another (``after:``, ``derive:``) whose earlier runs are missing,
  failed or damaged: its runs wait, or derive from the finished runs alone, and run once the
  earlier part is complete.

The faults that need a process of their own (a worker that dies, a memory cap) come from a small
package written to the test's folder: an outside optimizer whose process takes the fault once,
the first time a run reaches its second proposal while the file ``$FAULT_ONCE`` names exists.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from experiments.configuration.search_path import SEARCH_PATH_ENV
from experiments.run import single
from experiments.sweep import PlannedRun, execute, plan, run_sweep, status
from experiments.sweep.cli import main as sweep_main
from runfiles.files import spec_from_file, without_timing

REPO = Path(__file__).resolve().parents[1]

SMALL = """
name: small
space: svm_rbf
profiles:
  default:
    parts:
      main: {datasets: [sklearn-iris], methods: [rs], protocols: [holdout], repetitions: 3,
             budget: 3, seed: 0}
"""

OUTSIDE = """
name: outside
space: svm_rbf
profiles:
  default:
    parts:
      main: {datasets: [sklearn-iris], methods: [METHOD], protocols: [holdout], repetitions: 3,
             budget: 3, seed: 0}
"""

DEPENDENT = """
name: dependent
space: svm_rbf
profiles:
  default:
    parts:
      first: {datasets: [sklearn-iris], methods: [rs], protocols: [holdout], repetitions: 2,
              budget: 3, seed: 0}
      second: {datasets: [sklearn-iris], methods: [rs], protocols: [holdout], repetitions: 1,
               budget: 3, seed: 1, after: first, derive: "fault_injection:budget_from_finished"}
"""

FAULT_INJECTION = '''
"""Faults a run takes once: the first process to remove the file $FAULT_ONCE names takes it."""

import os
import signal

import numpy as np
import pandas as pd

from hpo.optimizers.random_search import RandomSearch

__version__ = "0"


def _armed():
    try:
        os.unlink(os.environ["FAULT_ONCE"])
    except (KeyError, FileNotFoundError):
        return False
    return True


class KilledOnce(RandomSearch):
    """Random search whose process is killed (SIGKILL) at its second proposal, once."""

    def ask(self):
        if self._asked == 1 and _armed():
            os.kill(os.getpid(), signal.SIGKILL)
        return super().ask()


class OverMemoryOnce(RandomSearch):
    """Random search that asks for 3 GiB of address space at its second proposal, once."""

    def ask(self):
        if self._asked == 1 and _armed():
            np.empty(3 * 2**30, dtype=np.uint8)
        return super().ask()


def budget_from_finished(spec, finished):
    """A part's derive: reads the earlier part's finished runs (as I/F-Race's calibration
    does) and gives the run a budget of 2 + their number."""
    for run in finished:
        pd.read_parquet(run.path)
    return spec.with_settings(budget=2 + len(finished))
'''

METHOD_FILE = """
name: {name}
_target_: fault_injection.{cls}
_partial_: true
reshuffle: false
selection_split: false
rules:
  {name}: best_validation
settings: {{}}
"""

FINISHED = re.compile(r"finished: (\{.*\})")


# --------------------------------------------------------------------------------- helpers


@pytest.fixture
def faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fault-injection package (on this process's path; subprocesses: :func:`_env`) with its
    method files (``kill_once``, ``over_memory_once``) on the session's search path."""
    package = tmp_path / "faults"
    (package / "conf" / "optimizer").mkdir(parents=True)
    (package / "fault_injection.py").write_text(FAULT_INJECTION)
    for name, cls in (("kill_once", "KilledOnce"), ("over_memory_once", "OverMemoryOnce")):
        text = METHOD_FILE.format(name=name, cls=cls)
        (package / "conf" / "optimizer" / f"{name}.yaml").write_text(text)
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.delitem(sys.modules, "fault_injection", raising=False)  # this test's, not before
    monkeypatch.setenv(SEARCH_PATH_ENV, _search_path(package))
    return package


def _search_path(package: Path) -> str:
    return f"file://{package / 'conf'}"


def _env(package: Path, sentinel: Path) -> dict[str, str]:
    """A sweep subprocess's environment: the package importable, its fault armed."""
    path = os.pathsep.join(filter(None, [str(package), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "FAULT_ONCE": str(sentinel)}


def _experiment(tmp_path: Path, text: str) -> str:
    """An experiment file in the test's folder (``load_experiment`` takes a path)."""
    path = tmp_path / "experiment.yaml"
    path.write_text(text)
    return str(path)


def _stamp(path: Path) -> tuple[int, int]:
    """A file's inode and modification time, which a rewrite or a replacement changes."""
    return path.stat().st_ino, path.stat().st_mtime_ns


def _stamps(runs: Iterable[PlannedRun]) -> dict[Path, tuple[int, int]]:
    """The finished runs' files, each with its :func:`_stamp`."""
    return {run.path: _stamp(run.path) for run in runs if run.path.exists()}


def _now(before: dict[Path, tuple[int, int]]) -> dict[Path, tuple[int, int]]:
    """The files of ``before`` (:func:`_stamps`) as they are now."""
    return {path: _stamp(path) for path in before if path.exists()}


def _numbers(path: Path) -> pd.DataFrame:
    return without_timing(pd.read_parquet(path))


def _hidden(runs: Iterable[PlannedRun]) -> list[Path]:
    """Temporaries (hidden files) left in the runs' folders."""
    folders = {run.path.parent for run in runs if run.path.parent.exists()}
    return sorted(p for folder in folders for p in folder.iterdir() if p.name.startswith("."))


def _leftovers(runs: Iterable[PlannedRun]) -> list[Path]:
    """Markers and temporaries left beside the runs' results files."""
    runs = list(runs)
    return _hidden(runs) + [run.marker_path for run in runs if run.marker_path.exists()]


def _counts(output: str) -> dict[str, int]:
    """The counts a ``sweep run`` printed on its ``finished:`` line."""
    (found,) = FINISHED.findall(output)
    return {key: int(n) for key, n in re.findall(r"'(\w+)': (\d+)", found)}


def _states(runs: list[PlannedRun]) -> list[str]:
    return list(status(runs)["state"])


# ------------------------------------------------------------ damaged results files


def _finished_small_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[list[str], list[PlannedRun]]:
    """A finished sweep of three runs: the arguments that name it, and its runs."""
    experiment = _experiment(tmp_path, SMALL)
    root = tmp_path / "results"
    args = [experiment, "--results-root", str(root)]
    assert sweep_main(["run", *args, "--jobs", "1"]) == 0
    capsys.readouterr()
    return args, plan(experiment, None, root)


def _damaged_file_is_set_aside_and_run_again(
    args: list[str],
    runs: list[PlannedRun],
    damaged: PlannedRun,
    reference: pd.DataFrame,
    why: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``damaged``'s file is damaged; ``reference``: its run's numbers before."""
    bad = damaged.path.read_bytes()
    others = _stamps(run for run in runs if run.path != damaged.path)
    assert sweep_main(["status", *args]) == 1  # exit 1: a run is not done
    assert "3 runs: 2 done, 0 failed, 1 corrupt, 0 missing, 0 waiting" in capsys.readouterr().out
    frame = status(runs).set_index("repetition")
    assert frame.loc[damaged.spec.repetition, "state"] == "corrupt"
    assert why in frame.loc[damaged.spec.repetition, "error"]

    assert sweep_main(["run", *args, "--jobs", "1"]) == 0  # the same command again
    said = capsys.readouterr()
    assert f"moved to {damaged.path.name}.corrupt, will run again" in said.err
    assert _counts(said.out) == {"done": 1, "failed": 0, "skipped": 2}
    kept = damaged.path.with_name(f"{damaged.path.name}.corrupt")
    assert kept.read_bytes() == bad  # moved aside as it was, not deleted
    pd.testing.assert_frame_equal(_numbers(damaged.path), reference)  # the original's numbers
    assert _now(others) == others  # the finished runs untouched
    assert _states(runs) == ["done"] * 3 and _leftovers(runs) == []


def test_a_truncated_results_file_is_corrupt_moved_aside_and_run_again_to_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, runs = _finished_small_sweep(tmp_path, capsys)
    damaged = runs[1]
    reference = _numbers(damaged.path)
    whole = damaged.path.read_bytes()
    damaged.path.write_bytes(whole[: len(whole) // 2])
    _damaged_file_is_set_aside_and_run_again(args, runs, damaged, reference, "unreadable", capsys)


def test_another_runs_results_file_at_a_runs_path_is_treated_as_a_truncated_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, runs = _finished_small_sweep(tmp_path, capsys)
    damaged = runs[1]
    reference = _numbers(damaged.path)
    damaged.path.write_bytes(runs[0].path.read_bytes())  # a whole, readable file: run 0's
    why = "its stored run specification is not this run's"
    _damaged_file_is_set_aside_and_run_again(args, runs, damaged, reference, why, capsys)


# ------------------------------------------------------------------------ disk full


def test_a_full_disk_while_writing_fails_the_run_leaves_no_partial_file_and_a_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = plan(_experiment(tmp_path, SMALL), None, tmp_path / "results")
    victim = runs[1]
    write_table = pq.write_table

    def disk_full_for_the_victim(table: object, where: str, **options: object) -> None:
        """The results writer's write into its temporary file: the victim's stops half-way."""
        write_table(table, where, **options)
        if Path(where).name.startswith(f".{victim.path.name}."):
            os.truncate(where, os.path.getsize(where) // 2)  # what reached the disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), where)

    monkeypatch.setattr(pq, "write_table", disk_full_for_the_victim)
    assert run_sweep(runs, n_jobs=1, progress=False) == {"done": 2, "failed": 1, "skipped": 0}
    frame = status(runs)
    assert list(frame["state"]) == ["done", "failed", "done"]
    assert frame["error"][1].startswith("OSError: [Errno 28] No space left on device")
    assert not victim.path.exists() and victim.failure_path.exists()
    assert _leftovers(runs) == []  # no temporary, no marker
    others = _stamps(runs)

    monkeypatch.undo()  # space again: the same sweep finishes the run
    assert run_sweep(runs, n_jobs=1, progress=False) == {"done": 1, "failed": 0, "skipped": 2}
    assert _states(runs) == ["done"] * 3 and not victim.failure_path.exists()
    assert _now(others) == others
    assert _leftovers(runs) == []


# ------------------------------------------------------- workers killed, memory capped


def _sweep_process(
    experiment: str, root: Path, package: Path, sentinel: Path, *extra: str
) -> subprocess.CompletedProcess:
    command = [
        sys.executable, "-m", "experiments.sweep", "run", experiment, "--results-root",
        str(root), "--jobs", "2", "--search-path", _search_path(package), *extra,
    ]  # fmt: skip
    env = _env(package, sentinel)
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _fault_then_resume(
    tmp_path: Path,
    faults: Path,
    capsys: pytest.CaptureFixture[str],
    method: str,
    cause: str,
    *extra: str,
) -> None:
    """A sweep of three runs of ``method`` under ``--jobs 2`` whose fault fires once: its
    failed runs carry ``cause``, status says so (exit 1), nothing else is lost, and the same
    command finishes every run without touching the finished ones."""
    experiment = _experiment(tmp_path, OUTSIDE.replace("METHOD", method))
    root, sentinel = tmp_path / "results", tmp_path / "fault-once"
    sentinel.touch()
    runs = plan(experiment, None, root)
    faulted = _sweep_process(experiment, root, faults, sentinel, *extra)
    assert not sentinel.exists(), faulted.stderr  # the fault fired
    assert faulted.returncode == 1, faulted.stderr
    counts = _counts(faulted.stdout)
    frame = status(runs)
    failed = frame[frame["state"] == "failed"]
    assert counts["failed"] == len(failed) >= 1 and counts["done"] + counts["failed"] == len(runs)
    assert set(frame["state"]) <= {"done", "failed"}, frame
    assert all(error.startswith(cause) for error in failed["error"]), failed["error"]
    assert not any(runs[i].path.exists() for i in failed.index)
    assert _leftovers(runs) == []
    finished = _stamps(runs)
    assert len(finished) == counts["done"]

    assert sweep_main(["status", experiment, "--results-root", str(root)]) == 1
    shown = capsys.readouterr().out
    assert f"3 runs: {counts['done']} done, {len(failed)} failed, 0 corrupt" in shown
    assert cause in shown

    resumed = _sweep_process(experiment, root, faults, sentinel, *extra)  # the same command
    assert resumed.returncode == 0, resumed.stderr
    again = {"done": counts["failed"], "failed": 0, "skipped": counts["done"]}
    assert _counts(resumed.stdout) == again
    assert _states(runs) == ["done"] * 3
    assert _now(finished) == finished
    assert not any(run.failure_path.exists() for run in runs) and _leftovers(runs) == []


def test_a_worker_killed_mid_run_is_a_failed_run_and_a_resume_finishes_every_run(
    tmp_path: Path, faults: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker's process killed (SIGKILL, as the kernel's out-of-memory killer does): the run
    it was in is failed, "worker died during the run"; so may be a run in flight on the other
    worker, which joblib stops when one of its workers dies."""
    _fault_then_resume(tmp_path, faults, capsys, "kill_once", "worker died during the run")


def test_a_run_over_the_memory_cap_is_a_failed_run_and_a_resume_finishes_it(
    tmp_path: Path, faults: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-memory-gb 2`` caps each worker's address space: a run that asks for more is a
    MemoryError, recorded as its failure; the worker lives on."""
    _fault_then_resume(
        tmp_path, faults, capsys, "over_memory_once", "MemoryError", "--max-memory-gb", "2"
    )


# ------------------------------------------------------------------------- time limit


def test_a_job_ended_at_its_time_limit_leaves_its_run_missing_and_the_same_command_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At its time limit, a job that cannot be requeued is ended by submitit's error, raised in
    the middle of a run: the sweep stops there, the run in flight is missing (not failed: the
    error is the job's), and the next submission runs it."""
    utils = pytest.importorskip("submitit.core.utils", reason="needs the cluster extra")
    runs = plan(_experiment(tmp_path, SMALL), None, tmp_path / "results")
    victim = runs[1]
    run_and_save = single.run_and_save

    def ended_by_the_job(spec: object, path: Path, **options: object) -> Path:
        if path == victim.path:
            message = "Job not requeued because: timed-out and not checkpointable."
            raise utils.UncompletedJobError(message)
        return run_and_save(spec, path, **options)

    monkeypatch.setattr(single, "run_and_save", ended_by_the_job)
    with pytest.raises(utils.UncompletedJobError):
        run_sweep(runs, n_jobs=1, progress=False)
    assert _states(runs) == ["done", "missing", "missing"]
    assert not victim.failure_path.exists() and _leftovers(runs) == []
    finished = _stamps(runs)
    monkeypatch.undo()
    assert run_sweep(runs, n_jobs=1, progress=False) == {"done": 2, "failed": 0, "skipped": 1}
    assert _states(runs) == ["done"] * 3
    assert _now(finished) == finished


# ------------------------------------------------------------------------ dependent parts


def _dependent_sweep(tmp_path: Path) -> tuple[list[str], str, Path]:
    experiment = _experiment(tmp_path, DEPENDENT)
    root = tmp_path / "results"
    return [experiment, "--results-root", str(root)], experiment, root


def _part(runs: list[PlannedRun], part: str) -> list[PlannedRun]:
    return [run for run in runs if run.part == part]


def test_dependent_runs_wait_for_missing_earlier_runs_and_run_once_they_finish(
    tmp_path: Path, faults: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, experiment, root = _dependent_sweep(tmp_path)
    assert sweep_main(["status", *args]) == 0
    assert "3 runs: 0 done, 0 failed, 0 corrupt, 2 missing, 1 waiting" in capsys.readouterr().out
    runs = plan(experiment, None, root)
    (waiting,) = _part(runs, "second")
    assert waiting.waiting == "waits for 2 run(s) of part first on sklearn-iris"

    first = _part(runs, "first")
    assert execute(first[0])[0] == "done"  # the earlier part half done
    (waiting,) = _part(plan(experiment, None, root), "second")
    assert waiting.waiting == "waits for 1 run(s) of part first on sklearn-iris"
    assert sweep_main(["run", *args, "--parts", "second", "--jobs", "1"]) == 0  # nothing to run
    said = capsys.readouterr().out
    assert _counts(said) == {"done": 0, "failed": 0, "skipped": 0}
    assert "1 runs: 0 done, 0 failed, 0 corrupt, 0 missing, 1 waiting" in said
    assert not (root / "dependent" / "default" / "runs" / "second").exists()
    finished = _stamps(first)

    assert sweep_main(["run", *args, "--jobs", "1"]) == 0  # the earlier part, then the second
    said = capsys.readouterr().out
    assert _counts(said) == {"done": 2, "failed": 0, "skipped": 1}
    runs = plan(experiment, None, root)
    assert _states(runs) == ["done"] * 3
    (second,) = _part(runs, "second")
    assert spec_from_file(second.path)["budget"] == 4  # derived from both earlier runs
    assert _now(finished) == finished and _leftovers(runs) == []


def test_dependent_runs_derive_from_the_finished_earlier_runs_when_one_failed(
    tmp_path: Path,
    faults: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An earlier run that failed is settled: the dependent run derives from the finished ones
    and runs. The same command retries the failed run; the dependent run's derived
    specification then changes (it is derived from both), a new run with its own file; the one
    derived from one run stays on disk, untouched."""
    args, experiment, root = _dependent_sweep(tmp_path)
    run_and_save = single.run_and_save
    victim = _part(plan(experiment, None, root), "first")[1]

    def failing(spec: object, path: Path, **options: object) -> Path:
        if path == victim.path:
            raise RuntimeError("the earlier run fails")
        return run_and_save(spec, path, **options)

    monkeypatch.setattr(single, "run_and_save", failing)
    assert sweep_main(["run", *args, "--jobs", "1"]) == 1  # exit 1: a run failed
    said = capsys.readouterr().out
    assert _counts(said) == {"done": 2, "failed": 1, "skipped": 0}
    assert "3 runs: 2 done, 1 failed, 0 corrupt, 0 missing, 0 waiting" in said
    assert "RuntimeError: the earlier run fails" in said
    (derived_from_one,) = _part(plan(experiment, None, root), "second")
    assert spec_from_file(derived_from_one.path)["budget"] == 3
    before = _stamps(plan(experiment, None, root))

    monkeypatch.setattr(single, "run_and_save", run_and_save)
    assert sweep_main(["run", *args, "--jobs", "1"]) == 0
    assert _counts(capsys.readouterr().out) == {"done": 2, "failed": 0, "skipped": 2}
    runs = plan(experiment, None, root)
    assert _states(runs) == ["done"] * 3
    (second,) = _part(runs, "second")
    assert second.path != derived_from_one.path and spec_from_file(second.path)["budget"] == 4
    assert _now(before) == before  # the first part's runs and the run derived from one
    assert _leftovers(runs) == []


def test_a_damaged_earlier_results_file_makes_dependent_runs_wait_until_it_is_run_again(
    tmp_path: Path, faults: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A truncated file in the part others derive from is not a finished run: ``status`` names
    it corrupt and the dependent run waiting (it does not derive from it), and the same command
    moves it aside, runs it again, and then the dependent run, derived as before."""
    args, experiment, root = _dependent_sweep(tmp_path)
    assert sweep_main(["run", *args, "--jobs", "1"]) == 0
    capsys.readouterr()
    runs = plan(experiment, None, root)
    damaged = _part(runs, "first")[0]
    reference = _numbers(damaged.path)
    finished = _stamps(run for run in runs if run != damaged)
    whole = damaged.path.read_bytes()
    damaged.path.write_bytes(whole[: len(whole) // 2])

    assert sweep_main(["status", *args]) == 1
    assert "3 runs: 1 done, 0 failed, 1 corrupt, 0 missing, 1 waiting" in capsys.readouterr().out
    (waiting,) = _part(plan(experiment, None, root), "second")
    assert waiting.waiting == "waits for 1 run(s) of part first on sklearn-iris"

    assert sweep_main(["run", *args, "--jobs", "1"]) == 0
    said = capsys.readouterr()
    assert f"moved to {damaged.path.name}.corrupt, will run again" in said.err
    assert _counts(said.out)["done"] == 1  # the damaged run alone
    assert _states(plan(experiment, None, root)) == ["done"] * 3
    pd.testing.assert_frame_equal(_numbers(damaged.path), reference)
    assert _now(finished) == finished
