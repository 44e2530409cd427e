"""The pipeline's shared machinery: stored predictions, several-member choices, layering."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.spaces import space_config
from experiments.configuration.spec import RunSpec
from experiments.run.runner import run
from experiments.run.single import run_and_save
from hpo.data.catalog import load_dataset
from hpo.ensembles import majority_vote
from hpo.evaluation.choices import ChoiceScorer
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard
from hpo.records import Choice, Member
from runfiles.files import read_predictions
from runfiles.schema import PREDICTION_KINDS

REPO = Path(__file__).resolve().parents[1]


def _losses_from_predictions(predictions: pd.DataFrame, y: np.ndarray, split: str) -> pd.Series:
    """Per model: the mean over folds of the zero-one loss of the stored predictions."""
    rows = predictions[predictions["split"] == PREDICTION_KINDS[split]]
    losses = {}
    for model, of_model in rows.groupby("model"):
        per_fold = [
            float(np.mean(fold["prediction"].to_numpy() != y[fold["row"].to_numpy()]))
            for _, fold in of_model.groupby("fold")
        ]
        losses[model] = float(np.mean(per_fold))
    return pd.Series(losses)


@pytest.mark.parametrize(
    ("validation", "selection_split", "reshuffle", "space"),
    [
        ("holdout", False, True, "svm_rbf"),
        ("cv", True, False, "svm_rbf"),
        ("cv", True, True, "svm_rbf"),
        ("cv", True, False, "sklearn_cash"),
        ("holdout", False, False, "svm_kernels"),
    ],
)
def test_sidecar_predictions_reproduce_every_trace_loss_exactly(
    tmp_path: Path, validation: str, selection_split: bool, reshuffle: bool, space: str
) -> None:
    spec = RunSpec.of(
        dataset="sklearn-wine",
        optimizer="rs",
        rules={"rs": "best_validation"},
        protocol=ProtocolSettings(
            validation=validation, selection_split=selection_split, reshuffle=reshuffle
        ),
        space=space_config(space),
        budget=12 if space == "sklearn_cash" else 6,
        predictions=True,
    )
    path = run_and_save(spec, tmp_path / "run.parquet")
    table = pd.read_parquet(path)
    trace = table[table["row_type"] == "trace"].set_index("iteration")
    outcomes = table[table["row_type"] == "outcome"]
    predictions = read_predictions(path)
    assert predictions["row"].dtype == np.int32 and predictions["prediction"].dtype == np.int16
    data = load_dataset("sklearn-wine")
    y = data.y  # no predefined test file: rows index the dataset as loaded
    valid = _losses_from_predictions(predictions, y, "valid")
    assert valid.to_dict() == trace["valid_loss"].to_dict()  # exact, not approximate
    if selection_split:
        selection = _losses_from_predictions(predictions, y, "selection")
        assert selection.to_dict() == trace["selection_loss"].to_dict()
    test = _losses_from_predictions(predictions, y, "test")
    for row in outcomes.itertuples():
        assert test[row.incumbent_iteration] == row.test_error


def test_run_without_predictions_writes_no_sidecar(tmp_path: Path) -> None:
    spec = RunSpec.of(
        dataset="sklearn-iris", optimizer="rs", rules={"rs": "best_validation"}, budget=3
    )
    path = run_and_save(spec, tmp_path / "run.parquet")
    with pytest.raises(FileNotFoundError, match="kept no predictions"):
        read_predictions(path)
    assert run(spec).predictions is None


def test_three_member_choice_is_scored_by_an_independent_majority_vote() -> None:
    data = load_dataset("sklearn-wine")
    evaluator = Evaluator(data, ProtocolSettings(), lambda _: "svm_rbf", FitGuard(), 0, 0)
    configs = [{"C": 0.3, "gamma": 0.003}, {"C": 0.3, "gamma": 0.03}, {"C": 0.3, "gamma": 0.3}]
    choice = Choice(tuple(Member(c, i + 1) for i, c in enumerate(configs)))
    error, _, _ = ChoiceScorer(evaluator).score(choice, chosen_at=3)
    # independently: refit each member with scikit-learn on D_TVS, vote by hand
    from sklearn.svm import SVC

    tvs, test = evaluator.splits.train_valid_selection, evaluator.splits.test
    X, y = evaluator.X, evaluator.y
    votes = np.stack([SVC(**c).fit(X[tvs], y[tvs]).predict(X[test]) for c in configs])
    expected = []
    for column in votes.T:
        counts = np.bincount(column, minlength=3)
        expected.append(int(np.flatnonzero(counts == counts.max())[0]))  # ties: lowest label
    assert error == pytest.approx(np.mean(np.array(expected) != y[test]), abs=0)
    for member_votes in votes:  # the vote is no single member's prediction
        assert (member_votes != np.array(expected)).any()


def test_majority_vote_weights_ties_and_abstentions() -> None:
    votes = np.array([[0, 1, 2, -1], [1, 1, 0, -1], [1, 2, 0, -1]])
    np.testing.assert_array_equal(majority_vote(votes), [1, 1, 0, -1])
    np.testing.assert_array_equal(majority_vote(votes, weights=[3, 1, 1]), [0, 1, 2, -1])
    tied = np.array([[0, 2], [2, 0]])
    np.testing.assert_array_equal(majority_vote(tied), [0, 0])
    drawn = {
        tuple(majority_vote(tied, ties="random", rng=np.random.default_rng(s))) for s in range(20)
    }
    assert drawn == {(0, 0), (0, 2), (2, 0), (2, 2)}
    with pytest.raises(ValueError, match="valid choices: lowest, random"):
        majority_vote(tied, ties="coin")


LAYERS = {"hpo": {"experiments", "analysis"}, "analysis": {"experiments"}}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_imports_run_one_way_hpo_below_analysis_below_experiments(package: str) -> None:
    offenders = {
        str(path.relative_to(REPO)): sorted(_imported_packages(path) & LAYERS[package])
        for path in sorted((REPO / package).rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize("stratify", [True, False])
@pytest.mark.parametrize("validation", ["holdout", "cv"])
def test_a_class_of_two_examples_runs_with_and_without_stratification(
    stratify: bool, validation: str
) -> None:
    from hpo.data.catalog import Dataset

    rng = np.random.default_rng(0)
    data = Dataset("tiny", rng.normal(size=(40, 3)), np.repeat([0, 1, 2], [30, 8, 2]))
    protocol = ProtocolSettings(validation=validation, stratify=stratify, reshuffle=True)
    spec = RunSpec.of(
        dataset="tiny", optimizer="rs", rules={"rs": "best_validation"}, protocol=protocol, budget=6
    )
    result = run(spec, data=data)
    assert result.trace["valid_loss"].between(0, 1).all()
    assert result.outcomes["test_error"].notna().all()
    assert (result.trace["constant_fits"] == 0).all()  # 30 rows of class 0: never one class


def test_a_one_class_training_fold_is_predicted_by_a_constant_classifier_and_recorded() -> None:
    from hpo.data.catalog import Dataset

    rng = np.random.default_rng(1)
    labels = np.array([0] * 9 + [1])  # a 5-fold split leaves most training folds one class
    data = Dataset("one-class", rng.normal(size=(10, 2)), labels)
    protocol = ProtocolSettings(validation="cv", test_frac=0.1)
    spec = RunSpec.of(
        dataset="one-class", optimizer="rs", rules={"rs": "best_validation"}, protocol=protocol,
        budget=2,
    )  # fmt: skip
    trace = run(spec, data=data).trace
    assert (trace["constant_fits"] > 0).all() and trace["failure"].isna().all()
