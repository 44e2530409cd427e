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
from matplotlib.figure import Figure
from scipy.stats import wilcoxon as scipy_wilcoxon

from analysis.hierarchical import claims, data, seed
from analysis.report import write_report
from experiments.configuration.compose import compose_run
from experiments.configuration.spaces import load_prior_space
from experiments.run.results import config_hash
from experiments.run.single import run_and_save
from hpo.space.prior_files import with_priors
from runfiles import layout


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
            spec.task.dataset, spec.method.name, spec.task.protocol_name, 0, 0, config_hash(spec)
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
            spec.task.dataset, spec.method.name, spec.task.protocol_name, 0, 0, config_hash(spec)
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


# ------------------------------------------------------- hand-computed selections and marks


def selection_case() -> pd.DataFrame:
    """One dataset, four learners, the candidates in an order that puts a learner's worst first:
    knn has a rank-4 candidate (p 0.01, not tied), an unranked one with the highest mean of all
    (0.92) and its rank-2 candidate (p 0.4, tied); svm a rank-3 (p 0.03) then its rank-1 (tied,
    p 1); decision_tree three unranked candidates (means 0.45, 0.65, 0.55) and no defaults row;
    lda its defaults only."""
    return pd.DataFrame(
        [
            _row("d1", "knn", "default", [0.2, 0.3, 0.4]),
            _row("d1", "svm", "default", [0.5, 0.55, 0.6]),
            _row("d1", "lda", "default", [0.70, 0.72, 0.74]),
            _row("d1", "knn", "optimized", [0.1, 0.2, 0.3], rank=4, tied=False, p=0.01),
            _row("d1", "knn", "optimized", [0.9, 0.9, 0.96]),
            _row("d1", "knn", "optimized", [0.6, 0.7, 0.8], rank=2, tied=True, p=0.4),
            _row("d1", "svm", "optimized", [0.3, 0.4, 0.5], rank=3, tied=False, p=0.03),
            _row("d1", "svm", "optimized", [0.8, 0.85, 0.9], rank=1, tied=True, p=1.0),
            _row("d1", "decision_tree", "optimized", [0.4, 0.45, 0.5]),
            _row("d1", "decision_tree", "optimized", [0.6, 0.65, 0.7]),
            _row("d1", "decision_tree", "optimized", [0.5, 0.55, 0.6]),
        ]
    )


# Worked out by hand from selection_case (Figs 5.1/5.2, §5: a learner's optimised box is its model
# that reached the root, the lowest rank, else its best candidate by mean): per learner in the
# figure's order (our learner names sorted), (q1, median, q3) of the defaults and of the chosen
# candidate (three scores: the quartiles halfway between them), its p-value and tied mark.
HAND_BOXES = {
    "DecisionTree": (None, (0.625, 0.65, 0.675), None, False),
    "KNN": ((0.25, 0.3, 0.35), (0.65, 0.7, 0.75), 0.4, True),
    "LinearDiscriminant": ((0.71, 0.72, 0.73), None, None, False),
    "SVM": ((0.525, 0.55, 0.575), (0.825, 0.85, 0.875), 1.0, True),
}


def _drawn(figure: Figure) -> tuple[list[str], dict, dict]:
    """What a Fig 5.1/5.2 shows, read back from its artists: the learners top to bottom, per
    (learner, "default" | "optimized") the box's (q1, median, q3) and face colour, and per
    learner the p-value text at the right margin and its colour."""
    from matplotlib.patches import PathPatch

    ax = figure.axes[0]
    ticks = zip(ax.get_yticks(), ax.get_yticklabels(), strict=True)
    rows = {round(y): label.get_text() for y, label in ticks}
    learners = [rows[y] for y in sorted(rows, reverse=True)]
    boxes = {}
    for patch in ax.patches:
        if not isinstance(patch, PathPatch):
            continue
        (q1, low), (q3, high) = patch.get_path().vertices.min(0), patch.get_path().vertices.max(0)
        centre = (low + high) / 2
        kind = "optimized" if high - low > 0.2 else "default"  # widths 0.32 and 0.12
        learner = rows[round(centre + (0.12 if kind == "optimized" else -0.18))]
        medians = [line.get_xdata()[0] for line in ax.lines
                   if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
                   and tuple(line.get_ydata()) == (low, high)]  # fmt: skip
        assert len(medians) == 1, (learner, kind)
        boxes[(learner, kind)] = ((q1, medians[0], q3), patch.get_facecolor())
    texts = {rows[round(t.get_position()[1])]: (t.get_text(), t.get_color()) for t in ax.texts}
    return learners, boxes, texts


def test_each_learner_s_figure_box_is_its_best_candidate_worked_out_by_hand(
    tmp_path: Path,
) -> None:
    """Figs 5.1/5.2 of selection_case: the learners in order, each box's quartiles, the tied
    learners' boxes and p-values in blue, the others grey and unmarked, and the same numbers in
    the figure's data table, against :data:`HAND_BOXES`. A learner showing its worst ranked
    candidate (KNN's rank 4: p 0.01, not tied, median 0.2) or its best mean among unranked and
    ranked alike (KNN's 0.92) fails here."""
    from matplotlib.colors import to_rgba

    from analysis.hierarchical import report
    from analysis.plugins import ReportContext

    rows = selection_case()
    figure = report.boxes_figure(report._learner_boxes(rows, "d1", "HRS"), "d1")
    learners, boxes, texts = _drawn(figure)
    assert learners == list(HAND_BOXES)
    for learner, (default, optimized, p_value, tied) in HAND_BOXES.items():
        for kind, quartiles in (("default", default), ("optimized", optimized)):
            if quartiles is None:
                assert (learner, kind) not in boxes, (learner, kind)
                continue
            drawn, face = boxes[(learner, kind)]
            assert drawn == pytest.approx(quartiles), (learner, kind)
            colour = report.DEFAULT_COLOUR if kind == "default" else (
                report.TIED_COLOUR if tied else report.OTHER_COLOUR)  # fmt: skip
            assert face == to_rgba(colour), (learner, kind)
        if p_value is None:
            assert learner not in texts
        else:
            shown = (f"p={p_value:.3g}", report.TIED_COLOUR if tied else "k")
            assert texts[learner] == shown, learner
    context = ReportContext(tmp_path, pd.DataFrame(), tmp_path, lambda *a, **k: "")
    report.figures_section(rows, context)
    summary = pd.read_csv(tmp_path / "tables" / "hierarchical_boxes_d1_HRS_summary.csv")
    summary = summary.set_index("learner")
    assert list(summary.index) == list(HAND_BOXES)
    for learner, (default, optimized, p_value, tied) in HAND_BOXES.items():
        row = summary.loc[learner]
        assert bool(row["tied"]) == tied, learner
        for column, box in (("default_mean", default), ("optimized_mean", optimized)):
            # three scores symmetric about their median: the mean is the median
            expected = np.nan if box is None else box[1]
            assert row[column] == pytest.approx(expected, nan_ok=True), (learner, column)
        assert row["p_value"] == pytest.approx(np.nan if p_value is None else p_value, nan_ok=True)


def test_table_5_1_of_the_selection_case_worked_out_by_hand() -> None:
    """Table 5.1 (§5) of selection_case, by hand: default worst = KNN's defaults (mean 0.3),
    best = LinearDiscriminant's (0.72); optimized = the rank-1 model, SVM's (0.85, not KNN's
    unranked 0.92 nor a worse-ranked one); boost = (0.85 − 0.72) / 0.72 × 100 = 18.06 %; 2
    models tied with the best; 3 learners with defaults. The section's table shows the same
    (4 decimals, boost 2)."""
    from analysis.hierarchical import report
    from analysis.plugins import ReportContext

    table = data.table_5_1(selection_case())
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["dataset"], row["method"], row["family"]) == ("d1", "HRS", "SVM")
    assert row["default worst"] == pytest.approx(0.3)
    assert row["default best"] == pytest.approx(0.72)
    assert row["optimized"] == pytest.approx(0.85)
    assert row["boost %"] == pytest.approx(13 / 0.72)
    assert (row["tied with the best"], row["defaults learners"]) == (2, 3)
    written = {}

    def write(frame: pd.DataFrame, name: str, caption: str, data: object = None) -> str:
        written[name] = frame
        return ""

    report.table_section(
        selection_case(), ReportContext(Path("."), pd.DataFrame(), Path("."), write)
    )
    shown = written["hierarchical_table_5_1"].loc[("d1", "ours, HRS")]
    assert shown.to_dict() == {
        "default worst": "0.3000",
        "default best": "0.7200",
        "optimized": "0.8500",
        "boost %": "18.06",
        "family": "SVM",
    }


def test_h1_on_five_gains_is_underpowered_by_the_two_sided_floor() -> None:
    """H1 is a two-sided Wilcoxon test: five datasets whose optimised index beats the best
    default give scipy's exact p = 2/2^5 = 0.0625 at best, so the claim is *not evaluated:
    underpowered* (the two-sided floor 0.0625, not the one-sided 1/32, which would let the
    engine decide it, and decide it *not reproduced*); six are decided."""
    from analysis.claims import NOT_EVALUATED, REPRODUCED, run_claim

    h1 = next(c for c in claims.CLAIMS if c.id == "H1")
    five = run_claim(h1, _on_datasets(synthetic_rows(), 5))
    assert five.p_value == pytest.approx(0.0625)
    assert five.status == NOT_EVALUATED
    assert five.reason.startswith(
        "underpowered (smallest attainable p = 0.0625 >= alpha = 0.05: two-sided Wilcoxon"
    )
    assert run_claim(h1, _on_datasets(synthetic_rows(), 6)).status == REPRODUCED


# ------------------------------------------------ the report's other sections, by hand


def _capturing_context(tmp_path: Path, **options: object) -> tuple[object, dict]:
    """A report context whose writer keeps each table by name (and returns ``<name>``)."""
    from analysis.plugins import ReportContext

    written: dict[str, pd.DataFrame] = {}

    def write(frame: pd.DataFrame, name: str, *_: object, **__: object) -> str:
        written[name] = frame
        return f"<{name}>"

    return ReportContext(tmp_path, pd.DataFrame(), tmp_path, write, dict(options)), written


def test_the_dataset_section_says_for_each_seed_dataset_whether_it_ran(tmp_path: Path) -> None:
    from analysis.hierarchical import report

    # balance-scale ran; pima (the seed's diabetes) has a note from the sweep; colonTumor has
    # no copy here; tae (teaching) neither ran nor has a note
    rows = pd.DataFrame({"dataset": ["balance-scale", "balance-scale"]})
    context, written = _capturing_context(tmp_path, dataset_notes={"pima": "too slow: left out"})
    report.dataset_section(rows, context)
    status = written["hierarchical_datasets"]["status"]
    assert status["balance-scale"] == "run"
    assert status["diabetes"] == "too slow: left out"
    assert status["colonTumor"] == "not run (no copy here)"
    assert status["tae"] == "not in this profile"
    assert (status == "run").sum() == 1


def _costed_rows() -> pd.DataFrame:
    """Two runs: (run, stage, CV fits) seconds 100, 40, 30 and 300, 100, 50."""
    return pd.DataFrame(
        {"dataset": ["balance-scale", "pima"], "method": ["hrs", "hypercube"],
         "run_seconds": [100.0, 300.0], "selection_stage_seconds": [40.0, 100.0],
         "selection_fit_seconds": [30.0, 50.0]}
    )  # fmt: skip


def test_the_cost_section_gives_the_cv_fits_share_of_all_run_seconds(tmp_path: Path) -> None:
    from analysis.hierarchical import report

    context, written = _capturing_context(tmp_path)
    text = report.cost_section(_costed_rows(), context)
    assert "took 20 % of the runs' seconds" in text  # (30 + 50) / (100 + 300)
    shown = written["hierarchical_cost"]
    assert shown.loc[("balance-scale", "HRS")].tolist() == ["100.0", "40.0", "30.0", "30.0"]
    pima = (data.dataset_label("pima"), "HC")
    assert shown.loc[pima].tolist() == ["300.0", "100.0", "50.0", "16.7"]  # 50 / 300


def test_the_figure_s_baseline_is_a_black_dotted_line_at_zero() -> None:
    from analysis.hierarchical import report

    figure = report.boxes_figure(report._learner_boxes(selection_case(), "d1", "HRS"), "d1")
    (baseline,) = [line for line in figure.axes[0].lines if line.get_linestyle() == ":"]
    assert list(baseline.get_xdata()) == [0.0, 0.0]
    assert baseline.get_color() == "k"


def _observations() -> pd.DataFrame:
    """The priors part: the SVM's gamma evaluated 4 times on each of two datasets, one
    signature, the scores (the acceptance probabilities) high."""
    values = [0.05, 0.1, 0.2, 0.15, 0.08, 0.12, 0.3, 0.06]
    return pd.DataFrame(
        {"dataset": ["d1"] * 4 + ["d2"] * 4, "value": values, "score": [0.99] * 8,
         "signature": [("rbf", "True")] * 8}
    )  # fmt: skip


PRIOR_SPACE = {
    "name": "seed003",
    "parameters": {"svm__gamma": {"low": 0.0, "high": 1.0, "prior": {"dist": "uniform"}}},
}


def test_the_report_sections_learn_the_priors_and_name_each_figure_s_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.hierarchical import priors, report

    rows = selection_case().assign(
        method="hrs", run_seconds=10.0, selection_stage_seconds=4.0, selection_fit_seconds=2.0
    )
    monkeypatch.setattr(data, "selection_rows", lambda source: rows)
    monkeypatch.setattr(priors, "run_space", lambda source: PRIOR_SPACE)
    monkeypatch.setattr(priors, "observations", lambda source: _observations())
    context, written = _capturing_context(tmp_path)
    out = report.sections(context)
    assert len(out) == 8
    figures_text, prior_text, claims_text = out[5], out[6], out[7]
    assert "Figs 5.1/5.2 layout, d1, HRS:" in figures_text  # the method's report name
    assert "Learned from 8 evaluations of the SVM's subtree on d1, d2 " in prior_text
    assert (tmp_path / "tables" / "learned_priors.yaml").is_file()
    learned = yaml.safe_load((tmp_path / "tables" / "learned_priors.yaml").read_text())
    assert learned["priors"]["svm__gamma"][-1] == {"dist": "uniform"}  # the runs' own prior
    assert "<hierarchical_claims>" in claims_text
    ids = list(written["hierarchical_claims"].index)
    assert ids[: len(claims.CLAIMS)] == [c.id for c in claims.CLAIMS]
    assert len(ids) == len(claims.CLAIMS) + len(priors.CLAIMS)


def test_without_the_priors_part_nothing_is_learned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.hierarchical import priors, report

    monkeypatch.setattr(priors, "run_space", lambda source: None)
    context, _ = _capturing_context(tmp_path)
    text, records = report.prior_section(context)
    assert "No run of the `priors` part in these results" in text
    assert set(records["status"]) == {"not evaluated"}


# ---------------------------------------------------- the claims' values, worked by hand


def _gains_rows(gains: list[float], learners: list[str] | None = None) -> pd.DataFrame:
    """One dataset per gain: the defaults (lda) at 0.5, the rank-1 model at 0.5 + gain."""
    learners = learners or ["knn"] * len(gains)
    records = []
    for i, (gain, learner) in enumerate(zip(gains, learners, strict=True)):
        records.append(_row(f"set{i}", "lda", "default", [0.5] * 3))
        records.append(_row(f"set{i}", learner, "optimized", [0.5 + gain] * 3, rank=1, tied=True))
    return pd.DataFrame(records)


def test_h1_with_a_median_gain_of_zero_is_not_reproduced_whatever_p() -> None:
    # 7 datasets without a gain and 6 with: the median gain is 0 (the 7th of 13), yet the six
    # positive gains alone give scipy's Wilcoxon p < 0.05
    gains = [0.0] * 7 + [0.01 * (i + 1) for i in range(6)]
    outcome = claims.higher_than_defaults(_gains_rows(gains))
    table = data.table_5_1(_gains_rows(gains))
    p = float(scipy_wilcoxon(table["optimized"] - table["default best"]).pvalue)
    assert p < 0.05
    assert outcome.our_value == (
        f"6 of 13 datasets higher; median gain 0.0000; Wilcoxon p = {p:.3f}"
    )
    assert outcome.conditions[0][1] is False


def test_h3_reports_the_families_and_the_range_of_the_boost() -> None:
    # boosts (0.55 − 0.5) / 0.5 = 10 % (KNN) and (0.625 − 0.5) / 0.5 = 25 % (SVM)
    outcome = claims.best_family_depends_on_the_dataset(
        _gains_rows([0.05, 0.125], learners=["knn", "svm"])
    )
    assert outcome.our_value == "2 families over 2 datasets; boost from 10.0 % to 25.0 %"
    assert [holds for _, holds in outcome.conditions] == [True, True]


def test_the_sign_test_s_p_value_is_the_claim_s() -> None:
    # 6 of 6 datasets below: one-sided p = 1/2^6
    stds = pd.DataFrame({"a": [1.0] * 6, "b": [2.0] * 6})
    outcome = claims.lower_std_on_most(stds, "a", "b", "a below b", "")
    assert outcome.p_value == pytest.approx(1 / 64)
    assert outcome.our_value == "a below b on 6 of 6 datasets with both (sign test p = 0.016)"
