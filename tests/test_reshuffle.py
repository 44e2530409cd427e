"""Reshuffling (`-r`, thesis §3.2.1) as audited in docs/reshuffling.md: what gp-r reshuffles,
what its GP sees (``loss_scale``), the pairing of gp and gp-r, and the C3.1 benchmark's
statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.reshuffle_c31 import (
    against_baseline,
    compare,
    errors_at,
    main,
    outcomes_of,
    report,
    thesis_agreement,
)
from experiments.configuration.compose import compose_run
from hpo.evaluation.protocol import ProtocolSettings, RepetitionSplits
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Real, Space

FAST = {"grid_size": 500, "burnin": 10, "n_samples": 3}


def _space() -> Space:
    return Space("unit", (Real("x0", 0.0, 1.0), Real("x1", 0.0, 1.0)))


def _proposals(budget: int, **settings: float) -> np.ndarray:
    opt = GPEIOptimizer(_space(), budget, np.random.default_rng(3), **FAST, **settings)
    out = []
    for _ in range(budget):
        proposal = opt.ask()
        u = proposal.u
        opt.tell(proposal, 0.1 + 0.2 * float((u[0] - 0.3) ** 2 + (u[1] - 0.6) ** 2))
        out.append(u)
    return np.array(out)


def test_loss_scale_one_is_the_default_and_scaling_changes_the_gp() -> None:
    default = _proposals(6)
    np.testing.assert_array_equal(default, _proposals(6, loss_scale=1.0))
    scaled = _proposals(6, loss_scale=50.0)
    np.testing.assert_array_equal(default[:2], scaled[:2])  # the Sobol design is not the GP's
    assert not np.allclose(default[2:], scaled[2:])  # the priors are scale-dependent


def test_loss_scale_must_be_positive() -> None:
    with pytest.raises(ValueError, match="loss_scale"):
        GPEIOptimizer(_space(), 5, np.random.default_rng(0), loss_scale=0.0)


def test_gp_and_gp_r_are_paired_and_differ_only_in_reshuffling() -> None:
    gp = compose_run(["optimizer=gp", "dataset=sklearn-iris", "seed=7"])
    gp_r = compose_run(["optimizer=gp_r", "dataset=sklearn-iris", "seed=7"])
    assert (
        gp.method.optimizer == gp_r.method.optimizer == "gp"
    )  # one optimizer stream: same first proposals
    assert gp.method.settings == gp_r.method.settings
    assert gp.task.protocol.valid_frac == gp_r.task.protocol.valid_frac
    assert (gp.task.protocol.reshuffle, gp_r.task.protocol.reshuffle) == (False, True)
    labels = np.repeat([0, 1, 2], 50)
    fixed, shuffled = (
        RepetitionSplits(labels, 150, False, spec.task.protocol, 7, "iris", 0)
        for spec in (gp, gp_r)
    )
    np.testing.assert_array_equal(fixed.test, shuffled.test)  # D_G shared
    np.testing.assert_array_equal(fixed.train_valid, shuffled.train_valid)
    # a fresh split of D_TV at every GP evaluation (batch = iteration), the fixed one never
    valid = [tuple(shuffled.folds(t)[0].valid) for t in range(1, 6)]
    assert len(set(valid)) == 5
    assert all(len(v) == len(fixed.folds(1)[0].valid) for v in valid)
    assert all(np.array_equal(fixed.folds(t)[0].valid, fixed.folds(1)[0].valid) for t in (2, 9))


def test_reshuffled_split_keeps_the_proportion_and_never_touches_test() -> None:
    settings = ProtocolSettings(reshuffle=True)
    splits = RepetitionSplits(np.arange(300) % 3, 300, False, settings, 0, "d", 0)
    test = set(splits.test)
    for t in range(1, 20):
        fold = splits.folds(t)[0]
        assert not test & (set(fold.train) | set(fold.valid))
        assert len(fold.valid) == round(len(splits.train_valid) / 3)


def _outcomes(part: str = "fractions", gp_r_shift: float = 0.0) -> pd.DataFrame:
    rows = []
    diffs = {"a": 0.02, "b": -0.01, "c": 0.0, "d": 0.03}  # gp minus gp-r test error, fraction
    for rep in (0, 1):
        for dataset, diff in diffs.items():
            for method, error in (("gp", 0.2 + diff), ("gp-r", 0.2 + gp_r_shift)):
                for iteration in (1, 2):
                    rows.append(
                        {
                            "run_id": f"{part}{dataset}{rep}{method}",
                            "part": part,
                            "dataset": dataset,
                            "repetition": rep,
                            "method": method,
                            "iteration": iteration,
                            "test_error": error if iteration == 2 else 0.5,
                            "incumbent_valid_loss": 0.1,
                            "test_fit_limit_hit": False,
                        }
                    )
    return pd.DataFrame(rows)


def test_compare_counts_datasets_and_measures_in_points() -> None:
    result = compare(errors_at(_outcomes(), None))
    assert (result["datasets"], result["repetitions"]) == (4, 2)
    assert (result["second_better"], result["second_worse"], result["ties"]) == (2, 1, 1)
    assert result["count"] == 1
    assert result["mean_pp"] == pytest.approx(1.0)
    assert result["optimism_gp_pp"] == pytest.approx(11.0)
    early = compare(errors_at(_outcomes(), 1))  # the incumbent after one evaluation
    assert early["ties"] == 4


def test_a_variant_is_compared_with_the_baseline_paired_by_dataset() -> None:
    base = errors_at(_outcomes(), None)
    variant = errors_at(_outcomes("pm_incumbent", gp_r_shift=-0.01), None)
    change = against_baseline(variant, base)
    assert change["paired_datasets"] == 4
    assert change["change_gp-r_pp"] == pytest.approx(-1.0)  # gp-r 1 point better
    assert change["change_gp_pp"] == pytest.approx(0.0)
    assert change["change_diff_pp"] == pytest.approx(1.0)  # gp - gp-r up by 1 point


def test_report_covers_every_part_present_or_those_named(tmp_path) -> None:
    both = pd.concat([_outcomes(), _outcomes("pm_incumbent", gp_r_shift=-0.01)])
    both.to_parquet(tmp_path / "outcomes.parquet")
    records = report(outcomes_of(tmp_path), [None])
    assert [r["part"] for r in records] == ["fractions", "pm_incumbent"]
    assert "paired_datasets" not in records[0] and records[1]["change_diff_pp"] == pytest.approx(1)
    named = report(outcomes_of(tmp_path), [None], ["pm_incumbent"])
    assert [r["part"] for r in named] == ["pm_incumbent"]
    with pytest.raises(ValueError, match="no runs of part 'valid_half'; present: fractions, pm_"):
        report(outcomes_of(tmp_path), [None], ["valid_half"])


def _thesis(gp_offset: float = 0.0) -> pd.DataFrame:
    """A thesis file for the four datasets of :func:`_outcomes`: gp-r 20 %, gp per dataset."""
    gp = {"a": 21.0, "b": 19.5, "c": 20.0, "d": 22.0}
    rows = [{"dataset": d, "method": "gp", "test_error_pct": e + gp_offset} for d, e in gp.items()]
    rows += [{"dataset": d, "method": "gp-r", "test_error_pct": 20.0} for d in gp]
    return pd.DataFrame(rows)


def test_each_method_is_compared_with_the_thesis_per_dataset() -> None:
    final = errors_at(_outcomes(), None)  # ours: gp 22, 19, 20, 23 %; gp-r 20 %
    agreement = thesis_agreement(final, _thesis(gp_offset=-1.0))
    assert agreement["thesis_gp_datasets"] == 4
    assert agreement["thesis_gp_offset_pp"] == pytest.approx(1.375)  # ours - thesis: 2, 0.5, 1, 2
    assert agreement["thesis_gp-r_offset_pp"] == pytest.approx(0.0)
    assert agreement["thesis_gp_spearman"] == pytest.approx(1.0)
    # the thesis's split on the same datasets: gp 20, 18.5, 19, 21 against gp-r 20
    assert (agreement["thesis_better"], agreement["thesis_worse"]) == (1, 2)
    with pytest.raises(ValueError, match="no rows of method 'gp-r'"):
        thesis_agreement(final, _thesis().query("method == 'gp'"))


def test_the_command_line_keeps_repetitions_and_writes_per_dataset_means(
    tmp_path, monkeypatch, capsys
) -> None:
    folder = tmp_path / "reshuffle" / "local"
    folder.mkdir(parents=True)
    _outcomes().to_parquet(folder / "outcomes.parquet")
    thesis, means = tmp_path / "thesis.csv", tmp_path / "means.csv"
    _thesis().to_csv(thesis, index=False)
    argv = ["--results-root", str(tmp_path), "--repetitions", "1", "--per-dataset", str(means)]
    assert main([*argv, "--thesis", str(thesis)]) == 0
    printed = capsys.readouterr().out
    assert "4 datasets x 1 rep" in printed and "against the thesis's per-dataset means" in printed
    written = pd.read_csv(means)
    assert list(written.columns) == ["part", "dataset", "gp", "gp-r"]
    assert written["gp"].tolist() == pytest.approx([22.0, 19.0, 20.0, 23.0])
    assert main([*argv[:2], "--repetitions", "5"]) == 2
    assert "no runs of repetition 5; present: [0, 1]" in capsys.readouterr().err
    pd.DataFrame({"dataset": ["a"]}).to_csv(thesis, index=False)
    assert main([*argv[:2], "--thesis", str(thesis)]) == 2
    assert "no column 'method'" in capsys.readouterr().err
