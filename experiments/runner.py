"""One optimization run, from a plain :class:`RunSpec` to its results table.

Data flow (DESIGN.md): dataset → outer split → ``optimizer.ask()`` → the protocol gives the folds
for this batch → fit and score → ``optimizer.tell(validation loss)`` → one trace row. Then every
selection rule reads the trace and names an incumbent per iteration; each distinct incumbent is
retrained on all non-test data and tested once (cached by configuration), which gives the
test-error-versus-iteration curves of every rule for free.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hpo import seeding
from hpo.datasets import Dataset, load_dataset
from hpo.learners import FitGuard, SquaredDistanceCache, fit_and_score
from hpo.optimizers import SurrogateOptimizer, make_optimizer
from hpo.protocol import ProtocolSettings, RepetitionSplits
from hpo.selection import NO_ANSWER, POSTERIOR_MEAN, RULES, population_ends
from hpo.space import Categorical, Integer, Space, get_space

# Families whose incumbents exist only at the end of each generation (spec §2.7, §7.19).
GENERATIONAL_FAMILIES = ("cma",)


@dataclass(frozen=True)
class RunSpec:
    """Everything one run depends on (plain values; built from Hydra configs by ``experiments``).

    ``rules`` maps each thesis method name this run reports (e.g. ``gp-r`` and ``gp-pm-r``) to its
    selection rule (``best_validation``, ``best_selection``, ``partial_validation``,
    ``backwarding``, ``global_validation`` or ``posterior_mean``).
    """

    dataset: str
    optimizer: str
    rules: Mapping[str, str]
    protocol: ProtocolSettings = field(default_factory=ProtocolSettings)
    protocol_name: str = "holdout"
    space: str = "svm_rbf"
    learner: str = "svm_rbf"
    budget: int = 100
    seed: int = 0
    repetition: int = 0
    optimizer_settings: Mapping[str, Any] = field(default_factory=dict)
    fit_guard: FitGuard = field(default_factory=FitGuard)
    pm_domain: str = "space"
    curves: bool = True

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"budget must be a positive integer, got {self.budget}")
        if self.repetition < 0:
            raise ValueError(f"repetition must be >= 0, got {self.repetition}")
        if not self.rules:
            raise ValueError("a run needs at least one (method, rule) to report")

    @property
    def run_method(self) -> str:
        """The name the run is known by: its first method."""
        return next(iter(self.rules))

    def identity(self) -> dict[str, Any]:
        """The values that determine the run's results (hashed into ``config_hash``)."""
        identity = asdict(self)
        identity["rules"] = dict(sorted(self.rules.items()))
        return identity


@dataclass
class _TraceRow:
    iteration: int
    batch: int
    u: np.ndarray
    config: dict[str, Any]
    valid_loss: float
    selection_loss: float
    n_fits: int
    fit_limit_hits: int
    fit_seconds: float
    optimizer_seconds: float


@dataclass(frozen=True)
class _Validation:
    valid_loss: float
    selection_loss: float
    n_fits: int
    fit_limit_hits: int
    fit_seconds: float


class Evaluator:
    """Scores configurations on the folds of a batch and tests final models (cached)."""

    def __init__(self, spec: RunSpec, data: Dataset) -> None:
        self.spec = spec
        X_parts = [data.X] if data.X_test is None else [data.X, data.X_test]
        y_parts = [data.y] if data.y_test is None else [data.y, data.y_test]
        self.X = np.concatenate(X_parts)
        self.y = np.concatenate(y_parts)
        self.splits = RepetitionSplits(
            self.y,
            len(data.y),
            data.has_predefined_test,
            spec.protocol,
            spec.seed,
            data.name,
            spec.repetition,
        )
        self._test_cache: dict[tuple, tuple[float, bool, float]] = {}
        self._valid_cache: dict[tuple, _Validation] = {}
        guard = spec.fit_guard
        self._distances = (
            SquaredDistanceCache(self.X, guard.distance_cache_mb)
            if spec.learner == "svm_rbf" and guard.distance_cache_mb > 0
            else None
        )

    def _fit(
        self,
        config: Mapping[str, Any],
        train: np.ndarray,
        evals: list[np.ndarray],
        train_key: tuple,
        guard: FitGuard,
    ):
        """Fit on rows ``train`` (identified by ``train_key`` for the distance cache), score on
        each of ``evals``; the fit's seconds include computing the precomputed kernel."""
        started = time.perf_counter()
        gram = None
        if self._distances is not None:
            gram = self._distances.gram(train_key, train, float(config["gamma"]))
        gram_seconds = time.perf_counter() - started
        outcome = fit_and_score(
            self.spec.learner,
            config,
            guard,
            self.X[train],
            self.y[train],
            [(self.X[idx], self.y[idx]) for idx in evals],
            seed=seeding.int_seed(seeding.seed_sequence(self.spec.seed, "learner")),
            train_gram=gram,
        )
        return dataclasses.replace(outcome, fit_seconds=outcome.fit_seconds + gram_seconds)

    def validate(self, config: Mapping[str, Any], batch: int) -> _Validation:
        """Fold means of the validation and selection losses of ``config`` on ``batch``'s folds.

        Fits are deterministic, so a configuration already scored on the same folds (a repeated
        grid point, CMA-ES offspring clipped to the same corner) is not fitted again.
        """
        key = (tuple(sorted(config.items())), self.splits.split_key(batch))
        if key in self._valid_cache:
            return dataclasses.replace(self._valid_cache[key], n_fits=0, fit_seconds=0.0)
        selection = self.splits.selection
        valid, sel, hits, seconds = [], [], 0, 0.0
        folds = self.splits.folds(batch)
        for index, fold in enumerate(folds):
            train_key = ("fold", self.splits.split_key(batch), index)
            outcome = self._fit(
                config, fold.train, [fold.valid, selection], train_key, self.spec.fit_guard
            )
            valid.append(outcome.errors[0])
            sel.append(outcome.errors[1])
            hits += outcome.hit_limit
            seconds += outcome.fit_seconds
        selection_loss = float(np.mean(sel)) if len(selection) else float("nan")
        result = _Validation(float(np.mean(valid)), selection_loss, len(folds), hits, seconds)
        self._valid_cache[key] = result
        return result

    def test(self, config: Mapping[str, Any]) -> tuple[float, bool, float]:
        """(test error, fit-limit hit, fit seconds) of ``config`` retrained on all of D_TVS."""
        key = tuple(sorted(config.items()))
        if key not in self._test_cache:
            outcome = self._fit(
                config,
                self.splits.train_valid_selection,
                [self.splits.test],
                ("tvs",),
                self.spec.fit_guard.for_retraining(),
            )
            self._test_cache[key] = (outcome.errors[0], outcome.hit_limit, outcome.fit_seconds)
        return self._test_cache[key]


def execute_run(
    spec: RunSpec, data: Dataset | None = None, data_dir: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``spec`` and return (trace, outcomes) as typed DataFrames (see README, schema)."""

    unknown = {r for r in spec.rules.values() if r not in RULES and r != POSTERIOR_MEAN}
    if unknown:
        raise ValueError(f"unknown selection rules {sorted(unknown)}; valid: {sorted(RULES)}")
    data = data if data is not None else load_dataset(spec.dataset, data_dir)
    space = get_space(spec.space)
    evaluator = Evaluator(spec, data)
    optimizer = make_optimizer(
        spec.optimizer,
        space,
        spec.budget,
        seeding.rng(spec.seed, data.name, spec.repetition, "optimizer", spec.optimizer),
        **dict(spec.optimizer_settings),
    )
    wants_pm = POSTERIOR_MEAN in spec.rules.values()
    if wants_pm and not isinstance(optimizer, SurrogateOptimizer):
        raise ValueError(f"optimizer {spec.optimizer!r} has no surrogate for posterior-mean rules")
    trace: list[_TraceRow] = []
    pm_incumbents: list[dict[str, Any] | None] = []
    for iteration in range(1, spec.budget + 1):
        started = time.perf_counter()
        try:
            proposal = optimizer.ask()
        except StopIteration:
            break
        ask_seconds = time.perf_counter() - started
        config = space.decode(proposal.u)
        scored = evaluator.validate(config, proposal.batch)
        started = time.perf_counter()
        optimizer.tell(proposal, scored.valid_loss)
        tell_seconds = time.perf_counter() - started
        trace.append(
            _TraceRow(
                iteration,
                proposal.batch,
                np.asarray(proposal.u),
                config,
                scored.valid_loss,
                scored.selection_loss,
                scored.n_fits,
                scored.fit_limit_hits,
                scored.fit_seconds,
                ask_seconds + tell_seconds,
            )
        )
        if wants_pm:
            last = iteration == spec.budget
            pm_incumbents.append(
                space.decode(optimizer.posterior_mean_argmin(spec.pm_domain))
                if spec.curves or last
                else None
            )
    trace_frame = _trace_frame(trace, space)
    outcomes = _outcomes(spec, trace, pm_incumbents, evaluator, space)
    return trace_frame, outcomes


def _param_columns(space: Space, configs: list[dict[str, Any]]) -> dict[str, pd.Series]:
    columns = {}
    for p in space.parameters:
        values = [c.get(p.name) for c in configs]
        if isinstance(p, Categorical):
            columns[f"param_{p.name}"] = pd.Series(values, dtype="string")
        elif isinstance(p, Integer):
            columns[f"param_{p.name}"] = pd.Series(values, dtype="Int64")
        else:
            columns[f"param_{p.name}"] = pd.Series(
                [np.nan if v is None else v for v in values], dtype="float64"
            )
    return columns


def _trace_frame(trace: list[_TraceRow], space: Space) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "iteration": pd.Series([r.iteration for r in trace], dtype="int64"),
            "batch": pd.Series([r.batch for r in trace], dtype="int64"),
            "valid_loss": pd.Series([r.valid_loss for r in trace], dtype="float64"),
            "selection_loss": pd.Series([r.selection_loss for r in trace], dtype="float64"),
            "n_fits": pd.Series([r.n_fits for r in trace], dtype="int64"),
            "fit_limit_hits": pd.Series([r.fit_limit_hits for r in trace], dtype="int64"),
            "fit_seconds": pd.Series([r.fit_seconds for r in trace], dtype="float64"),
            "optimizer_seconds": pd.Series([r.optimizer_seconds for r in trace], dtype="float64"),
        }
    )
    for i, name in enumerate(space.names):
        frame[f"u_{name}"] = pd.Series([float(r.u[i]) for r in trace], dtype="float64")
    for name, column in _param_columns(space, [r.config for r in trace]).items():
        frame[name] = column
    return frame


def _outcomes(
    spec: RunSpec,
    trace: list[_TraceRow],
    pm_incumbents: list[dict[str, Any] | None],
    evaluator: Evaluator,
    space: Space,
) -> pd.DataFrame:
    valid = np.array([r.valid_loss for r in trace])
    sel = np.array([r.selection_loss for r in trace])
    batch = np.array([r.batch for r in trace])
    records = []
    for method, rule in spec.rules.items():
        if rule == POSTERIOR_MEAN:
            chosen = [(t, None, cfg) for t, cfg in enumerate(pm_incumbents) if cfg is not None]
        else:
            incumbent = RULES[rule](valid, sel, batch)
            if spec.optimizer in GENERATIONAL_FAMILIES:
                incumbent = np.where(population_ends(batch), incumbent, NO_ANSWER)
            chosen = [(t, int(i), trace[int(i)].config) for t, i in enumerate(incumbent) if i >= 0]
        if not spec.curves:
            chosen = [c for c in chosen if c[0] == len(trace) - 1]
        for t, index, config in chosen:
            test_error, limit_hit, test_seconds = evaluator.test(config)
            records.append(
                {
                    "method": method,
                    "rule": rule,
                    "iteration": t + 1,
                    "incumbent_iteration": None if index is None else index + 1,
                    "incumbent_valid_loss": np.nan if index is None else valid[index],
                    "incumbent_selection_loss": np.nan if index is None else sel[index],
                    "test_error": test_error,
                    "test_fit_limit_hit": limit_hit,
                    "test_fit_seconds": test_seconds,
                    "config": config,
                }
            )
    frame = pd.DataFrame(
        {
            "method": pd.Series([r["method"] for r in records], dtype="string"),
            "rule": pd.Series([r["rule"] for r in records], dtype="string"),
            "iteration": pd.Series([r["iteration"] for r in records], dtype="int64"),
            "incumbent_iteration": pd.Series(
                [r["incumbent_iteration"] for r in records], dtype="Int64"
            ),
            "incumbent_valid_loss": pd.Series(
                [r["incumbent_valid_loss"] for r in records], dtype="float64"
            ),
            "incumbent_selection_loss": pd.Series(
                [r["incumbent_selection_loss"] for r in records], dtype="float64"
            ),
            "test_error": pd.Series([r["test_error"] for r in records], dtype="float64"),
            "test_fit_limit_hit": pd.Series(
                [r["test_fit_limit_hit"] for r in records], dtype="bool"
            ),
            "test_fit_seconds": pd.Series(
                [r["test_fit_seconds"] for r in records], dtype="float64"
            ),
        }
    )
    for name, column in _param_columns(space, [r["config"] for r in records]).items():
        frame[name] = column
    return frame
