"""The cluster path on a real SLURM: a one-node cluster on this machine
(``tools/slurm-local.sh start``), sweeps submitted by ``run.py -m ... hydra/launcher=slurm`` as job
arrays, and what a cancelled, preempted or memory-killed job does to them.

Marked ``slurm``: the default run leaves them out; ``.ci/run`` starts the local SLURM and runs
``pytest -m slurm``. Where SLURM is not running they are skipped with the reason (under CI, ``CI``
set, they fail instead). Each test writes into its own results folder; the node has as many CPUs
as the affinity of whoever started it (one, under ``taskset -c 0``), so the tasks of an array may
run one after another.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from experiments.sweep import consolidate, plan
from runfiles.files import spec_from_file, without_timing

pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="needs the cluster extra")
pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parents[1]
STATE = Path(os.environ.get("HPO_SLURM_DIR", "/tmp/hpo-slurm"))
PROVENANCE = ["git_revision"]
SORT = ["run_id", "row_type", "method", "iteration"]
SACCT_WARNING = "sacct"  # submitit's warning when its status poll fails names the command
ONE_AT_A_TIME = ["hydra.launcher.array_parallelism=1"]  # shard 1 pends while shard 0 runs
# ci's runs take 30 ms: a shard of them may end between two polls. The held profile's take about
# a second, so a shard of six is stopped (suspended, cancelled, signalled) between two runs.
HELD, HELD_PROFILE = "cluster_ci", "held"
LAUNCHER = ["hydra/launcher=slurm", "hydra.launcher.timeout_min=10", "hydra.launcher.mem_gb=2"]


def _slurm_conf() -> Path | None:
    """The configuration of a SLURM that answers, else None."""
    conf = Path(os.environ.get("SLURM_CONF", STATE / "slurm.conf"))
    if not conf.is_file():
        return None
    try:
        state = subprocess.run(
            ["sinfo", "-h", "-o", "%T"],
            env={**os.environ, "SLURM_CONF": str(conf)},
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return conf if {"idle", "mixed", "allocated"} & set(state) else None


@pytest.fixture(scope="module")
def slurm_env() -> dict[str, str]:
    """The environment of a command that submits to the local SLURM."""
    conf = _slurm_conf()
    if conf is None:
        reason = (
            f"SLURM not running (no answering node for {os.environ.get('SLURM_CONF', STATE)}): "
            "start one with tools/slurm-local.sh start, then pytest -m slurm"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return {**os.environ, "SLURM_CONF": str(conf), "PYTHONPATH": str(REPO)}


def _env(base: dict[str, str], root: Path) -> dict[str, str]:
    return {**base, "HPO_RESULTS_ROOT": str(root)}


def _submit_command(experiment: str, root: Path, n_shards: int, *extra: str) -> list[str]:
    return [
        sys.executable, "run.py", "-m", f"experiment={experiment}", f"n_shards={n_shards}",
        f"shard=range(0,{n_shards})", *LAUNCHER, f"hydra.sweep.dir={root / 'hydra'}", *extra,
    ]  # fmt: skip


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert SACCT_WARNING not in result.stderr, result.stderr[-2000:]  # quiet status polls
    return result


def _sweep(command: str, experiment: str, env: dict[str, str], *extra: str) -> str:
    result = _run([sys.executable, "-m", "experiments.sweep", command, experiment, *extra], env)
    return result.stdout


def _consolidated(experiment: str, root: Path, profile: str | None = None) -> pd.DataFrame:
    paths = consolidate(plan(experiment, profile, root), root / "merged")
    table = pd.concat([without_timing(pd.read_parquet(p)) for p in paths.values()])
    table = table.drop(columns=[c for c in PROVENANCE if c in table.columns])
    return table.sort_values(SORT).reset_index(drop=True)


def _shard_logs(sweep_dir: Path) -> dict[str, str]:
    """Each job's log, stdout then stderr, by its job id (``<array>_<task>``)."""
    folders = [f for f in (sweep_dir / "submitit").glob("[0-9]*") if any(f.glob("*_log.out"))]
    return {f.name: "".join(p.read_text() for p in sorted(f.glob("*_log.*"))) for f in folders}


def _shard_runs(
    experiment: str, root: Path, shard: int, n_shards: int, profile: str | None = None
) -> list[Path]:
    return [run.path for run in plan(experiment, profile, root)[shard::n_shards]]


def _finished(paths: list[Path]) -> dict[Path, tuple]:
    """The finished runs among ``paths``: path -> (inode, mtime), which a re-run would change."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in paths if p.exists()}


def _hold_mid_shard(paths: list[Path], job: str, env: dict[str, str]) -> dict[Path, tuple]:
    """Wait until two runs of ``paths`` are finished, then suspend ``job`` (SIGSTOP: it cannot
    finish meanwhile, once slurmd has delivered it); the runs finished by then."""
    _wait_for(lambda: len(_finished(paths)) >= 2, "two runs of the shard")
    subprocess.run(["scontrol", "suspend", job], env=env, check=True)
    kept = _finished(paths)
    assert len(kept) < len(paths), "the shard finished before it was held: nothing tested"
    return kept


def _wait_for(condition, what: str, timeout: float = 120.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@contextmanager
def _cleaned_up(submission: subprocess.Popen, env: dict[str, str]) -> Iterator[list[str]]:
    """Around a test's use of a running submission: should the test fail, no submission process
    and none of its jobs (the arrays appended to the list it gives) are left behind."""
    arrays: list[str] = []
    try:
        yield arrays
    except BaseException:
        submission.kill()
        for array in arrays:
            subprocess.run(["scancel", array], env=env, check=False)
        raise


def _wait_until_gone(array: str, env: dict[str, str]) -> None:
    """Until SLURM lists no pending or running task of ``array``."""
    command = ["squeue", "-h", "-j", array, "-o", "%T"]
    queued = lambda: subprocess.run(command, env=env, capture_output=True, text=True).stdout  # noqa: E731
    _wait_for(lambda: not queued().strip(), f"array {array} to end", timeout=300)


def _start_now_once_requeued(job: str, env: dict[str, str]) -> None:
    """SLURM holds a requeued job back (its begin time, about two minutes here): let it start."""

    def reason() -> str:
        command = ["squeue", "-h", "-j", job, "-o", "%r"]
        return subprocess.run(command, env=env, capture_output=True, text=True).stdout.strip()

    _wait_for(lambda: reason() == "BeginTime", f"job {job} to be requeued", timeout=60)
    subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], env=env, check=True)


def _shard_job(
    experiment: str,
    root: Path,
    shard: int,
    n_shards: int,
    profile: str = "default",
    stage: str = "",
) -> str:
    """The SLURM job of a started shard, from its record."""
    path = root / experiment / profile / "shards" / f"shard-{shard}-of-{n_shards}{stage}.json"
    _wait_for(lambda: path.exists() and "slurm_job" in path.read_text(), f"shard {shard}")
    return json.loads(path.read_text())["slurm_job"]


def _local(
    root: Path, env: dict[str, str], experiment: str, profile: str | None = None
) -> pd.DataFrame:
    """``experiment`` at ``profile`` run locally in one process: what every submission must give."""
    chosen = ["--profile", profile] if profile else []
    command = [sys.executable, "-m", "experiments.sweep", "run", experiment, *chosen, "--jobs", "1"]
    result = _run(command, _env(env, root))
    assert result.returncode == 0, result.stderr[-2000:]
    return _consolidated(experiment, root, profile)


@pytest.fixture(scope="module")
def local_held(tmp_path_factory: pytest.TempPathFactory, slurm_env: dict[str, str]) -> pd.DataFrame:
    """The held profile's sweep (runs of about a second, to be stopped between two) run locally."""
    return _local(tmp_path_factory.mktemp("local-held"), slurm_env, HELD, HELD_PROFILE)


@pytest.fixture(scope="module")
def local_ci(tmp_path_factory: pytest.TempPathFactory, slurm_env: dict[str, str]) -> pd.DataFrame:
    """Chapter 3's CI sweep run locally in one process."""
    return _local(tmp_path_factory.mktemp("local"), slurm_env, "ci")


def test_a_job_array_of_three_shards_equals_the_sweep_in_one_process(
    tmp_path: Path, slurm_env: dict[str, str], local_ci: pd.DataFrame
) -> None:
    env = _env(slurm_env, tmp_path)
    result = _run(_submit_command("ci", tmp_path, 3), env)
    assert result.returncode == 0, result.stderr[-3000:]
    logs = _shard_logs(tmp_path / "hydra")
    jobs = {name.split("_")[0] for name in logs}
    assert len(jobs) == 1 and len({name for name in logs}) == 3  # one array, three tasks
    for shard in range(3):
        assert any(f"ci/default shard {shard}/3: {{'done': 6" in log for log in logs.values())
    pd.testing.assert_frame_equal(_consolidated("ci", tmp_path), local_ci)


def test_a_cancelled_task_resumes_without_rerunning_or_losing_runs_and_status_follows_the_queue(
    tmp_path: Path, slurm_env: dict[str, str], local_held: pd.DataFrame
) -> None:
    env = _env(slurm_env, tmp_path)
    command = _submit_command(HELD, tmp_path, 2, f"profile={HELD_PROFILE}", *ONE_AT_A_TIME)
    paths = _shard_runs(HELD, tmp_path, 0, 2, HELD_PROFILE)
    submission = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
    with _cleaned_up(submission, env) as arrays:
        job = _shard_job(HELD, tmp_path, 0, 2, HELD_PROFILE)
        arrays.append(job.split("_")[0])
        kept = _hold_mid_shard(paths, job, env)
        live = _sweep("status", HELD, env, "--profile", HELD_PROFILE, "--n-shards", "2")
        assert "shard 0/2: running" in live and "shard 1/2: pending" in live, live
        subprocess.run(["scancel", job], env=env, check=True)
        _, stderr = submission.communicate(timeout=300)
        _wait_until_gone(arrays[0], env)  # the launcher stops at the failed task; shard 1 runs on
    # `scontrol suspend` returns before slurmd has stopped the task: a run it was writing may
    # still land. What the resubmission must skip is what was finished when the task ended.
    ended_with = _finished(paths)
    assert kept.items() <= ended_with.items() and len(ended_with) < len(paths), ended_with
    kept = ended_with
    assert submission.returncode != 0  # the launcher reports the cancelled task
    assert SACCT_WARNING not in stderr, stderr[-2000:]
    after = _sweep("status", HELD, env, "--profile", HELD_PROFILE, "--n-shards", "2")
    assert "shard 0/2: failed" in after and f"SLURM job {job} ended CANCELLED" in after, after
    assert "shard 1/2: finished, 6 of 6 runs done" in after, after

    again = _run(command, env)  # the same command
    assert again.returncode == 0, again.stderr[-3000:]
    logs = _shard_logs(tmp_path / "hydra")
    resubmitted = max({int(name.split("_")[0]) for name in logs})
    ended = (
        f"{HELD}/{HELD_PROFILE} shard {{}}/2: {{{{'done': {{}}, 'failed': 0, 'skipped': {{}}}}}}"
    )
    assert ended.format(0, len(paths) - len(kept), len(kept)) in logs[f"{resubmitted}_0"]
    assert ended.format(1, 0, len(paths)) in logs[f"{resubmitted}_1"]  # nothing run twice
    assert {p: s for p, s in _finished(paths).items() if p in kept} == kept  # not re-run
    done = _sweep("status", HELD, env, "--profile", HELD_PROFILE, "--n-shards", "2")
    assert "2 shards: 0 pending, 0 running, 2 finished, 0 failed" in done, done
    pd.testing.assert_frame_equal(_consolidated(HELD, tmp_path, HELD_PROFILE), local_held)


def test_a_preempted_task_checkpoints_requeues_and_finishes_with_the_same_results(
    tmp_path: Path, slurm_env: dict[str, str], local_held: pd.DataFrame
) -> None:
    env = _env(slurm_env, tmp_path)
    paths = _shard_runs(HELD, tmp_path, 0, 2, HELD_PROFILE)
    # a signal within 80 % of the time limit is a preemption to submitit (later: a timeout)
    command = _submit_command(
        HELD,
        tmp_path,
        2,
        f"profile={HELD_PROFILE}",
        *ONE_AT_A_TIME,
        "hydra.launcher.timeout_min=60",
    )
    submission = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
    with _cleaned_up(submission, env) as arrays:
        job = _shard_job(HELD, tmp_path, 0, 2, HELD_PROFILE)
        arrays.append(job.split("_")[0])
        _wait_for(lambda: len(_finished(paths)) >= 2, "two runs of the shard")
        kept = _finished(paths)
        # submitit's preemption signal (SLURM sends it ahead of a preemption or the time limit)
        subprocess.run(["scancel", "--signal", "USR2", job], env=env, check=True)
        _start_now_once_requeued(job, env)
        _, stderr = submission.communicate(timeout=300)
    assert submission.returncode == 0, stderr[-3000:]
    assert SACCT_WARNING not in stderr, stderr[-2000:]
    assert len(kept) < len(paths), "the shard finished before it was preempted: nothing tested"
    log = _shard_logs(tmp_path / "hydra")[job]
    assert "DUE TO JOB REQUEUE" in log, log  # submitit's checkpoint requeued the job
    assert log.count("Starting with JobEnvironment") == 2, log  # requeued once, started again
    (ended,) = re.findall(
        rf"{HELD}/{HELD_PROFILE} shard 0/2: \{{'done': (\d+), 'failed': 0, 'skipped': (\d+)", log
    )
    assert int(ended[1]) >= len(kept) and sum(map(int, ended)) == len(paths), log
    assert {p: s for p, s in _finished(paths).items() if p in kept} == kept  # not re-run
    pd.testing.assert_frame_equal(_consolidated(HELD, tmp_path, HELD_PROFILE), local_held)


@pytest.mark.needs_data("uci121")
def test_a_task_over_its_memory_limit_is_a_failed_run_naming_the_limit(
    tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    env = _env(slurm_env, tmp_path)
    # one run per shard; pendigits' shard takes about 1.6 GB, iris' 0.4 GB
    command = _submit_command("cluster_ci", tmp_path, 2, "profile=memory")
    command[command.index("hydra.launcher.mem_gb=2")] = "hydra.launcher.mem_gb=1"
    result = _run(command, env)
    assert result.returncode != 0  # the launcher reports the killed task
    status = _sweep("status", "cluster_ci", env, "--profile", "memory", "--n-shards", "2")
    assert "2 runs: 1 done, 1 failed" in status, status  # the run, with its error below
    (failed,) = [line for line in status.splitlines() if " pendigits " in line]
    assert "over its memory limit of 1G" in failed, status
    assert "2 shards: 0 pending, 0 running, 1 finished, 1 failed" in status, status
    (shard,) = [line for line in status.splitlines() if line.startswith("shard 1/2: failed")]
    assert "over its memory limit of 1G" in shard, status


def _queue(env: dict[str, str]) -> list[str]:
    """squeue's lines: job (the array's id for an array), reason, dependency."""
    command = ["squeue", "-h", "-o", "%F %r %E"]
    return subprocess.run(command, env=env, capture_output=True, text=True).stdout.splitlines()


def test_autoweka_stages_queue_with_afterok_and_irace_reads_stage_one(
    tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    env = _env(slurm_env, tmp_path)
    # stage one submitted held, so that it cannot end before stage two is seen waiting for it
    stage_one = _submit_command("autoweka", tmp_path, 1, "profile=ci", "parts=[classification]")
    stage_one.append("+hydra.launcher.additional_parameters.hold=true")
    one = subprocess.Popen(stage_one, cwd=REPO, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    held = lambda: [line.split()[0] for line in _queue(env) if "JobHeldUser" in line]  # noqa: E731
    with _cleaned_up(one, env) as arrays:
        _wait_for(held, "stage one in the queue")
        (array,) = set(held())
        arrays.append(array)
        stage_two = [
            sys.executable, "run.py", "-m", "experiment=autoweka", "profile=ci", "n_shards=1",
            "shard=range(0,1)", "parts=[irace_classification]", *LAUNCHER,
            f"hydra.sweep.dir={tmp_path / 'hydra2'}",
            f"+hydra.launcher.additional_parameters.dependency=afterok:{array}",
            "+hydra.launcher.additional_parameters.kill_on_invalid_dep=yes",
        ]  # fmt: skip
        two = subprocess.Popen(stage_two, cwd=REPO, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
        waiting = lambda: [line for line in _queue(env) if f"afterok:{array}" in line]  # noqa: E731
        _wait_for(waiting, "stage two in the queue")
        assert all(" Dependency " in line for line in waiting()), waiting()
        subprocess.run(["scontrol", "release", array], env=env, check=True)
        _, stderr_two = two.communicate(timeout=300)
        _, stderr_one = one.communicate(timeout=300)
    assert one.returncode == 0, stderr_one[-3000:]
    assert two.returncode == 0, stderr_two[-3000:]
    assert SACCT_WARNING not in stderr_one + stderr_two
    (log,) = _shard_logs(tmp_path / "hydra2").values()
    assert "autoweka/ci shard 0/1: {'done': 1, 'failed': 0, 'skipped': 0}" in log, log
    runs = plan("autoweka", "ci", tmp_path)
    (irace,) = [run for run in runs if run.part == "irace_classification"]
    assert not irace.waiting and irace.path.exists()
    # its budget in evaluations, from stage one's finished random-search run
    calibrated = irace.spec.method.settings["max_evaluations"]
    assert spec_from_file(irace.path)["optimizer_settings"]["max_evaluations"] == calibrated
