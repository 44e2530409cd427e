"""``benchmarks/batched_reproduction.py``: the smoke reproduction with ``batch_networks`` on
against off, compared run by run. The sequential methods must be bit-identical (batching leaves
them alone); random search and Hyperband may differ where a network is chaotic."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchmarks.batched_reproduction import main

RATES = [0.05, 2.5, 0.3]  # the second one chaotic


def _write(root: Path, profile: str, losses: dict[str, list[float]]) -> None:
    """One mnist run per method with three evaluations of ``losses[method]``."""
    outcomes, traces = [], []
    for method, values in losses.items():
        run_id = f"{method}:0"
        for i, (loss, rate) in enumerate(zip(values, RATES, strict=True)):
            common = {"run_id": run_id, "method": method, "iteration": i, "part": "mnist",
                      "dataset": "sklearn-digits", "repetition": 0}  # fmt: skip
            traces.append({**common, "valid_loss": loss, "param_learning_rate": rate})
            best = min(values[: i + 1])
            outcomes.append({**common, "incumbent_valid_loss": best, "test_error": best + 0.01})
    folder = root / "surrogates" / profile / "consolidated"
    folder.mkdir(parents=True)
    pd.DataFrame(outcomes).to_parquet(folder / "outcomes.parquet")
    pd.DataFrame(traces).to_parquet(folder / "traces.parquet")


OFF = {"tpe": [0.2, 0.1, 0.3], "rs": [0.2, 0.15, 0.3]}


def test_a_chaotic_random_search_loss_may_differ_but_tpe_must_not(tmp_path, capsys) -> None:
    _write(tmp_path, "smoke", OFF)
    _write(tmp_path, "smoke_batched", {**OFF, "rs": [0.2, 0.12, 0.3]})
    assert main(["--results-root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rs = next(line for line in out.splitlines() if line.startswith("mnist RANDOM"))
    assert "2/3" in rs and "0 below 1, 1 from 1" in rs  # the chaotic one
    assert "identical runs: RANDOM 0/1, TPE 1/1" in out


def test_a_sequential_method_that_differs_fails_the_check(tmp_path, capsys) -> None:
    _write(tmp_path, "smoke", OFF)
    _write(tmp_path, "smoke_batched", {**OFF, "tpe": [0.2, 0.1, 0.31]})
    assert main(["--results-root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "check failed: mnist TPE repetition 0 differs (batching should leave it alone)" in err


def test_a_missing_profile_names_the_command_that_makes_it(tmp_path) -> None:
    _write(tmp_path, "smoke", OFF)
    with pytest.raises(SystemExit, match="python -m experiments.reproduce surrogates --profile "
                                         "smoke_batched"):  # fmt: skip
        main(["--results-root", str(tmp_path)])


def test_a_run_with_traces_but_no_outcome_is_reported_missing(tmp_path, capsys) -> None:
    _write(tmp_path, "smoke", OFF)
    _write(tmp_path, "smoke_batched", OFF)
    outcomes = tmp_path / "surrogates" / "smoke_batched" / "consolidated" / "outcomes.parquet"
    frame = pd.read_parquet(outcomes)
    frame[frame["method"] != "tpe"].to_parquet(outcomes)  # TPE's run ended before its outcome
    assert main(["--results-root", str(tmp_path)]) == 1
    assert "mnist TPE repetition 0 missing on one side" in capsys.readouterr().err
