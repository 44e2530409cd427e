"""One optimization run, from a plain :class:`RunSpec` to its results tables.

Data flow: dataset → outer split → ``optimizer.ask()`` → the protocol gives the folds
for this batch → the configuration's learner is fitted and scored (:mod:`hpo.evaluation.evaluator`)
→
``optimizer.tell(validation loss)`` → one trace row. Then every selection rule reads the trace
and returns a choice per iteration (one member, or several); each distinct member is retrained on
all non-test data and tested once (cached by configuration), a choice of several members is
scored by their majority vote, which gives the test-error-versus-iteration curves of every rule
for free. With ``predictions`` the run also returns every model's predicted labels (the
predictions sidecar, :mod:`experiments.results`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from experiments.spec import RunSpec
from experiments.stages import FinishedLoop, run_stages
from hpo import seeding
from hpo.data.catalog import Dataset, load_dataset
from hpo.evaluation.evaluator import ChoiceScorer, Clock, Evaluator, Validation
from hpo.evaluation.objective import make_objective
from hpo.learners import (
    check_learner_settings,
    learner_resources,
    learner_task,
)
from hpo.learners.network_settings import resolve_device
from hpo.optimizers import (
    MultiFidelity,
    Optimizer,
    PredictionsConsumer,
    PriorConsumer,
    Proposal,
    make_optimizer,
    optimizer_class,
)
from hpo.records import Choice, Trace
from hpo.registry import Registry
from hpo.rules.final_selection import SelectionRule, population_ends
from hpo.rules.registry import make_rule
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Categorical, Integer, Space

PREDICTION_KINDS = {"valid": 0, "selection": 1, "test": 2}


@dataclass(frozen=True)
class RunResult:
    """A finished run's tables: one row per evaluation, one per (method, iteration) outcome, and
    (when the run keeps them) the predictions, one row per (model, split, fold, example); and the
    rows of its post-run stages, by row type (:mod:`experiments.stages`)."""

    trace: pd.DataFrame
    outcomes: pd.DataFrame
    predictions: pd.DataFrame | None = None
    data_provenance: Mapping[str, Any] = field(default_factory=dict)
    stage_rows: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class _Evaluation:
    iteration: int
    batch: int
    u: np.ndarray
    config: dict[str, Any]  # as proposed, virtual parameters included (the trace's columns)
    learner_config: dict[str, Any]  # what the learner sees: virtual parameters removed (§3.1.2)
    scored: Validation
    optimizer_seconds: float
    elapsed_seconds: float  # since the loop started, when this evaluation ended
    bracket: int | None = None  # Hyperband's bracket (seed 002)


@dataclass(frozen=True)
class RecordedEvaluation:
    """One evaluation as a journal keeps it (:mod:`experiments.journal`): what was evaluated,
    its validation and its times."""

    config: dict[str, Any]  # the learner's configuration
    batch: int
    resource: dict[str, Any]  # the evaluator's resource arguments (empty for a full evaluation)
    scored: Validation
    optimizer_seconds: float
    elapsed_seconds: float


class EvaluationLog(Protocol):
    """Where the loop records its evaluations and, on a resumed run, replays the recorded ones
    from (:class:`experiments.journal.Journal`)."""

    @property
    def replaying(self) -> bool:
        """Whether the next evaluation is answered from the log."""

    def replay(
        self, evaluator: Evaluator, config: dict[str, Any], batch: int, resource: dict[str, Any]
    ) -> RecordedEvaluation:
        """The next recorded evaluation, checked to be of ``config``, ``batch``, ``resource``."""

    def record(self, evaluation: RecordedEvaluation) -> None:
        """Keep one finished evaluation."""


@dataclass(frozen=True)
class _Setup:
    """A run's working parts, built from its spec and data before the loop starts."""

    data: Dataset
    prior_space: PriorSpace
    optimizer: Optimizer
    rules: dict[str, SelectionRule]
    evaluator: Evaluator
    reads_predictions: bool  # the optimizer or a rule reads the models' predictions


def execute_run(
    spec: RunSpec, data: Dataset | None = None, data_dir: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``spec`` and return (trace, outcomes) as typed DataFrames (see README, schema)."""
    result = run(spec, data, data_dir)
    return result.trace, result.outcomes


# Called after every evaluation with (iteration, validation loss of that evaluation).
Progress = Callable[[int, float], None]


def run(
    spec: RunSpec,
    data: Dataset | None = None,
    data_dir: str | None = None,
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> RunResult:
    """Run ``spec`` through its optimizer's trial loop (:data:`TRIAL_LOOPS`): the folds loop of
    this module, or the instance loop of the optimizers that race configurations over instances
    (seed 004's, :func:`experiments.autoweka.run_on_instances`). ``progress`` (e.g. a progress
    bar) hears of every evaluation; it cannot change the results. A ``journal`` (folds loop
    only, :func:`experiments.journal.check_journaled`) records the evaluations and resumes
    from those it holds."""
    function = TRIAL_LOOPS.get(optimizer_class(spec.method.optimizer).trial_loop)
    if journal is not None:
        return function(spec, data, data_dir, progress, journal=journal)
    return function(spec, data, data_dir, progress)


def run_on_folds(
    spec: RunSpec,
    data: Dataset | None = None,
    data_dir: str | None = None,
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> RunResult:
    """The loop every study but seed 004 runs: each proposal is scored on the folds of its
    batch's split; then every rule's choices are tested and the post-run stages run."""
    setup = _set_up(spec, data if data is not None else load_dataset(spec.task.dataset, data_dir))
    try:
        evaluations = _optimize(
            spec,
            setup.optimizer,
            setup.prior_space,
            setup.evaluator,
            list(setup.rules.values()),
            progress,
            journal,
        )
    finally:
        setup.evaluator.close()
    trace = Trace(
        valid_loss=np.array([e.scored.valid_loss for e in evaluations]),
        selection_loss=np.array([e.scored.selection_loss for e in evaluations]),
        batch=np.array([e.batch for e in evaluations]),
        configs=[e.learner_config for e in evaluations],
        predictions=(
            [e.scored.predictions for e in evaluations] if setup.reads_predictions else None
        ),
    )
    evaluator, space = setup.evaluator, setup.prior_space.space
    scorer = ChoiceScorer(
        evaluator,
        spec.method.vote_ties,
        seeding.rng(spec.seed, setup.data.stream_name, spec.repetition, "vote-ties"),
    )
    outcomes = _outcomes(spec, setup.rules, trace, scorer, setup.optimizer, space)
    predictions = (
        _predictions_frame(evaluations, evaluator, scorer) if spec.outputs.predictions else None
    )
    provenance = {"dataset_sha256": setup.data.checksum(), **evaluator.splits.sizes()}
    finished = FinishedLoop(
        evaluator,
        space,
        [e.config for e in evaluations],
        [e.learner_config for e in evaluations],
        np.array([e.u for e in evaluations]),
        [e.scored.valid_loss for e in evaluations],
        (spec.seed, setup.data.stream_name, spec.repetition),
    )
    stage_rows = {}
    for stage in run_stages(finished, spec.method.stages):
        stage_rows[stage.row_type] = stage.rows
        provenance |= stage.provenance
    return RunResult(
        _trace_frame(evaluations, space), outcomes, predictions, provenance, stage_rows
    )


def _set_up(spec: RunSpec, data: Dataset) -> _Setup:
    """The run's space, optimizer, rules and evaluator, each checked against the others (a
    space for another task, a rule the optimizer cannot serve, a resource a learner cannot
    train by: one line each, before any work)."""
    prior_space = spec.task.prior_space
    space = prior_space.space
    check_task(space, data.task, data.name)
    for learner in space.learners:
        check_learner_settings(learner, space.learner_settings)
    rng = seeding.rng(
        spec.seed, data.stream_name, spec.repetition, "optimizer", spec.method.optimizer
    )
    try:  # the one time the run's optimizer is built: a setting it refuses is one line
        optimizer = make_optimizer(
            spec.method.optimizer, space, spec.budget.evaluations, rng, **dict(spec.method.settings)
        )
    except (KeyError, TypeError) as err:
        raise ValueError(str(err).strip('"')) from err
    if isinstance(optimizer, PriorConsumer):
        optimizer.use_priors(prior_space)
    rules = {
        method: make_rule(rule, spec.method.pm_domain, spec.method.post_hoc)
        for method, rule in spec.method.rules.items()
    }
    for rule in rules.values():
        rule.check(optimizer)
    if isinstance(optimizer, MultiFidelity):
        check_resource(space, optimizer.resource_kind, spec.method.optimizer)
    reads_predictions = isinstance(optimizer, PredictionsConsumer) or any(
        rule.needs_predictions for rule in rules.values()
    )
    evaluator = Evaluator(
        data,
        spec.task.protocol,
        space.learner_of,
        spec.task.fit_guard,
        spec.seed,
        spec.repetition,
        keep_predictions=spec.outputs.predictions or reads_predictions,
        learner_settings=space.learner_settings,
        limits=spec.budget.limits,
        objective=make_objective(spec.task.objective),
        keep_probabilities=spec.outputs.probabilities,
    )
    evaluator.splits.check_sizes(data.name)
    return _Setup(data, prior_space, optimizer, rules, evaluator, reads_predictions)


# Optimizer.trial_loop -> the loop's function (imported when a run needs it).
TRIAL_LOOPS: Registry[Callable[..., RunResult]] = Registry(
    "trial loop",
    {
        "folds": "experiments.runner:run_on_folds",
        "instances": "experiments.autoweka:run_on_instances",
    },
)


def space_task(space: Space) -> str:
    """The task the learners of ``space`` solve (``ValueError`` when they mix tasks)."""
    tasks = sorted({learner_task(learner) for learner in space.learners})
    if len(tasks) != 1:
        raise ValueError(f"space {space.name!r} mixes {' and '.join(tasks)} learners")
    return tasks[0]


def check_task(space: Space, task: str, dataset: str) -> None:
    """Refuse, in one line, a space whose learners solve another task than ``dataset``'s."""
    learners_task = space_task(space)
    if learners_task != task:
        raise ValueError(
            f"space {space.name!r} is a {learners_task} space and dataset {dataset!r} a {task} "
            f"dataset; a {task} dataset needs a {task} space"
        )


def check_resource(space: Space, kind: str, optimizer: str) -> None:
    """Refuse, in one line, a multi-fidelity optimizer whose resource a learner cannot serve."""
    for learner in space.learners:
        kinds = learner_resources(learner)
        if kind not in kinds:
            raise ValueError(
                f"optimizer {optimizer!r} trains by {kind} but learner {learner!r} of space "
                f"{space.name!r} cannot; it takes: {', '.join(kinds)} "
                f"(e.g. +optimizer.settings.resource={kinds[0]})"
            )


def _resource_of(optimizer: Optimizer, resource: float | None) -> dict[str, Any]:
    """The evaluator's resource arguments for a proposal (none for a full evaluation)."""
    if resource is None:
        return {}
    kind = optimizer.resource_kind if isinstance(optimizer, MultiFidelity) else "epochs"
    return {"resource": resource, "resource_kind": kind}


def _optimize(
    spec: RunSpec,
    optimizer: Optimizer,
    prior_space: PriorSpace,
    evaluator: Evaluator,
    rules: list[SelectionRule],
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> list[_Evaluation]:
    """The ask / evaluate / tell loop; rules observe the optimizer after every evaluation.
    With a ``journal`` its recorded evaluations answer the first asks and every new one is
    appended to it (:mod:`experiments.journal`).

    With ``spec.budget.seconds`` the loop starts no evaluation once that many seconds of
    ``spec.budget.clock`` (wall, or CPU of this process and its fit children) have passed,
    so a run ends within one evaluation of its time budget (``spec.budget.evaluations`` still
    caps the number of evaluations)."""
    space = prior_space.space
    evaluations: list[_Evaluation] = []
    loop_started = time.perf_counter()
    clock = Clock(spec.budget.clock, lambda: evaluator.child_cpu_seconds)
    batches = _batches_networks(spec, optimizer, evaluator)
    pending: list[Proposal] = []  # proposals asked ahead (batch_networks)

    def decoded(proposal: Proposal) -> tuple[dict[str, Any], np.ndarray]:
        if proposal.config is not None:
            return dict(proposal.config), space.encode(proposal.config)
        return space.decode(proposal.u), np.asarray(proposal.u, dtype=float)

    for iteration in range(1, spec.budget.evaluations + 1):
        if spec.budget.seconds is not None and clock.spent() >= spec.budget.seconds:
            break
        started = time.perf_counter()
        asked = not pending  # not one asked ahead
        try:
            proposal = pending.pop(0) if pending else optimizer.ask()
        except StopIteration:
            break
        if batches and asked:
            ahead = min(_ahead(spec, optimizer, proposal), spec.budget.evaluations - iteration)
            pending = [optimizer.ask() for _ in range(ahead)]
            together = [
                (prior_space.learner_config(decoded(p)[0]), p.batch) for p in (proposal, *pending)
            ]
            evaluator.pretrain(together, proposal.resource)
        ask_seconds = time.perf_counter() - started
        config, u = decoded(proposal)
        learner_config = prior_space.learner_config(config)
        resource = _resource_of(optimizer, proposal.resource)
        replayed = (
            journal.replay(evaluator, learner_config, proposal.batch, resource)
            if (journal is not None and journal.replaying)
            else None
        )
        if replayed is None:
            scored = evaluator.validate(learner_config, proposal.batch, **resource)
        else:
            scored = replayed.scored
        started = time.perf_counter()
        if isinstance(optimizer, PredictionsConsumer):
            optimizer.observe_predictions(proposal, scored.predictions)
        optimizer.tell(proposal, scored.valid_loss)
        tell_seconds = time.perf_counter() - started
        if replayed is None:
            optimizer_seconds = ask_seconds + tell_seconds
            elapsed = time.perf_counter() - loop_started
        else:  # its recorded times; the clock goes on from its end
            optimizer_seconds, elapsed = replayed.optimizer_seconds, replayed.elapsed_seconds
            loop_started = time.perf_counter() - elapsed
        if journal is not None and replayed is None:
            journal.record(
                RecordedEvaluation(
                    learner_config, proposal.batch, resource, scored, optimizer_seconds, elapsed
                )
            )
        # with a time budget any evaluation may be the last one
        wanted = (
            spec.outputs.curves
            or iteration == spec.budget.evaluations
            or spec.budget.seconds is not None
        )
        for rule in rules:
            rule.observe(optimizer, iteration, wanted)
        evaluations.append(
            _Evaluation(
                iteration,
                proposal.batch,
                u,
                config,
                learner_config,
                scored,
                optimizer_seconds,
                elapsed,
                proposal.bracket,
            )
        )
        if progress is not None:
            progress(iteration, scored.valid_loss)
    return evaluations


def _batches_networks(spec: RunSpec, optimizer: Optimizer, evaluator: Evaluator) -> bool:
    """Whether ``batch_networks`` trains networks together as one batched model ("auto": when
    the network's device is a GPU): the rungs of a multi-fidelity method on the ``epochs``
    resource (Hyperband, BOHB), or proposals asked ahead of an optimizer whose proposals do
    not depend on what is told (``asks_ahead``: random search)."""
    if spec.execution.batch_networks == "off":
        return False
    if isinstance(optimizer, MultiFidelity):
        if optimizer.resource_kind != "epochs":
            return False
    elif not optimizer.asks_ahead:
        return False
    if spec.execution.batch_networks == "auto":
        device = str(evaluator.learner_settings.get("device", "cpu"))
        return resolve_device(device) == "cuda"
    return True


def _ahead(spec: RunSpec, optimizer: Optimizer, proposal: Proposal) -> int:
    """How many more proposals to ask, after ``proposal`` (the first since every earlier one
    was told), to train their networks together: the rest of its rung for a multi-fidelity
    method (:meth:`~hpo.optimizers.MultiFidelity.rung_left`), up to ``batch_networks_size``
    in all for an ``asks_ahead`` optimizer's full evaluations; the caller caps it by the
    budget."""
    if isinstance(optimizer, MultiFidelity):
        return optimizer.rung_left() if proposal.resource is not None else 0
    full = optimizer.asks_ahead and proposal.resource is None
    return spec.execution.batch_size - 1 if full else 0


def _outcomes(
    spec: RunSpec,
    rules: Mapping[str, SelectionRule],
    trace: Trace,
    scorer: ChoiceScorer,
    optimizer: Optimizer,
    space: Space,
) -> pd.DataFrame:
    n = len(trace.valid_loss)
    reported = population_ends(trace.batch) if optimizer.reports_at_batch_ends else np.ones(n, bool)
    if not spec.outputs.curves:
        reported &= np.arange(n) == n - 1
    records = []
    for method, rule in rules.items():
        for t, choice in enumerate(rule.choices(trace)):
            if choice is None or not reported[t]:
                continue
            test_error, limit_hit, test_seconds = scorer.score(choice, t + 1)
            single = choice.members[0] if choice.is_single else None
            index = None if single is None or single.iteration is None else single.iteration - 1
            records.append(
                {
                    "method": method,
                    "rule": rule.name,
                    "iteration": t + 1,
                    "incumbent_iteration": None if index is None else index + 1,
                    "incumbent_valid_loss": np.nan if index is None else trace.valid_loss[index],
                    "incumbent_selection_loss": (
                        np.nan if index is None else trace.selection_loss[index]
                    ),
                    "learner": None if single is None else space.learner_of(single.config),
                    "n_members": len(choice.members),
                    "members": _members_text(choice),
                    "test_error": test_error,
                    "test_fit_limit_hit": limit_hit,
                    "test_fit_seconds": test_seconds,
                    "config": {} if single is None else single.config,
                }
            )
    columns = {
        "method": "string",
        "rule": "string",
        "iteration": "int64",
        "incumbent_iteration": "Int64",
        "incumbent_valid_loss": "float64",
        "incumbent_selection_loss": "float64",
        "learner": "string",
        "n_members": "int64",
        "members": "string",
        "test_error": "float64",
        "test_fit_limit_hit": "bool",
        "test_fit_seconds": "float64",
    }
    frame = pd.DataFrame(
        {name: pd.Series([r[name] for r in records], dtype=kind) for name, kind in columns.items()}
    )
    for name, column in _param_columns(space, [r["config"] for r in records]).items():
        frame[name] = column
    return frame


def _members_text(choice: Choice) -> str:
    """The members as their trace iterations, repeated by weight when weights are integers
    (``"3,3,7"``), else ``"3:0.5,7:0.5"``; ``pm`` for a never-evaluated configuration."""
    names = ["pm" if m.iteration is None else str(m.iteration) for m in choice.members]
    pairs = list(zip(names, choice.weights, strict=True))
    if all(float(w).is_integer() for w in choice.weights):
        return ",".join(name for name, w in pairs for _ in range(int(w)))
    return ",".join(f"{name}:{w:g}" for name, w in pairs)


def _param_columns(space: Space, configs: list[Mapping[str, Any]]) -> dict[str, pd.Series]:
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


def _trace_frame(evaluations: list[_Evaluation], space: Space) -> pd.DataFrame:
    scored = [e.scored for e in evaluations]
    frame = pd.DataFrame(
        {
            "iteration": pd.Series([e.iteration for e in evaluations], dtype="int64"),
            "batch": pd.Series([e.batch for e in evaluations], dtype="int64"),
            "valid_loss": pd.Series([s.valid_loss for s in scored], dtype="float64"),
            "selection_loss": pd.Series([s.selection_loss for s in scored], dtype="float64"),
            "n_fits": pd.Series([s.n_fits for s in scored], dtype="int64"),
            "fit_limit_hits": pd.Series([s.fit_limit_hits for s in scored], dtype="int64"),
            "constant_fits": pd.Series([s.constant_fits for s in scored], dtype="int64"),
            "learner": pd.Series([space.learner_of(e.config) for e in evaluations], dtype="string"),
            "failure": pd.Series([s.failure for s in scored], dtype="string"),
            "fit_seconds": pd.Series([s.fit_seconds for s in scored], dtype="float64"),
            "optimizer_seconds": pd.Series(
                [e.optimizer_seconds for e in evaluations], dtype="float64"
            ),
            "elapsed_seconds": pd.Series([e.elapsed_seconds for e in evaluations], dtype="float64"),
        }
    )
    _add_resource_columns(frame, evaluations)
    for i, name in enumerate(space.names):
        frame[f"u_{name}"] = pd.Series([float(e.u[i]) for e in evaluations], dtype="float64")
    for name, column in _param_columns(space, [e.config for e in evaluations]).items():
        frame[name] = column
    return frame


def _add_resource_columns(frame: pd.DataFrame, evaluations: list[_Evaluation]) -> None:
    """Partial evaluations (seed 002): the resource asked (NaN for a full evaluation), spent
    (epochs trained after early stopping, or training shares; all folds) and spent so far in
    the run, and Hyperband's bracket. Only runs that have them get these columns, so every
    other run's trace is as before."""
    scored = [e.scored for e in evaluations]
    if any(s.resource is not None or s.resource_spent is not None for s in scored):
        asked = [np.nan if s.resource is None else s.resource for s in scored]
        spent = [np.nan if s.resource_spent is None else s.resource_spent for s in scored]
        frame["resource"] = pd.Series(asked, dtype="float64")
        frame["resource_spent"] = pd.Series(spent, dtype="float64")
        frame["resource_cumulative"] = pd.Series(np.nancumsum(spent), dtype="float64")
    if any(e.bracket is not None for e in evaluations):
        frame["bracket"] = pd.Series([e.bracket for e in evaluations], dtype="Int64")


PREDICTION_COLUMNS = ("model", "split", "fold", "row", "prediction")
PROBABILITY_PREFIX = "proba_"  # proba_<class>: the sidecar's probability columns (seed 003)


def prediction_block(
    model: int,
    kind: str,
    fold: int,
    rows: np.ndarray,
    labels: np.ndarray,
    probabilities: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One model's predicted ``labels`` for ``rows`` of one split (``kind``) and fold, as the
    sidecar's compact columns (layout: README, "Predictions sidecar"). Predicted values of a
    regression model (floats) are kept as float64; labels as int16. ``probabilities``
    (``(len(rows), n_classes)``, seed 003) add one float64 column ``proba_<class>`` per class."""
    regression = np.issubdtype(np.asarray(labels).dtype, np.floating)
    block = {
        "model": np.full(len(rows), model, dtype=np.int32),
        "split": np.full(len(rows), PREDICTION_KINDS[kind], dtype=np.int8),
        "fold": np.full(len(rows), fold, dtype=np.int8),
        "row": rows.astype(np.int32),
        "prediction": labels.astype(np.float64 if regression else np.int16),
    }
    if probabilities is not None:
        for c in range(probabilities.shape[1]):
            block[f"{PROBABILITY_PREFIX}{c}"] = probabilities[:, c].astype(np.float64)
    return block


def _predictions_frame(
    evaluations: list[_Evaluation], evaluator: Evaluator, scorer: ChoiceScorer
) -> pd.DataFrame:
    """Every model's predicted labels (layout: README, "Predictions sidecar")."""
    blocks = []
    selection = evaluator.splits.selection
    for e in evaluations:
        for fold, kept in enumerate(e.scored.predictions):
            model = e.iteration
            blocks.append(
                prediction_block(
                    model, "valid", fold, kept.valid_rows, kept.valid, kept.valid_probabilities
                )
            )
            if len(selection):
                blocks.append(
                    prediction_block(
                        model,
                        "selection",
                        fold,
                        selection,
                        kept.selection,
                        kept.selection_probabilities,
                    )
                )
    test_rows = evaluator.splits.test
    for model_id, result in sorted(scorer.tested.values(), key=lambda item: item[0]):
        blocks.append(
            prediction_block(
                model_id, "test", 0, test_rows, result.predictions, result.probabilities
            )
        )
    return predictions_table(blocks)


def predictions_table(blocks: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """The sidecar table of :func:`prediction_block` blocks, in their order (with the
    probability columns when the blocks carry them)."""
    columns = list(blocks[0]) if blocks else list(PREDICTION_COLUMNS)
    return pd.DataFrame(
        {c: np.concatenate([b[c] for b in blocks]) if blocks else np.empty(0) for c in columns}
    )
