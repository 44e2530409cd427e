"""``benchmarks/gpu_networks.sh``, the GPU's measurements in one go, without a GPU: it parses
(``bash -n``), and run with a fake ``python`` on ``PATH`` (a shell script that logs its
arguments, prints a run's table for ``run.py`` and fails or hangs where told) every step runs
whatever an earlier one did, each step's output is in its own file, the summary names the
failed or timed-out step, and the exit code is non-zero; within its time budget a step that
hangs is stopped and the steps left no time are named as not run."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_networks.sh"
STEPS = [
    "device",
    "tests",
    "epoch_costs",
    "batched_cuda",
    "one_cpu_thread",
    "hyperband_mnist5k_cuda_on",
    "hyperband_mnist5k_cuda_off",
    "hyperband_mnist5k_cpu_off",
    "batched_prior_cuda",
    "partner_bits_cuda",
]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$*" in
  *"$FAKE_FAIL"*) echo "planted failure"; exit 3 ;;
  *"$FAKE_HANG"*) exec sleep 60 ;;
  *"$FAKE_STUBBORN"*) trap '' TERM; exec sleep 60 ;;
  run.py*device=cuda*batch_networks=on*) seconds=39.9 ;;
  run.py*device=cuda*) seconds=47.4 ;;
  run.py*) seconds=28.0 ;;
  *) echo "fake output"; exit 0 ;;
esac
echo "   method  dataset learner protocol  evaluations  valid_error_%  test_error_%  seconds"
echo "hyperband mnist-5k    ffnn  holdout           31           7.47          6.54     $seconds"
"""


def _run(
    tmp_path: Path,
    fail: str = "no step",
    hang: str = "no step",
    budget: int = 290,
    stubborn: str = "no step",
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "OUT": str(tmp_path / "out"),
        "FAKE_LOG": str(tmp_path / "calls.log"),
        "FAKE_FAIL": fail,
        "FAKE_HANG": hang,
        "FAKE_STUBBORN": stubborn,
        "GPU_SCRIPT_SECONDS": str(budget),
    }
    started = time.perf_counter()
    finished = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    calls = (tmp_path / "calls.log").read_text().splitlines()
    summary = (tmp_path / "out" / "summary.txt").read_text()
    return finished, calls, summary, time.perf_counter() - started


def test_the_script_parses() -> None:
    checked = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_every_step_runs_and_the_summary_names_the_failed_one(tmp_path: Path) -> None:
    finished, calls, summary, _ = _run(tmp_path, fail="tests/test_gpu.py")
    assert finished.returncode == 1
    assert len(calls) == len(STEPS)  # the steps after the failed one ran too
    assert calls[-1] == "benchmarks/partner_bits.py --device cuda"
    lines = summary.splitlines()
    for name in STEPS:
        expected = "FAILED (exit 3)" if name == "tests" else "ok"
        assert f"  {name}: {expected}" in lines
        assert (tmp_path / "out" / f"{name}.txt").is_file()
    assert "planted failure" in (tmp_path / "out" / "tests.txt").read_text()
    assert "  cuda, batch_networks on: 39.9" in lines
    assert "  cuda, batch_networks off: 47.4" in lines
    assert "  cpu, batch_networks off: 28.0" in lines
    out = tmp_path / "out"
    assert f"results_dir={out}/hyperband_cuda_on" in calls[5]
    assert f"--json {out}/ffnn_batched_costs_cuda.json" in calls[3]
    assert f"--json {out}/ffnn_batched_costs_cuda.json" in calls[8]


def test_all_ok_exits_0(tmp_path: Path) -> None:
    finished, calls, summary, _ = _run(tmp_path)
    assert finished.returncode == 0, summary
    assert summary.count(": ok") == len(STEPS) and "FAILED" not in summary


def test_a_hung_step_is_stopped_within_the_scripts_budget(tmp_path: Path) -> None:
    budget = 8  # GPU_SCRIPT_SECONDS: the epoch-cost step hangs (60 s) and takes all of it
    finished, calls, summary, seconds = _run(tmp_path, hang="--epochs 3", budget=budget)
    assert finished.returncode == 1
    assert seconds < budget + 10  # stopped by its limit; the steps after it not started
    assert len(calls) == 3  # device, tests, the hung step
    assert "  device: ok" in summary and "  tests: ok" in summary
    assert "  epoch_costs: FAILED (exit 124: timed out after" in summary
    for name in STEPS[3:]:
        assert f"  {name}: FAILED (not run: the script's {budget} s were spent)" in summary
    assert "  cuda, batch_networks on: none (the run failed)" in summary


def test_a_step_that_ignores_sigterm_still_ends_within_the_scripts_budget(tmp_path: Path) -> None:
    """A step that ignores SIGTERM is killed 5 s after its limit: that grace is inside the
    script's budget, so a device call sized to the budget gets its results back."""
    budget = 8
    finished, calls, summary, seconds = _run(tmp_path, stubborn="--epochs 3", budget=budget)
    assert finished.returncode == 1
    assert seconds < budget + 1.5, seconds
    assert "  epoch_costs: FAILED (exit 137: timed out after" in summary
