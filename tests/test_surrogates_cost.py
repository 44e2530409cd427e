"""``sweep cost surrogates``: network runs costed by epochs (the epoch-cost table of
``benchmarks/ffnn_epoch.py --json``), Hyperband's by its plan, the SVM part's Hyperband and BOHB by
the plan's full-training-set equivalents; a cell no table holds is still one error line. On a
GPU: the network runs' GPU-hours one network at a time (the committed H100 table, or a planted
one), and with Hyperband's rungs batched, each rung of M networks at the per-network epoch of M
(``benchmarks/ffnn_batched_costs_cuda.json``, log-log interpolated and clamped), against
hand-computed cases; the CPU's estimate is the same with ``batch_networks`` on."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from experiments.cluster.costs import COSTS_FILE, load_costs, run_seconds, runs_table, size_bin
from experiments.cluster.networks import (
    EPOCH_COSTS_FILE,
    GPU_BATCHED_COSTS_FILE,
    GPU_EPOCH_COSTS_FILE,
    batched_epoch_seconds,
    batched_seconds,
    expected_incumbents,
    load_batched_costs,
    plan_epochs,
    plan_full_fits,
    plan_rungs,
)
from experiments.cluster.report import print_cost
from experiments.configuration.config import UsageError
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
    return next(run for run in runs if run.part == part and run.spec.method.name == method)


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
    no_batched = tmp_path / "ffnn_batched_costs_cuda.json"  # the one-network table alone
    assert print_cost("surrogates", "paper", [hyperband], n_shards=1, gpu_costs_file=gpu_table,
                      batched_costs_file=no_batched) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    (gpu,) = [line for line in lines if "on a GPU" in line]
    epochs = 7756 + expected_incumbents(31) * 1000  # as the planted CPU run below
    assert f"are {epochs * 0.05 / 3600:,.2f} GPU-hours" in gpu and "a planted GPU, then" in gpu
    (batched,) = [line for line in lines if "rungs batched" in line]
    assert "unmeasured, no batched-cost table" in batched and "--batched" in batched


def test_the_committed_h100_tables_give_gpu_hours_not_unmeasured(
    paper: list, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (GPU_EPOCH_COSTS_FILE, GPU_BATCHED_COSTS_FILE):
        assert json.loads(path.read_text())["device_name"] == "cuda: NVIDIA H100 80GB HBM3"
    assert print_cost("surrogates", "paper", [_one(paper, "mrbi", "hyperband")], n_shards=1) == 0
    lines = capsys.readouterr().out.splitlines()
    (gpu,) = [line for line in lines if line.startswith("on a GPU: ")]
    assert "unmeasured" not in gpu and "NVIDIA H100 80GB HBM3" in gpu
    assert re.search(r"core-hours are [\d,.]+ GPU-hours, one network at a time", gpu)
    (batched,) = [line for line in lines if "rungs batched" in line]
    assert re.search(r"the network runs' [\d,.]+ GPU-hours", batched)


# the batched table of the sizing tests: per-network seconds a power law of M between neighbours
MEASURED = {1: 0.5, 16: 0.125, 256: 0.03125}


@pytest.mark.parametrize(
    ("networks", "seconds"),
    [
        (4, 0.25),  # between 1 and 16: 0.5 x (0.125 / 0.5) ** (ln 4 / ln 16) = 0.5 x 0.25 ** 0.5
        (64, 0.0625),  # between 16 and 256: 0.125 x 0.25 ** (ln 4 / ln 16)
        (16, 0.125),  # a measured M exactly
        (1024, 0.03125),  # above the largest: clamped, not extrapolated
        (1, 0.5),
    ],
)
def test_the_batched_epoch_is_interpolated_log_log_and_clamped(
    networks: int, seconds: float
) -> None:
    assert batched_epoch_seconds(networks, MEASURED) == pytest.approx(seconds, rel=1e-12)


def test_a_batched_rung_costs_m_networks_at_the_per_network_epoch_of_m() -> None:
    runs = pd.DataFrame(
        {
            "space": ["s", "s", "s"],
            # rungs (M networks, epochs each): 10 epochs of 4 networks, a lone network's 20,
            # then 30 epochs of retraining; 2 epochs of 16 and 1 of 300; no rungs (rs)
            "rungs": [((4, 10.0), (1, 20.0)), ((16, 2.0), (300, 1.0)), ()],
            "epochs": [4 * 10 + 20 + 30, 16 * 2 + 300 * 1, 50],
        }
    )
    one_network = pd.Series({"s": 0.8})  # the space's epoch, one network at a time
    reference = 0.4  # the measured 249-unit network's: the space's networks cost 2x as much
    by_hand = [
        4 * 10 * 0.25 * 2 + 20 * 0.8 + 30 * 0.8,  # 4 batched at M = 4; the lone one alone
        16 * 2 * 0.125 * 2 + 300 * 1 * 0.03125 * 2,  # M = 16 as measured; M = 300 clamped
        50 * 0.8,  # no rungs: one at a time
    ]
    assert batched_seconds(runs, one_network, MEASURED, reference) == pytest.approx(by_hand)


def _planted_gpu_tables(tmp_path: Path) -> tuple[Path, Path]:
    single = tmp_path / "ffnn_epoch_costs_cuda.json"
    network = {"units": [249], "input_dropout": 0.0, "dropout": 0.0}
    spaces = {
        "ffnn_mnist": {
            "seconds_per_epoch": 2.0,
            "networks": [{**network, "seconds_per_epoch": 2.0}],
        },
        "ffnn_mrbi": {"seconds_per_epoch": 3.0},
    }
    single.write_text(json.dumps({"device_name": "cuda: a planted GPU", "spaces": spaces}))
    batched = tmp_path / "ffnn_batched_costs_cuda.json"
    rungs = {"mean": {"batched": {"1": 2.4, "16": 0.2, "256": 0.02}},
             "prior": {"batched": {"16": 0.4, "81": 0.1}, "measured": "now"}}  # fmt: skip
    batched.write_text(json.dumps({"device_name": "cuda: a planted GPU",
                                   "reference_network": network, "rungs": rungs}))  # fmt: skip
    return single, batched


def test_a_rung_without_m_1_takes_the_mean_rungs_lone_network(tmp_path: Path) -> None:
    _, batched = _planted_gpu_tables(tmp_path)
    assert load_batched_costs(batched, "prior") == {1: 2.4, 16: 0.4, 81: 0.1}
    assert load_batched_costs(batched, "mean") == {1: 2.4, 16: 0.2, 256: 0.02}
    with pytest.raises(UsageError, match=r"cannot read the batched-cost table .*'one-group'"):
        load_batched_costs(batched, "one-group")


def test_the_gpu_line_sizes_hyperbands_rungs_batched_by_hand(
    paper: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    single, batched = _planted_gpu_tables(tmp_path)
    run = _one(paper, "mnist", "hyperband")
    # MNIST R = 50 x 20 epochs, eta = 4: 16 @ 63 -> 4 @ 250 -> 1 @ 1000; 6 @ 250 -> 1; 3 @ 1000
    rungs = ((16, 63), (4, 187), (1, 750), (6, 250), (1, 750), (3, 1000))
    assert plan_rungs(Fidelity("hyperband", 50, 4, 20, "epochs", "round", 1)) == rungs
    assert runs_table([run])["rungs"][0] == rungs

    def prior(m: int) -> float:  # the prior rung: 2.4 at M = 1 (the mean rung's), 0.4 at 16
        return 2.4 * (0.4 / 2.4) ** (math.log(m) / math.log(16))

    together = 16 * 63 * 0.4 + 4 * 187 * prior(4) + 6 * 250 * prior(6) + 3 * 1000 * prior(3)
    alone = (750 + 750 + expected_incumbents(31) * 1000) * 2.0  # lone networks, retraining
    assert print_cost("surrogates", "paper", [run], n_shards=1, gpu_costs_file=single,
                      batched_costs_file=batched) == 0  # fmt: skip
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "rungs batched" in line]
    one_at_a_time = (7756 + expected_incumbents(31) * 1000) * 2.0
    hours = (together + alone) / 3600
    assert f"the network runs' {hours:,.2f} GPU-hours" in line
    assert f"those 1 runs' {one_at_a_time / 3600:,.2f} become {hours:,.2f}" in line
    assert "M = 1 (the mean rung's), 16, 81 and clamped" in line
    assert "this profile's 1 such runs: off" in line


def test_the_cpu_estimate_is_the_same_with_batch_networks_on(
    paper: list, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _one(paper, "mrbi", "hyperband")
    on = dataclasses.replace(run, spec=run.spec.with_settings(batch_networks="on"))
    assert runs_table([on])["batch_networks"].tolist() == ["on"]
    assert _core_hours([on], capsys) == _core_hours([run], capsys)
    epoch_s = json.loads(EPOCH_COSTS_FILE.read_text())["spaces"]["ffnn_mrbi"]["seconds_per_epoch"]
    epochs = runs_table([on])["epochs"][0]
    assert _core_hours([on], capsys) == pytest.approx(epochs * epoch_s / 3600, abs=0.006)


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
    rs_cell = costs[("rs", run.spec.task.protocol_name, int(size_bin(table["tvs"][0])))]
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


def test_the_benchmarks_batched_json_is_what_the_cost_reads(tmp_path: Path) -> None:
    """``benchmarks/ffnn_epoch.py --batched --json``'s table, two commands into one file (a
    rung measured again replaces its cells; another device's table is replaced whole)."""
    pytest.importorskip("torch")  # the benchmark's module imports it
    from benchmarks.ffnn_epoch import write_batched_costs

    path = tmp_path / "batched.json"
    write_batched_costs(str(path), {"mean": {1: (0.5, 0.5), 16: (0.1, 0.4)}}, "first", 3, 1, "cpu")
    write_batched_costs(str(path), {"prior": {16: (0.2, 0.4)}}, "second", 1, 1, "cpu")
    assert load_batched_costs(path, "mean") == {1: 0.5, 16: 0.1}
    assert load_batched_costs(path, "prior") == {1: 0.5, 16: 0.2}
    table = json.loads(path.read_text())
    assert [table["rungs"][rung]["command"] for rung in ("mean", "prior")] == ["first", "second"]
    assert table["device_name"] == "cpu" and table["reference_network"]["units"] == [249]
    path.write_text(json.dumps({**table, "device_name": "cuda: another GPU"}))
    write_batched_costs(str(path), {"prior": {16: (0.3, 0.4)}}, "third", 1, 1, "cpu")
    assert list(json.loads(path.read_text())["rungs"]) == ["prior"]
