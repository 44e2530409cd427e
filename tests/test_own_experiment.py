"""A researcher's own experiment file, in a package outside the repository: found on the search
path by the sweep engine and by ``run.py experiment=…``, naming the package's own CSV files,
its own optimizer and two built-in baselines; the report ranks every method."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from analysis.__main__ import main as analysis_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_optimizer"
SEARCH = "pkg://my_optimizer/conf"


def _run(*command: str, results: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")]),
        "HPO_RESULTS_ROOT": str(results),
    }
    env.pop("HPO_SEARCH_PATH", None)
    return subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_an_own_experiment_file_runs_and_its_report_ranks_every_method(tmp_path: Path) -> None:
    sweep = ["-m", "experiments.sweep", "run", "my_benchmark", "--results-root", str(tmp_path)]
    done = _run(*sweep, "--search-path", SEARCH, "--jobs", "1", results=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "12 runs: 12 done" in done.stdout
    folder = tmp_path / "my_benchmark" / "smoke"
    # run.py finds the same file on Hydra's search path, and the same runs (all finished)
    again = _run(
        "run.py",
        "experiment=my_benchmark",
        "profile=smoke",
        f"hydra.searchpath=[{SEARCH}]",
        results=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert "'done': 0, 'failed': 0, 'skipped': 12" in again.stdout
    code = analysis_main([str(folder), "--no-figures", "--candidates", "my_local_search"])
    assert code == 0
    text = (folder / "report" / "report.md").read_text()
    assert "Candidates: my_local_search; baselines: rs, gp." in text
    assert "| dataset | rs | gp | my_local_search |" in text
    assert "Friedman over 3 methods and 2 datasets" in text
    assert "missing" not in text.lower()
    datasets = {p.name for p in (folder / "runs" / "main").iterdir()}
    assert len(datasets) == 2 and not any(":" in name for name in datasets)


def test_an_own_experiment_without_its_search_path_is_one_line(tmp_path: Path) -> None:
    done = _run("-m", "experiments.sweep", "plan", "my_benchmark", results=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "unknown experiment 'my_benchmark'" in done.stderr
    assert "--search-path pkg://my_pkg/conf" in done.stderr
