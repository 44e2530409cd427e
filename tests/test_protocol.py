"""The Chapter-3 split scheme: disjointness, shared test split, reshuffling, stratification, cap."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hpo.evaluation.protocol import (
    ProtocolSettings,
    RepetitionSplits,
    stratified_folds,
    stratified_take,
)


def _labels(n: int, n_classes: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n_classes, size=n)


def _splits(labels, settings=None, predefined=False, n_main=None, rep=0, seed=0):
    settings = settings or ProtocolSettings()
    n_main = len(labels) if n_main is None else n_main
    return RepetitionSplits(labels, n_main, predefined, settings, seed, "toy", rep)


SETTINGS = [
    ProtocolSettings(validation=v, selection_split=s, reshuffle=r)
    for v, s, r in itertools.product(("holdout", "cv"), (False, True), (False, True))
]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_splits_are_disjoint_and_cover_the_data(settings: ProtocolSettings) -> None:
    labels = _labels(600)
    splits = _splits(labels, settings)
    test, sel, tv = splits.test, splits.selection, splits.train_valid
    assert not set(test) & set(sel) and not set(test) & set(tv) and not set(sel) & set(tv)
    assert sorted(np.concatenate([test, sel, tv])) == list(range(600))
    for batch in (1, 2, 3):
        folds = splits.folds(batch)
        assert len(folds) == (5 if settings.validation == "cv" else 1)
        for fold in folds:
            assert not set(fold.train) & set(fold.valid)
            assert set(fold.train) | set(fold.valid) == set(tv)
        if settings.validation == "cv":  # every point validates exactly once
            assert sorted(np.concatenate([f.valid for f in folds])) == sorted(tv)


def test_test_split_is_shared_by_every_method_and_reshuffle() -> None:
    labels = _labels(500)
    tests = {tuple(_splits(labels, s).test) for s in SETTINGS}
    assert len(tests) == 1
    selections = {tuple(_splits(labels, s).selection) for s in SETTINGS if s.selection_split}
    assert len(selections) == 1


def test_reshuffling_changes_train_valid_but_not_test_or_selection() -> None:
    labels = _labels(500)
    settings = ProtocolSettings(selection_split=True, reshuffle=True)
    splits = _splits(labels, settings)
    first, second = splits.folds(1)[0], splits.folds(2)[0]
    assert not np.array_equal(first.valid, second.valid)
    assert np.array_equal(splits.folds(1)[0].valid, first.valid)  # same batch, same split
    fixed = _splits(labels, ProtocolSettings(selection_split=True))
    assert np.array_equal(fixed.folds(1)[0].valid, fixed.folds(7)[0].valid)
    assert np.array_equal(splits.test, fixed.test)
    assert np.array_equal(splits.selection, fixed.selection)


def test_repetitions_and_seeds_draw_new_test_splits() -> None:
    labels = _labels(300)
    assert not np.array_equal(_splits(labels, rep=0).test, _splits(labels, rep=1).test)
    assert not np.array_equal(_splits(labels, seed=0).test, _splits(labels, seed=1).test)
    assert np.array_equal(_splits(labels, rep=1).test, _splits(labels, rep=1).test)


def test_predefined_test_set_is_used_as_is() -> None:
    labels = _labels(130)
    splits = _splits(labels, predefined=True, n_main=100)
    assert np.array_equal(splits.test, np.arange(100, 130))
    assert np.array_equal(splits.train_valid_selection, np.arange(100))


def test_stratification_keeps_class_proportions() -> None:
    labels = np.repeat([0, 1, 2], [600, 300, 100])
    taken, rest = stratified_take(np.arange(1000), labels, 333, np.random.default_rng(1))
    assert len(taken) == 333
    counts = np.bincount(labels[taken], minlength=3)
    np.testing.assert_allclose(counts, [200, 100, 33.3], atol=1)
    folds = stratified_folds(np.arange(1000), labels, 5, np.random.default_rng(1))
    for fold in folds:
        np.testing.assert_allclose(np.bincount(labels[fold], minlength=3), [120, 60, 20], atol=1)
    assert {len(f) for f in folds} == {200}


def test_tiny_classes_and_50_rows_still_split() -> None:
    labels = np.array([0] * 45 + [1] * 3 + [2] * 2)  # classes smaller than the number of folds
    for settings in SETTINGS:
        splits = _splits(labels, settings)
        for fold in splits.folds(1):
            assert len(fold.train) > 0 and len(fold.valid) > 0


@pytest.mark.parametrize("validation", ["holdout", "cv"])
def test_training_cap_sends_the_surplus_to_validation_and_selection(validation: str) -> None:
    labels = _labels(30_000, n_classes=2)
    plain = _splits(labels, ProtocolSettings(validation=validation))
    for fold in plain.folds(1):
        assert len(fold.train) == 5000
        assert len(fold.train) + len(fold.valid) == len(plain.train_valid)
    with_sel = _splits(labels, ProtocolSettings(validation=validation, selection_split=True))
    nominal_selection = round(len(with_sel.train_valid_selection) / 3)
    assert len(with_sel.selection) > nominal_selection  # part of the surplus went to D_S
    for fold in with_sel.folds(1):
        assert len(fold.train) == 5000


def test_no_cap_when_disabled() -> None:
    labels = _labels(12_000, n_classes=2)
    splits = _splits(labels, ProtocolSettings(train_cap=None))
    assert len(splits.folds(1)[0].train) > 5000


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown validation 'kfold'"):
        ProtocolSettings(validation="kfold")
    with pytest.raises(ValueError, match="valid_frac must be in"):
        ProtocolSettings(valid_frac=1.5)


@pytest.mark.parametrize("name", ["valid_frac", "test_frac", "selection_frac"])
@pytest.mark.parametrize("value", [0.0, 1.0, -0.1])
def test_split_fractions_must_lie_strictly_between_zero_and_one(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"protocol.{name} must be in \(0, 1\), got {value}"):
        ProtocolSettings(**{name: value})


def test_settings_that_leave_a_split_empty_are_refused_for_the_dataset_at_hand() -> None:
    labels = _labels(150)
    greedy = ProtocolSettings(selection_split=True, selection_frac=0.99)
    with pytest.raises(ValueError, match=r"selection_frac=0.99.*on iris \(150 rows\)"):
        _splits(labels, greedy).check_sizes("iris")
    _splits(labels, ProtocolSettings(selection_split=True)).check_sizes("iris")  # defaults fit
    tiny = _labels(4)
    with pytest.raises(ValueError, match="n_folds=5"):
        _splits(tiny, ProtocolSettings(validation="cv")).check_sizes("tiny")


def _test_class_shares(settings: ProtocolSettings, repetitions: int = 12) -> set[tuple[int, ...]]:
    labels = np.repeat([0, 1, 2], [60, 30, 9])
    return {
        tuple(np.bincount(labels[_splits(labels, settings, rep=r).test], minlength=3))
        for r in range(repetitions)
    }


def test_unstratified_test_split_class_counts_vary_across_repetitions_stratified_do_not() -> None:
    assert len(_test_class_shares(ProtocolSettings(stratify=True))) == 1
    assert len(_test_class_shares(ProtocolSettings(stratify=False))) > 1
    assert len(_test_class_shares(ProtocolSettings(stratify=("folds",)))) > 1  # per split
    assert len(_test_class_shares(ProtocolSettings(stratify=("test",)))) == 1


@pytest.mark.parametrize("stratify", [True, False])
@pytest.mark.parametrize("validation", ["holdout", "cv"])
def test_same_seed_same_splits_under_each_setting(stratify: bool, validation: str) -> None:
    labels = _labels(90)
    settings = ProtocolSettings(validation=validation, stratify=stratify, reshuffle=True)
    first, second = _splits(labels, settings), _splits(labels, settings)
    np.testing.assert_array_equal(first.test, second.test)
    for batch in (1, 2):
        for a, b in zip(first.folds(batch), second.folds(batch), strict=True):
            np.testing.assert_array_equal(a.train, b.train)
            np.testing.assert_array_equal(a.valid, b.valid)


def test_unknown_stratified_split_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown split.*valid: true, false or a list of test"):
        ProtocolSettings(stratify=("tests",))
