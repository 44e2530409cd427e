"""Chapter 5's experiment (thesis §5.5): the protocol's feature standardisation, the OpenML
datasets and their offline substitutes, the experiment's plan, and the one-line refusals.

The method definitions themselves (kernel, acquisition optimizer, imputation, priors, default
space and protocol of each of the eleven) are checked in ``tests/test_method_configs.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import hpo.evaluation.fitting
from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from experiments.run.results import config_hash
from experiments.sweep import dataset_notes, plan, record_dataset_notes
from hpo.data.catalog import Dataset, plan_datasets
from hpo.data.openml_sets import load_openml
from hpo.data.study_lists import OPENML_SUBSTITUTES
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.fitting import standardize_features
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard

REPO = Path(__file__).resolve().parents[1]
CHAPTER5 = ProtocolSettings(validation="cv", test_frac=0.2, train_cap=None, standardize=True)


def _dataset() -> Dataset:
    rng = np.random.default_rng(3)
    X = rng.normal(loc=[5.0, -2.0, 0.0], scale=[3.0, 0.5, 0.0], size=(80, 3))  # last: constant
    return Dataset("std", X, (X[:, 0] > 5).astype(np.int64))


def test_standardize_features_uses_the_training_rows_statistics_only() -> None:
    rng = np.random.default_rng(0)
    train, other = rng.normal(3.0, 2.0, size=(50, 4)), rng.normal(100.0, 9.0, size=(7, 4))
    train[:, 3] = 1.5  # constant: centred, not scaled
    scaled, (other_scaled,) = standardize_features(train, [other])
    np.testing.assert_allclose(scaled[:, :3].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(scaled[:, :3].std(axis=0), 1.0)
    np.testing.assert_array_equal(scaled[:, 3], 0.0)
    mean, std = train.mean(axis=0), np.where(train.std(axis=0) > 0, train.std(axis=0), 1.0)
    np.testing.assert_allclose(other_scaled, (other - mean) / std)


def test_every_fit_of_a_standardised_protocol_sees_its_own_training_statistics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each fit (5 folds, the final retraining) gets its training rows z-scored with their own
    statistics and its other rows transformed with the same ones, never their own."""
    calls = []

    def capture(learner, config, guard, X_train, y_train, evaluations, seed, train_gram=None, **kw):
        calls.append((X_train, [X for X, _ in evaluations]))
        return real(learner, config, guard, X_train, y_train, evaluations, seed, train_gram, **kw)

    real = hpo.evaluation.fitting.fit_and_predict
    monkeypatch.setattr(hpo.evaluation.fitting, "fit_and_predict", capture)
    data = _dataset()
    evaluator = Evaluator(data, CHAPTER5, lambda c: "knn", FitGuard(), seed=0, repetition=0)
    config = {"n_neighbors": 3}
    evaluator.validate(config, batch=0)
    evaluator.test(config)
    splits = evaluator.splits
    row_sets = [(fold.train, [fold.valid, splits.selection]) for fold in splits.folds(0)] + [
        (splits.train_valid_selection, [splits.test])
    ]
    assert len(calls) == len(row_sets) == 6
    for (X_train, X_evals), (train, evals) in zip(calls, row_sets, strict=True):
        raw = data.X[train]
        std = np.where(raw.std(axis=0) > 0, raw.std(axis=0), 1.0)
        np.testing.assert_allclose(X_train, (raw - raw.mean(axis=0)) / std)
        for X, rows in zip(X_evals, evals, strict=True):
            np.testing.assert_allclose(X, (data.X[rows] - raw.mean(axis=0)) / std)


def test_without_standardize_fits_see_the_raw_features(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = hpo.evaluation.fitting.fit_and_predict

    def capture(learner, config, guard, X_train, *rest, **kw):
        seen.append(X_train)
        return real(learner, config, guard, X_train, *rest, **kw)

    monkeypatch.setattr(hpo.evaluation.fitting, "fit_and_predict", capture)
    data = _dataset()
    protocol = ProtocolSettings(validation="cv", train_cap=None)
    evaluator = Evaluator(data, protocol, lambda c: "knn", FitGuard(), seed=0, repetition=0)
    evaluator.validate({"n_neighbors": 3}, batch=0)
    np.testing.assert_array_equal(seen[0], data.X[evaluator.splits.folds(0)[0].train])


@pytest.mark.reference
def test_chapter3_run_identity_is_unchanged_by_the_standardize_setting() -> None:
    """``standardize`` joined the protocol after Chapter 3's results: while it is off it is left
    out of the hash, so existing results keep their file names."""
    spec = compose_run(["optimizer=gp", "dataset=iris"])
    assert "standardize" not in spec.identity()["protocol"]
    # As before the setting existed, but for fit_guard.retrain_on_limit, which changed
    # every run's identity on purpose: the retraining's rule changed (15bc7a8c7e1ddd20 before).
    assert config_hash(spec) == "575ac9b707b1cd12"
    on = compose_run(["optimizer=gp", "dataset=iris", "protocol.standardize=true"])
    assert on.identity()["protocol"]["standardize"] is True
    assert config_hash(on) != config_hash(spec)


# ----------------------------------------------------------------------------- OpenML datasets


@pytest.fixture()
def openml_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HPO_OPENML_DIR", str(tmp_path / "openml"))
    return tmp_path / "openml"


def test_offline_openml_ids_run_on_labelled_substitutes_or_are_reported_not_run(
    openml_dir: Path,
) -> None:
    result = plan_datasets("chapter45_24")
    assert "openml:46" not in result.names and "molec-biol-splice" in result.names
    assert result.names.count("chess-krvk") == 1  # 184's substitute is also a UCI dataset
    assert len(result.names) == 19
    assert "substituted by molec-biol-splice" in result.notes["openml:46"]
    assert "substituted by chess-krvk" in result.notes["openml:184"]
    for dataset_id in (389, 772, 917, 1049):
        assert result.notes[f"openml:{dataset_id}"].startswith("not run: needs OpenML")
    assert set(result.notes) == {f"openml:{i}" for i in (46, 184, 389, 772, 917, 1049)}
    assert OPENML_SUBSTITUTES == {"openml:46": "molec-biol-splice", "openml:184": "chess-krvk"}


def test_a_cached_openml_dataset_is_run_as_itself_and_loads_offline(openml_dir: Path) -> None:
    openml_dir.mkdir()
    X, y = np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 0, 1])
    np.savez_compressed(openml_dir / "openml-1049.npz", X=X, y=y)
    np.savez_compressed(openml_dir / "openml-46.npz", X=X, y=y)
    result = plan_datasets("chapter45_24")
    assert "openml:1049" in result.names and "openml:46" in result.names
    assert "molec-biol-splice" not in result.names
    assert set(result.notes) == {"openml:184", "openml:389", "openml:772", "openml:917"}
    data = load_openml(1049)
    np.testing.assert_array_equal(data.X, X)
    np.testing.assert_array_equal(data.y, y)
    assert data.name == "openml:1049"


def test_fetch_mode_keeps_every_openml_id(openml_dir: Path) -> None:
    result = plan_datasets("chapter45_24", openml="fetch")
    assert len(result.names) == 24 and not result.notes


def test_the_chapter5_plan_runs_eleven_methods_per_dataset_and_notes_the_rest(
    openml_dir: Path, tmp_path: Path
) -> None:
    runs = plan("chapter5", "smoke", results_root=tmp_path)
    per_method = Counter(run.spec.method.name for run in runs)
    assert len(per_method) == 11 and set(per_method.values()) == {6 * 2}
    assert {run.spec.task.dataset for run in runs} == {
        "pima", "titanic", "car", "statlog-german-credit", "wine-quality-red", "molec-biol-splice"
    }  # fmt: skip
    for run in runs:
        assert (
            run.spec.task.space_name == "sklearn_cash" and run.spec.task.protocol_name == "chapter5"
        )
        assert run.spec.budget.evaluations == 30 and run.spec.outputs.experiment == "chapter5"
        if run.spec.method.optimizer == "cma":  # λ = 4 + ⌊3 ln d⌋ for Table 5.2's CMA
            assert run.spec.method.settings == {"popsize": "auto", "start": "centre"}
    notes = record_dataset_notes("chapter5", "smoke", results_root=tmp_path)
    assert set(notes) == {"openml:46", "openml:1049"}
    assert json.loads((tmp_path / "chapter5/smoke/dataset_notes.json").read_text()) == notes
    assert dataset_notes("chapter5", "paper").keys() == {
        f"openml:{i}" for i in (46, 184, 389, 772, 917, 1049)
    }


# ------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["optimizer=gp_cond", "space=svm_rbf"], "the conditional kernel needs conditions"),
        (["optimizer=gp_cond_ls", "optimizer.settings.ls_step=2"], "step must be in (0, 1]"),
        (["optimizer=gp_cond_ls", "optimizer.settings.kernel=rbf"], "unknown kernel 'rbf'"),
        (["optimizer=gp_cond", "optimizer.settings.ls_steps=0.1"], "unknown setting(s) ls_steps"),
    ],
)
def test_bad_chapter5_settings_are_refused_before_anything_runs(
    overrides: list[str], message: str
) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_method(compose_run(overrides))


def test_run_py_refuses_a_conditional_kernel_on_a_flat_space_and_writes_nothing(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "run.py", "optimizer=gp_cond", "space=svm_rbf",
               f"results_dir={tmp_path / 'out'}"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: the conditional kernel needs conditions; space 'svm_rbf' has none"
    ]
    assert not (tmp_path / "out").exists()
