"""``sweep cost surrogates``: network runs costed by epochs (the epoch-cost table of
``benchmarks/ffnn_epoch.py --json``), Hyperband's by its plan, the SVM part's Hyperband and BOHB by
the plan's full-training-set equivalents; a cell no table holds is still one error line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from experiments.cluster import (
    COSTS_FILE,
    EPOCH_COSTS_FILE,
    UsageError,
    expected_incumbents,
    load_costs,
    plan_epochs,
    plan_full_fits,
    print_cost,
    run_seconds,
    runs_table,
    size_bin,
)
from experiments.sweep import plan
from hpo.optimizers.hyperband import Fidelity


def test_hyperband_epochs_are_the_seed_plan_resumed() -> None:
    # MNIST R = 50 units of 20 epochs, eta = 4: 16 @ 62.5 (63) -> 4 @ 250 -> 1 @ 1000;
    # 6 @ 250 -> 1 @ 1000; 3 @ 1000, each rung's survivors resuming from the last
    by_hand = 16 * 63 + 4 * (250 - 63) + (1000 - 250) + 6 * 250 + (1000 - 250) + 3 * 1000
    assert plan_epochs(Fidelity("hyperband", 50, 4, 20, "epochs", "round", 1)) == by_hand == 7756


def test_train_fraction_plan_counts_full_fits() -> None:
    # R = 27, eta = 3: brackets 27/9/3/1, 12/4/1, 6/2, 4, each rung a share r/27 of the rows
    plan27 = Fidelity("hyperband", 27, 3, 20, "train_fraction", "round", 1)
    assert plan_full_fits(plan27) == pytest.approx(4 + (12 * 3 + 4 * 9 + 27) / 27 + 4 + 4)


@pytest.fixture(scope="module")
def paper(uci_dir: Path) -> list:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HPO_UCI121_DIR", str(uci_dir))
        return plan("surrogates", "paper")


def _core_hours(runs: list, capsys: pytest.CaptureFixture[str]) -> float:
    assert print_cost("surrogates", "paper", runs, n_shards=1) == 0
    text = capsys.readouterr().out
    return float(re.search(r"estimated cost: ([\d,.]+) core-hours", text)[1].replace(",", ""))


def _one(runs: list, part: str, method: str):
    return next(run for run in runs if run.part == part and run.spec.run_method == method)


def test_paper_profile_prints_cpu_hours_and_the_gpu_line(
    paper: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_gpu_table = tmp_path / "ffnn_epoch_costs_cuda.json"
    assert print_cost("surrogates", "paper", paper, n_shards=100, gpu_costs_file=no_gpu_table) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"surrogates/paper: {len(paper)} runs in 100 shards (up to 48 runs each)"
    assert lines[2].startswith("estimated cost: ")
    assert any(line.startswith("network runs: 100 runs, ") for line in lines)
    assert any("early stopping stops sooner" in line for line in lines)
    (gpu,) = [line for line in lines if line.startswith("on a GPU: ")]
    assert (
        gpu.startswith("on a GPU: unmeasured, no GPU epoch-cost table") and "x speed-up" not in gpu
    )
    assert "--device cuda --json" in gpu and "--batched --device cuda" in gpu
    assert any("libsvm is superlinear" in line for line in lines)


def test_gpu_hours_are_the_runs_epochs_at_the_gpus_measured_epoch(
    paper: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu_table = tmp_path / "ffnn_epoch_costs_cuda.json"
    cells = {"ffnn_mnist": {"seconds_per_epoch": 0.05}, "ffnn_mrbi": {"seconds_per_epoch": 0.08}}
    gpu_table.write_text(json.dumps({"device": "cuda", "device_name": "cuda: a planted GPU",
                                     "measured": "then", "spaces": cells}))  # fmt: skip
    hyperband = _one(paper, "mnist", "hyperband")
    assert print_cost("surrogates", "paper", [hyperband], n_shards=1, gpu_costs_file=gpu_table) == 0
    (gpu,) = [line for line in capsys.readouterr().out.splitlines() if "on a GPU" in line]
    epochs = 7756 + expected_incumbents(31) * 1000  # as the planted CPU run below
    assert f"are {epochs * 0.05 / 3600:,.2f} GPU-hours" in gpu and "a planted GPU, then" in gpu


def test_one_planted_run_costs_its_hand_computation(
    paper: list, capsys: pytest.CaptureFixture[str]
) -> None:
    epoch_s = json.loads(EPOCH_COSTS_FILE.read_text())["spaces"]
    mnist, mrbi = (
        epoch_s["ffnn_mnist"]["seconds_per_epoch"],
        epoch_s["ffnn_mrbi"]["seconds_per_epoch"],
    )
    hb = (7756 + expected_incumbents(31) * 1000) * mnist  # 31 evaluations, retrained to the cap
    assert _core_hours([_one(paper, "mnist", "hyperband")], capsys) == pytest.approx(
        hb / 3600, abs=0.006
    )
    rs = (30 * 2000 + expected_incumbents(30) * 2000) * mrbi  # budget x the cap, an upper bound
    assert _core_hours([_one(paper, "mrbi", "rs")], capsys) == pytest.approx(rs / 3600, abs=0.006)


def test_svm_hyperband_is_the_rs_cell_times_its_full_fits(paper: list) -> None:
    run = _one(paper, "svm", "hyperband")
    table = runs_table([run])
    costs = load_costs(COSTS_FILE)
    rs_cell = costs[("rs", run.spec.protocol_name, int(size_bin(table["tvs"][0])))]
    expected = rs_cell * (4 + (12 * 3 + 4 * 9 + 27) / 27 + 4 + 4) / 100  # not its budget 100,000
    assert run_seconds(table, costs)[0] == pytest.approx(expected)


def test_a_family_without_any_cost_is_one_error_line(paper: list) -> None:
    table = runs_table([_one(paper, "svm", "bohb")])
    no_rs = load_costs(COSTS_FILE).drop("rs", level="family")
    with pytest.raises(
        UsageError, match=r"no cost for \(family, protocol, bin\) \[\('rs', "
    ) as err:
        run_seconds(table, no_rs)
    assert "\n" not in str(err.value)
    networks = runs_table([_one(paper, "mrbi", "tpe")])
    with pytest.raises(UsageError, match=r"no cost for the spaces \['ffnn_mrbi'\]") as err:
        run_seconds(networks, load_costs(COSTS_FILE), pd.Series({"ffnn_mnist": 0.4}))
    assert "\n" not in str(err.value)
