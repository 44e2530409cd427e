"""The report plug-in of Bermúdez-Chacón 2014's study (``docs/hierarchical.md``): Table 5.1 from
the selection rows (the boost as §5 defines it), the paper's numbers labelled as the paper's,
the figures, Fig 5.3 said to be unavailable, and the claims on the engine; end to end on two
tiny runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from analysis import layout
from analysis.hierarchical import claims, data, seed
from analysis.report import write_report
from experiments.compose import compose_run
from experiments.results import config_hash
from experiments.single import run_and_save
from experiments.spaces import load_prior_space
from hpo.space.priors import with_priors


def _row(dataset: str, learner: str, kind: str, scores: list[float], **extra) -> dict:
    return {
        "dataset": dataset,
        "method": "HRS",
        "learner": learner,
        "ms_kind": kind,
        "ms_rank": extra.get("rank"),
        "ms_p_value": extra.get("p", np.nan),
        "ms_tied": extra.get("tied"),
        "ms_holdout_mean": float(np.mean(scores)),
        "ms_holdout_std": float(np.std(scores, ddof=1)),
        "scores": np.asarray(scores),
    }


def synthetic_rows() -> pd.DataFrame:
    return pd.DataFrame(
        [
            _row("balance-scale", "lda", "default", [0.74, 0.75, 0.7456]),
            _row("balance-scale", "knn", "default", [0.09, 0.10, 0.0983]),
            _row("balance-scale", "linear_svm", "optimized", [0.8385] * 3, rank=1, tied=True, p=1),
            _row("balance-scale", "knn", "optimized", [0.5, 0.6, 0.7], rank=2, tied=False, p=0.01),
        ]
    )


def test_table_5_1_is_worst_and_best_default_and_the_first_ranked_model() -> None:
    table = data.table_5_1(synthetic_rows())
    assert len(table) == 1
    row = table.iloc[0]
    assert row["dataset"] == "balance-scale" and row["family"] == "LinearSVM"
    assert row["default worst"] == pytest.approx(np.mean([0.09, 0.10, 0.0983]))
    assert row["default best"] == pytest.approx(0.7452)
    # §5's boost, checked on the seed's own balance-scale row: (0.8385 - 0.7452) / 0.7452
    assert row["boost %"] == pytest.approx(12.52, abs=0.01)
    printed = seed.table_5_1().loc["balance-scale"]
    assert (printed["default_best"], printed["optimized"]) == (0.7452, 0.8385)
    assert len(seed.table_5_1()) == 36


def test_claims_are_not_evaluated_on_one_dataset() -> None:
    from analysis.claims import NOT_EVALUATED, run_claim

    for claim in claims.CLAIMS:
        assert run_claim(claim, synthetic_rows()).status == NOT_EVALUATED, claim.id


@pytest.mark.slow
def test_the_report_of_two_tiny_runs(tmp_path: Path) -> None:
    fast = ["budget=3", "optimizer.model_selection.repeats=1", "optimizer.model_selection.folds=3"]
    fast += ["protocol.n_folds=3", "experiment=hierarchical"]
    runs = tmp_path / layout.RUNS / "main"
    for method, dataset in (("hrs", "sklearn-iris"), ("hypercube", "sklearn-iris")):
        spec = compose_run([f"optimizer={method}", f"dataset={dataset}", *fast])
        if method == "hypercube":  # the defaults baseline comes from hrs only, as in the sweep
            spec = compose_run([f"optimizer={method}", f"dataset={dataset}", *fast,
                                "optimizer.model_selection.defaults=false"])  # fmt: skip
        name = layout.run_filename(
            spec.dataset, spec.run_method, spec.protocol_name, 0, 0, config_hash(spec)
        )
        run_and_save(spec, runs / name)
    for dataset in ("sklearn-iris", "sklearn-wine"):  # the priors part (Algorithm 4, Fig 5.3)
        spec = compose_run(
            ["optimizer=hrs", f"dataset={dataset}", "budget=12", "protocol.n_folds=3",
             "experiment=hierarchical", "optimizer.model_selection=null",
             "++space.parameters.classifier.prior={dist:categorical,weights:{svm:1.0}}",
             "++space.parameters.svm__gamma.prior=[{dist:uniform}]"]
        )  # fmt: skip
        name = layout.run_filename(
            spec.dataset, spec.run_method, spec.protocol_name, 0, 0, config_hash(spec)
        )
        run_and_save(spec, tmp_path / layout.RUNS / "priors" / name)
    report = write_report(tmp_path, tmp_path / "report", chapter="hierarchical")
    text = report.read_text()
    assert "seed (Table 5.1)" in text and "ours, HRS" in text and "ours, HC" in text
    assert "Fig 5.3" in text and "## The seed's claims" in text and "| H6 " in text
    assert (tmp_path / "report" / "figures" / "fig5_3_learned_gamma_priors.png").is_file()
    learned = yaml.safe_load((tmp_path / "report" / "tables" / "learned_priors.yaml").read_text())
    entries = learned["priors"]["svm__gamma"]
    assert learned["space"] == "seed003" and entries[0]["when"]["svm__kernel"][0] in (
        "poly", "rbf", "sigmoid",
    )  # fmt: skip
    assert entries[-1] == {"dist": "uniform"}  # the runs' own sampling prior, as the fallback
    with_priors(load_prior_space("seed003"), learned)  # a prior file pds can load
    table = pd.read_csv(tmp_path / "report" / "tables" / "hierarchical_table_5_1.csv")
    assert set(table["method"]) == {"HRS", "HC"} and table["default best"].notna().all()
    figures = sorted((tmp_path / "report" / "figures").glob("hierarchical_boxes_*.png"))
    assert len(figures) == 2
    datasets = pd.read_csv(tmp_path / "report" / "tables" / "hierarchical_datasets.csv")
    assert len(datasets) == 36 and (datasets["status"].str.startswith("not run")).sum() >= 6
    assert json.loads(json.dumps(list(datasets.columns)))[0] == "seed's dataset"


def _on_datasets(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    return pd.concat([rows.assign(dataset=f"set{i}") for i in range(n)], ignore_index=True)


def test_variance_claims_read_the_right_direction() -> None:
    """H4/H5 on six copies of the synthetic dataset: the optimised candidates vary *more* than
    the defaults there (median std 0.05 against 0.005), the tied model varies less than the
    untied one (0 against 0.1); swapping which model is tied flips H5, so a claim that compared
    the columns the wrong way round, or always held, fails here."""
    from analysis.claims import NOT_REPRODUCED, REPRODUCED, Underpowered, run_claim

    by_id = {claim.id: claim for claim in claims.CLAIMS}
    rows = _on_datasets(synthetic_rows(), 6)
    assert run_claim(by_id["H4"], rows).status == NOT_REPRODUCED
    assert run_claim(by_id["H5"], rows).status == REPRODUCED
    swapped = rows.assign(ms_tied=rows["ms_tied"].map({True: False, False: True}))
    assert run_claim(by_id["H5"], swapped).status == NOT_REPRODUCED
    stds = pd.DataFrame({"a": [1.0] * 6, "b": [2.0] * 6})
    assert claims.lower_std_on_most(stds, "a", "b", "", "").conditions[0][1] is True
    assert claims.lower_std_on_most(stds, "b", "a", "", "").conditions[0][1] is False
    assert claims.lower_std_on_most(stds.iloc[:5], "a", "b", "", "").conditions[0][1] is True
    # 4 datasets: the one-sided sign test's floor is 1/2^4 = 0.0625, whatever the stds
    weak = claims.lower_std_on_most(stds.iloc[:4], "a", "b", "", "").conditions[0][1]
    assert isinstance(weak, Underpowered) and weak.smallest_p == 0.0625


def test_models_tied_with_the_best_are_marked_blue_whatever_boolean_the_files_hold() -> None:
    """A run file whose ``ms_tied`` column has no null reads back as numpy booleans (pyarrow ->
    pandas ``bool`` dtype), and ``np.True_ is True`` is false: the tied model must still be
    marked, in the summary and in blue in the figure; an untied one must not be."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import PathPatch

    from analysis.hierarchical import report

    rows = synthetic_rows()
    rows["ms_tied"] = rows["ms_tied"].fillna(False).astype(bool)  # as a file without nulls
    assert isinstance(rows["ms_tied"].iloc[2], np.bool_)
    boxes = report._learner_boxes(rows, "balance-scale", "HRS").set_index("learner")
    assert boxes.loc["LinearSVM", "tied"] and not boxes.loc["KNN", "tied"]
    figure = report.boxes_figure(boxes.reset_index(), "balance-scale, HRS")
    faces = [p.get_facecolor() for p in figure.axes[0].patches if isinstance(p, PathPatch)]
    assert faces.count(to_rgba(report.TIED_COLOUR)) == 1  # LinearSVM's optimised box only


def test_table_5_1_rows_are_named_and_datasets_have_one_name() -> None:
    """Table 5.1's rows read "dataset | source" under named headers (not Python tuples under an
    empty header), and a dataset is called by the seed's name, with the name it runs as only
    where they differ: ``tae (teaching)``, ``iris`` (never ``iris (iris)``)."""
    from analysis.hierarchical import report
    from analysis.render import markdown

    assert data.dataset_label("teaching") == "tae (teaching)"
    assert data.dataset_label("iris") == "iris"
    rows = synthetic_rows()
    both = pd.concat([rows, rows.assign(dataset="teaching")], ignore_index=True)
    text = markdown(report.table_beside_seed(data.table_5_1(both)))
    header = text.splitlines()[0]
    assert header.startswith("| dataset | source | default worst |"), header
    assert "('" not in text and "| tae (teaching) | ours, HRS |" in text
    assert "| balance-scale | seed (Table 5.1) |" in text


def test_the_sign_test_counts_the_observed_number_itself() -> None:
    """One-sided sign test: p = P(X >= below) for X ~ Bin(below + above, 1/2). 8 of 10 below:
    p = (45 + 10 + 1) / 1024 = 0.0547, not below 0.05 (P(X > 8) would be 0.0107)."""
    stds = pd.DataFrame({"a": [1.0] * 8 + [3.0] * 2, "b": [2.0] * 10})
    outcome = claims.lower_std_on_most(stds, "a", "b", "", "")
    assert outcome.p_value == pytest.approx(56 / 1024)
    assert outcome.conditions[0][1] is False


def test_h1_needs_the_optimised_index_above_the_defaults_not_only_a_small_p() -> None:
    """H1 is one-directional: six datasets where the optimised index is *below* the best
    default give the smallest two-sided Wilcoxon p of six (1/32), and the claim is then false."""
    rows = _on_datasets(synthetic_rows(), 6)
    worse = (rows["ms_kind"] == "optimized") & (rows["learner"] == "linear_svm")
    rows.loc[worse, "ms_holdout_mean"] = 0.5
    outcome = claims.higher_than_defaults(rows)
    assert outcome.statistic < 0 and outcome.p_value == pytest.approx(1 / 32)
    assert outcome.conditions[0][1] is False


def test_a_dataset_whose_optimised_model_only_ties_the_defaults_has_no_gain() -> None:
    """§5: where optimisation does not beat the defaults (boost 0: the best default itself, a
    learner without hyperparameters, wins), the claim reads it as a dataset without a gain."""
    rows = synthetic_rows()
    winner = (rows["ms_kind"] == "optimized") & (rows["learner"] == "linear_svm")
    rows.loc[winner, ["learner", "ms_holdout_mean"]] = ["lda", np.mean([0.74, 0.75, 0.7456])]
    assert data.table_5_1(rows).iloc[0]["boost %"] == 0
    outcome = claims.no_gain_means_no_hyperparameters(rows)
    # our value names each dataset without a gain and the family that won there
    assert outcome.our_value == "1 of 1 datasets without a gain (balance-scale: LinearDiscriminant)"
    assert outcome.conditions[0][1] is True
