"""Run-level data flow: which rows every fit of a real run trains on and is scored on.

A recording learner (:class:`RecordingModel`) is run through the real
:func:`experiments.run.runner.execute_run`. Feature column 0 of every row holds the row's index
in the concatenation ``[X; X_test]``, so each fit records the row ids it was trained on and every
prediction the row ids it was asked about. Predictions are a fixed function of the configuration,
the training rows and the row id, so this test recomputes every loss of the trace and every test
error of the outcomes from the splits of :class:`hpo.evaluation.protocol.RepetitionSplits` alone
and checks
them exactly (thesis §3.3, Fig. 3.2: the optimizer sees the validation loss on D_V, selection
rules read D_S, the chosen model is retrained on D_TVS and tested once on D_G, shared by every
method of a repetition).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

import hpo.learners.registry
from experiments.configuration.spaces import space_config
from experiments.configuration.spec import RunSpec
from experiments.run.runner import execute_run
from hpo.data.catalog import Dataset
from hpo.evaluation.protocol import ProtocolSettings, RepetitionSplits
from hpo.learners.registry import Learner
from hpo.optimizers import CLASSES
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.rules.final_selection import population_ends

LEARNER = "recording"  # not svm_rbf: that learner gets precomputed kernels instead of raw X


@dataclass
class Fit:
    """One fit of a run: its training row ids and the row ids of each predict call."""

    config: dict
    rows: np.ndarray
    predicted: list[np.ndarray] = field(default_factory=list)


def _salt(config: Mapping[str, object], rows: np.ndarray) -> int:
    """What a model's predictions depend on besides the row: its configuration and rows."""
    return int(float(config["C"]) * 1e3 + float(config["gamma"]) * 1e6 + int(rows.sum())) % 9973


def predictions(row_ids: np.ndarray, salt: int) -> np.ndarray:
    """The label a model with ``salt`` predicts for each row id (about half wrong, scattered)."""
    return ((row_ids.astype(np.int64) * 7919 + salt) // 7 % 2).astype(np.int64)


class RecordingModel:
    """An estimator that records its fits in ``log`` and predicts by :func:`predictions`."""

    def __init__(self, log: list[Fit], config: Mapping[str, object]) -> None:
        self.log, self.config = log, dict(config)

    def fit(self, X: np.ndarray, y: np.ndarray) -> RecordingModel:
        rows = X[:, 0].astype(np.int64)
        self.fit_record = Fit(self.config, rows)
        self.log.append(self.fit_record)
        self.salt = _salt(self.config, rows)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        rows = X[:, 0].astype(np.int64)
        self.fit_record.predicted.append(rows)
        return predictions(rows, self.salt)


@pytest.fixture()
def fits(monkeypatch: pytest.MonkeyPatch) -> list[Fit]:
    """The log of every fit of the runs of a test, in order, through the recording learner."""
    log: list[Fit] = []

    def factory(config, guard, seed, n_train):  # the learner registry's factory signature
        return RecordingModel(log, config)

    # The one line that injects the learner into the registry, for this test only.
    monkeypatch.setitem(hpo.learners.registry.LEARNERS, LEARNER, Learner(factory))
    return log


def _dataset(predefined_test: bool) -> Dataset:
    rng = np.random.default_rng(7)
    n = 120
    y = rng.permutation(np.arange(n) % 2)
    X = np.column_stack([np.arange(n, dtype=float), rng.normal(size=n)])
    if not predefined_test:
        return Dataset("flow", X, y)
    return Dataset("flow", X[:90], y[:90], X[90:], y[90:])


def _labels(data: Dataset) -> np.ndarray:
    return data.y if data.y_test is None else np.concatenate([data.y, data.y_test])


def _splits(spec: RunSpec, data: Dataset) -> RepetitionSplits:
    return RepetitionSplits(
        _labels(data),
        len(data.y),
        data.has_predefined_test,
        spec.task.protocol,
        spec.seed,
        data.name,
        spec.repetition,
    )


def _error(config: Mapping[str, object], train: np.ndarray, rows: np.ndarray, y) -> float:
    return float(np.mean(predictions(rows, _salt(config, train)) != y[rows]))


def _spec(protocol: ProtocolSettings, optimizer: str = "rs", **overrides) -> RunSpec:
    values = dict(
        dataset="flow",
        optimizer=optimizer,
        rules={"m": "best_selection" if protocol.selection_split else "best_validation"},
        protocol=protocol,
        space={**space_config("svm_rbf"), "learner": LEARNER},
        budget=8,
    )
    values.update(overrides)
    return RunSpec.of(**values)


@dataclass
class CheckedRun:
    trace: pd.DataFrame
    outcomes: pd.DataFrame
    splits: RepetitionSplits
    search: list[Fit]
    final: list[Fit]


def run_and_check(spec: RunSpec, data: Dataset, fits: list[Fit]) -> CheckedRun:
    """Run ``spec`` and check every fit of it against the splits recomputed independently."""
    del fits[:]
    trace, outcomes = execute_run(spec, data=data)
    splits = _splits(spec, data)
    y = _labels(data)
    test, tvs, selection = splits.test, splits.train_valid_selection, splits.selection
    n_search = int(trace["n_fits"].sum())
    search, final = fits[:n_search], fits[n_search:]
    position = 0
    seen: dict[tuple, tuple[float, float]] = {}
    for row in trace.itertuples():
        config = {"C": row.param_C, "gamma": row.param_gamma}
        folds = splits.folds(row.batch)
        key = (row.param_C, row.param_gamma, splits.split_key(row.batch))
        if row.n_fits == 0:  # a configuration already scored on these folds: same losses
            assert key in seen
            assert (row.valid_loss, row.selection_loss) == pytest.approx(seen[key], nan_ok=True)
            continue
        assert row.n_fits == len(folds)
        valid_losses, selection_losses = [], []
        for fit, fold in zip(search[position : position + len(folds)], folds, strict=True):
            assert fit.config == config
            # trained on exactly D_T of this batch's split, scored on D_V then D_S, nothing else
            np.testing.assert_array_equal(fit.rows, fold.train)
            expected = [fold.valid] + ([selection] if len(selection) else [])
            assert len(fit.predicted) == len(expected)
            for got, want in zip(fit.predicted, expected, strict=True):
                np.testing.assert_array_equal(np.sort(got), want)
            assert not np.isin(fit.rows, test).any()
            assert not any(np.isin(p, test).any() for p in fit.predicted)
            valid_losses.append(_error(config, fold.train, fold.valid, y))
            if len(selection):
                selection_losses.append(_error(config, fold.train, selection, y))
        position += len(folds)
        # the loss the optimizer sees is the mean over every fold; selection likewise
        assert row.valid_loss == pytest.approx(np.mean(valid_losses), abs=1e-12)
        if len(selection):
            assert row.selection_loss == pytest.approx(np.mean(selection_losses), abs=1e-12)
        else:
            assert np.isnan(row.selection_loss)
        seen[key] = (row.valid_loss, row.selection_loss)
    assert position == n_search
    # every final model: retrained on exactly D_TVS, tested once on D_G, one fit per config
    for fit in final:
        np.testing.assert_array_equal(fit.rows, tvs)
        assert len(fit.predicted) == 1
        np.testing.assert_array_equal(np.sort(fit.predicted[0]), test)
    tested = {(c["C"], c["gamma"]) for c in (f.config for f in final)}
    assert len(tested) == len(final)
    assert tested == set(zip(outcomes["param_C"], outcomes["param_gamma"], strict=True))
    for row in outcomes.itertuples():
        config = {"C": row.param_C, "gamma": row.param_gamma}
        assert row.test_error == pytest.approx(_error(config, tvs, test, y), abs=1e-12)
    return CheckedRun(trace, outcomes, splits, search, final)


PROTOCOLS = {
    f"{validation}-{'r' if reshuffle else 'fixed'}-{'sel' if selection else 'nosel'}": (
        ProtocolSettings(validation=validation, reshuffle=reshuffle, selection_split=selection)
    )
    for validation in ("holdout", "cv")
    for reshuffle in (False, True)
    for selection in (False, True)
}


@pytest.mark.parametrize("predefined_test", [False, True], ids=["drawn-test", "predefined-test"])
@pytest.mark.parametrize("protocol", list(PROTOCOLS.values()), ids=list(PROTOCOLS))
def test_every_fit_trains_on_its_batch_split_and_every_loss_is_recomputed_exactly(
    protocol: ProtocolSettings, predefined_test: bool, fits: list[Fit]
) -> None:
    run = run_and_check(_spec(protocol), _dataset(predefined_test), fits)
    assert len(run.final) >= 1
    if protocol.validation == "cv":
        assert (run.trace["n_fits"] == 5).all()


@pytest.mark.parametrize("validation", ["holdout", "cv"])
def test_a_new_split_per_batch_exactly_when_reshuffling(validation: str, fits: list[Fit]) -> None:
    data = _dataset(False)
    for reshuffle in (False, True):
        protocol = ProtocolSettings(validation=validation, reshuffle=reshuffle)
        run = run_and_check(_spec(protocol), data, fits)
        n_folds = len(run.splits.folds(1))
        first_fold_rows = {tuple(fit.rows) for fit in run.search[::n_folds]}
        batches = run.trace.loc[run.trace["n_fits"] > 0, "batch"].nunique()
        assert len(first_fold_rows) == (batches if reshuffle else 1)
        assert batches == len(run.trace)  # random search: one batch per iteration


def test_the_test_split_is_shared_by_every_method_of_a_repetition(fits: list[Fit]) -> None:
    data = _dataset(False)
    tested: dict[str, np.ndarray] = {}
    for name, protocol in PROTOCOLS.items():
        run = run_and_check(_spec(protocol, budget=3), data, fits)
        tested[name] = run.final[0].predicted[0]
    reference = _splits(_spec(ProtocolSettings()), data).test
    for name, rows in tested.items():
        np.testing.assert_array_equal(np.sort(rows), reference, err_msg=name)
    # and another repetition draws another test split
    other = _splits(_spec(ProtocolSettings(), repetition=1), data).test
    assert not np.array_equal(other, reference)


def test_cma_es_reshuffles_per_generation_and_reports_only_at_generation_ends(
    fits: list[Fit],
) -> None:
    protocol = ProtocolSettings(reshuffle=True, selection_split=True)
    rules = {
        "cma-pv-r": "partial_validation",
        "cma-bw-r": "backwarding",
        "cma-r": "best_validation",
    }
    spec = _spec(protocol, optimizer="cma", rules=rules, budget=14)
    run = run_and_check(spec, _dataset(False), fits)
    assert list(run.trace["batch"]) == [1] * 6 + [2] * 6 + [3] * 2
    first_rows = {tuple(f.rows) for f in run.search}
    assert len(first_rows) == 3  # one split per generation
    ends = np.flatnonzero(population_ends(run.trace["batch"].to_numpy())) + 1
    for method in rules:
        reported = run.outcomes.loc[run.outcomes["method"] == method, "iteration"]
        assert list(reported) == list(ends), method  # best_validation included (docs/deviations.md)


def test_gp_pm_reports_the_posterior_mean_argmin_not_an_evaluated_point(
    fits: list[Fit], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[GPEIOptimizer] = []

    @functools.wraps(GPEIOptimizer.__init__)  # keeps the signature the settings are checked by
    def init(self, *args, **kwargs) -> None:
        GPEIOptimizer.__init__(self, *args, **kwargs)
        built.append(self)

    Spy = type("Spy", (GPEIOptimizer,), {"__init__": init})

    monkeypatch.setitem(CLASSES, "gp", Spy)
    settings = {"grid_size": 256, "burnin": 10, "n_samples": 3}
    spec = _spec(
        ProtocolSettings(),
        optimizer="gp",
        rules={"gp": "best_validation", "gp-pm": "posterior_mean"},
        budget=5,
        optimizer_settings=settings,
    )
    run = run_and_check(spec, _dataset(False), fits)
    pm = run.outcomes[run.outcomes["method"] == "gp-pm"].set_index("iteration")
    assert list(pm.index) == list(range(1, 6))
    optimizer = built[0]
    for n in range(2, 6):  # the GP exists from 2 observations on
        # the optimizer's cached posterior-mean answer for n observations (computed by the run)
        u = optimizer._pm_cache[(n, "space")]
        config = optimizer.space.decode(u)
        assert (pm.loc[n, "param_C"], pm.loc[n, "param_gamma"]) == (config["C"], config["gamma"])
    final_u = np.array([pm.loc[5, "param_C"], pm.loc[5, "param_gamma"]])
    evaluated = run.trace[["param_C", "param_gamma"]].to_numpy()
    assert not (evaluated == final_u).all(axis=1).any()  # an argmin over the space, not a trial
