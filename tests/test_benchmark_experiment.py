"""The benchmark experiment (``conf/experiment/benchmark.yaml``): candidates named on the command
line run beside the baselines, the sweep folder remembers them, and the report ranks them
(candidates against each baseline, overfitting, time per proposal, critical-difference diagrams).
A two-dataset stand-in of the smoke profile keeps it short."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analysis.report import write_report
from experiments.configuration.config import UsageError
from experiments.sweep import add_candidates, load_experiment, plan, read_candidates, run_all
from experiments.sweep.cli import main as sweep_main

TINY = {
    "name": "benchmark",
    "profiles": {
        "smoke": {
            "parts": {
                "svm": {
                    "datasets": ["sklearn-iris", "sklearn-wine", "sklearn-breast-cancer"],
                    "methods": ["rs", "grid"],
                    "candidates": True,
                    "space": "svm_rbf",
                    "protocols": ["holdout"],
                    "repetitions": 1,
                    "budget": 4,
                    "seed": 0,
                }
            }
        }
    },
}


@pytest.fixture
def tiny(tmp_path: Path) -> str:
    path = tmp_path / "benchmark.yaml"
    path.write_text(yaml.safe_dump(TINY))
    return str(path)


def test_candidates_run_beside_the_baselines_and_the_report_ranks_them(
    tiny: str, tmp_path: Path
) -> None:
    root = tmp_path / "results"
    assert len(plan(tiny, "smoke", root)) == 6  # the baselines only
    add_candidates(tiny, "smoke", ["cma"], root)
    planned = plan(tiny, "smoke", root)
    assert len(planned) == 9 and {r.spec.method.optimizer for r in planned} == {"rs", "grid", "cma"}
    runs, counts = run_all(tiny, "smoke", root, n_jobs=1)
    assert counts == {"done": 9, "failed": 0, "skipped": 0}
    folder = root / "benchmark" / "smoke"
    assert read_candidates(folder) == ["cma"]  # remembered: the same command resumes it
    assert len(plan(tiny, "smoke", root)) == 9
    report = write_report(folder, chapter="benchmark").read_text()
    assert "Candidates: cma; baselines: grid, rs." in report
    assert "| cma | rs |" in report and "| cma | grid |" in report
    assert "not evaluated: underpowered (smallest attainable p 0.25)" in report
    for section in ("## Overfitting of the chosen configuration", "## Time per proposal"):
        assert section in report
    assert (folder / "report" / "figures" / "holdout_svm_cd_nemenyi.png").is_file()


def test_a_bad_candidate_is_one_line(tiny: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown optimizer 'cmaes' \\(did you mean 'cma'"):
        add_candidates(tiny, "smoke", ["cmaes"], tmp_path / "results")
    with pytest.raises(UsageError, match="experiment 'demo' takes no candidates"):
        add_candidates("demo", None, ["cma"], tmp_path / "results")
    assert not (tmp_path / "results").exists()  # nothing written


def test_the_shipped_experiment_has_three_profiles_and_takes_candidates() -> None:
    config = load_experiment("benchmark")
    assert list(config["profiles"]) == ["smoke", "medium", "paper"]
    for profile in config["profiles"].values():
        assert all(part["candidates"] for part in profile["parts"].values())


def test_an_outside_packages_optimizer_is_benchmarked(
    tiny: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worked example (``examples/my_optimizer``: its class and its own method file,
    found on Hydra's search path) ranked beside the baselines."""
    example = Path(__file__).resolve().parents[1] / "examples" / "my_optimizer"
    monkeypatch.syspath_prepend(str(example))  # as `pip install -e examples/my_optimizer` does
    root = tmp_path / "results"
    paths = ["pkg://my_optimizer/conf"]
    with pytest.raises(UsageError, match="unknown optimizer 'my_local_search'"):
        add_candidates(tiny, "smoke", ["my_local_search"], root)  # not without its search path
    add_candidates(tiny, "smoke", ["my_local_search"], root, search_path=paths)
    runs, counts = run_all(tiny, "smoke", root, n_jobs=1)
    assert counts["done"] == 9 and counts["failed"] == 0
    assert {r.spec.method.optimizer for r in runs} == {"rs", "grid", "my_optimizer.LocalSearch"}
    report = write_report(root / "benchmark" / "smoke", chapter="benchmark").read_text()
    assert "Candidates: my_local_search; baselines: grid, rs." in report
    assert "| my_local_search | rs |" in report


def test_a_dry_run_with_candidates_plans_them_and_writes_nothing(tiny: str, tmp_path: Path) -> None:
    """``sweep plan --candidates`` shows the candidates' runs but remembers nothing: a later
    plan without them has the baselines only; ``run`` remembers them."""
    root = tmp_path / "results"
    command = ["plan", tiny, "--profile", "smoke", "--results-root", str(root)]
    assert sweep_main([*command, "--candidates", "cma"]) == 0
    assert not list(root.rglob("*.json"))
    assert len(plan(tiny, "smoke", root)) == 6
    assert len(plan(tiny, "smoke", root, candidates=(["cma"], []))) == 9
