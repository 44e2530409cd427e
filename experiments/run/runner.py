"""One optimization run, from a plain :class:`RunSpec` to its results tables.

Data flow, one trial at a time through :mod:`experiments.run.trial_loop`: dataset → outer
split → ``optimizer.ask()`` → the protocol gives the folds for this batch → the
configuration's learner is fitted and scored (:mod:`hpo.evaluation.evaluator`) →
``optimizer.tell(validation loss)`` → one trace row. Then every selection rule reads the trace
and returns a choice per iteration (one member, or several); each distinct member is retrained on
all non-test data and tested once (cached by configuration), a choice of several members is
scored by their majority vote, which gives the test-error-versus-iteration curves of every rule
for free. With ``predictions`` the run also returns every model's predicted labels (the
predictions sidecar, :mod:`experiments.run.results`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from experiments.configuration.spaces import check_space_task
from experiments.configuration.spec import RunSpec
from experiments.run.instances import run_on_instances
from experiments.run.run_tables import (
    Evaluation,
    RunResult,
    outcome_table,
    predictions_frame,
    trace_table,
)
from experiments.run.trial_loop import Progress, run_trials
from hpo import seeding
from hpo.data.catalog import Dataset, load_dataset
from hpo.evaluation.choices import ChoiceScorer
from hpo.evaluation.clock import Clock
from hpo.evaluation.evaluator import Evaluator, Validation
from hpo.evaluation.objective import make_objective
from hpo.learners import (
    check_learner_settings,
    learner_resources,
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
from hpo.records import Trace
from hpo.rules.final_selection import SelectionRule
from hpo.rules.registry import make_rule
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Space
from hpo.stages import FinishedLoop, run_stages


@dataclass(frozen=True)
class RecordedEvaluation:
    """One evaluation as a journal keeps it (:mod:`experiments.run.journal`): what was evaluated,
    its validation and its times."""

    config: dict[str, Any]  # the learner's configuration
    batch: int
    resource: dict[str, Any]  # the evaluator's resource arguments (empty for a full evaluation)
    scored: Validation
    optimizer_seconds: float
    elapsed_seconds: float


class EvaluationLog(Protocol):
    """Where the loop records its evaluations and, on a resumed run, replays the recorded ones
    from (:class:`experiments.run.journal.Journal`)."""

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


def run(
    spec: RunSpec,
    data: Dataset | None = None,
    data_dir: str | None = None,
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> RunResult:
    """Run ``spec`` through the one trial loop (:mod:`experiments.run.trial_loop`): its proposals
    scored on their folds (:func:`run_on_folds`), or, for an optimizer that races
    configurations over instances (seed 004's), each on the instance it names
    (:func:`experiments.run.instances.run_on_instances`). ``progress`` (e.g. a progress bar)
    hears of every evaluation; it cannot change the results. A ``journal`` (proposals on folds only,
    :func:`experiments.run.journal.check_journaled`) records the evaluations and resumes from
    those it holds."""
    if optimizer_class(spec.method.optimizer).races_instances:
        return run_on_instances(spec, data, data_dir, progress)
    return run_on_folds(spec, data, data_dir, progress, journal)


def run_on_folds(
    spec: RunSpec,
    data: Dataset | None = None,
    data_dir: str | None = None,
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> RunResult:
    """A run of every study but Thornton 2014's: its trials (:class:`FoldTrials`) through the
    one trial loop, each proposal scored on the folds of its batch's split; then every rule's
    choices are tested and the post-run stages run."""
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
    outcomes = outcome_table(spec, setup.rules, trace, scorer, setup.optimizer, space)
    predictions = (
        predictions_frame(evaluations, evaluator, scorer) if spec.outputs.predictions else None
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
    return RunResult(trace_table(evaluations, space), outcomes, predictions, provenance, stage_rows)


def _set_up(spec: RunSpec, data: Dataset) -> _Setup:
    """The run's space, optimizer, rules and evaluator, each checked against the others (a
    space for another task, a rule the optimizer cannot serve, a resource a learner cannot
    train by: one line each, before any work)."""
    prior_space = spec.task.prior_space
    space = prior_space.space
    check_space_task(space, data.task, data.name)
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


class _Proposals:
    """Where the loop's proposals come from: the optimizer's asks, and with ``batch_networks``
    the proposals already fixed asked ahead, their networks trained together first
    (:meth:`Evaluator.pretrain`)."""

    def __init__(
        self, spec: RunSpec, optimizer: Optimizer, prior_space: PriorSpace, evaluator: Evaluator
    ) -> None:
        self.spec, self.optimizer = spec, optimizer
        self.prior_space, self.evaluator = prior_space, evaluator
        self.batches = _batches_networks(spec, optimizer, evaluator)
        self.pending: list[Proposal] = []  # proposals asked ahead

    def decoded(self, proposal: Proposal) -> tuple[dict[str, Any], np.ndarray]:
        """The proposal's configuration and its point of the unit cube."""
        space = self.prior_space.space
        if proposal.config is not None:
            return dict(proposal.config), space.encode(proposal.config)
        return space.decode(proposal.u), np.asarray(proposal.u, dtype=float)

    def next(self, iteration: int) -> Proposal:
        """The proposal of ``iteration`` (raises StopIteration when the optimizer is done)."""
        asked = not self.pending  # not one asked ahead
        proposal = self.pending.pop(0) if self.pending else self.optimizer.ask()
        if self.batches and asked:
            left = self.spec.budget.evaluations - iteration
            ahead = min(_ahead(self.spec, self.optimizer, proposal), left)
            self.pending = [self.optimizer.ask() for _ in range(ahead)]
            together = [
                (self.prior_space.learner_config(self.decoded(p)[0]), p.batch)
                for p in (proposal, *self.pending)
            ]
            self.evaluator.pretrain(together, proposal.resource)
        return proposal


@dataclass(frozen=True)
class _Scored:
    """A proposal's evaluation on its folds: the configuration, its point of the unit cube, the
    learner's configuration, the evaluator's resource arguments, its validation and, when a
    journal answered it, the recorded evaluation."""

    config: dict[str, Any]
    u: np.ndarray
    learner_config: dict[str, Any]
    resource: dict[str, Any]
    scored: Validation
    replayed: RecordedEvaluation | None


class FoldTrials:
    """The trials of every study but Thornton 2014's
    (:func:`experiments.run.trial_loop.run_trials`): a proposal is scored on the folds of its
    batch's split; rules observe the optimizer after every trial. With a ``journal`` its
    recorded evaluations answer the first proposals and every new one is appended to it
    (:mod:`experiments.run.journal`)."""

    def __init__(
        self,
        spec: RunSpec,
        optimizer: Optimizer,
        prior_space: PriorSpace,
        evaluator: Evaluator,
        rules: list[SelectionRule],
        journal: EvaluationLog | None = None,
    ) -> None:
        self.loop_started = time.perf_counter()
        self.spec, self.optimizer, self.rules, self.journal = spec, optimizer, rules, journal
        self.prior_space, self.evaluator = prior_space, evaluator
        self.proposals = _Proposals(spec, optimizer, prior_space, evaluator)
        self.evaluations: list[Evaluation] = []

    def propose(self, iteration: int) -> Proposal:
        return self.proposals.next(iteration)

    def evaluate(self, proposal: Proposal) -> _Scored:
        config, u = self.proposals.decoded(proposal)
        learner_config = self.prior_space.learner_config(config)
        resource = _resource_of(self.optimizer, proposal.resource)
        replayed = _replayed(self.journal, self.evaluator, learner_config, proposal.batch, resource)
        scored = (
            self.evaluator.validate(learner_config, proposal.batch, **resource)
            if replayed is None
            else replayed.scored
        )
        return _Scored(config, u, learner_config, resource, scored, replayed)

    def tell(self, proposal: Proposal, result: _Scored) -> float:
        """Tell the optimizer the proposal's validation (and its predictions, to one that reads
        them)."""
        if isinstance(self.optimizer, PredictionsConsumer):
            self.optimizer.observe_predictions(proposal, result.scored.predictions)
        self.optimizer.tell(proposal, result.scored.valid_loss)
        return result.scored.valid_loss

    def record(
        self, iteration: int, proposal: Proposal, result: _Scored, optimizer_seconds: float
    ) -> None:
        if result.replayed is None:
            elapsed = time.perf_counter() - self.loop_started
        else:  # its recorded times; the clock goes on from its end
            optimizer_seconds, elapsed = (
                result.replayed.optimizer_seconds,
                result.replayed.elapsed_seconds,
            )
            self.loop_started = time.perf_counter() - elapsed
        if self.journal is not None and result.replayed is None:
            self.journal.record(
                RecordedEvaluation(result.learner_config, proposal.batch, result.resource,
                                   result.scored, optimizer_seconds, elapsed)
            )  # fmt: skip
        _observe(self.spec, self.optimizer, self.rules, iteration)
        self.evaluations.append(
            Evaluation(iteration, proposal.batch, result.u, result.config, result.learner_config,
                       result.scored, optimizer_seconds, elapsed, proposal.bracket)
        )  # fmt: skip


def _optimize(
    spec: RunSpec,
    optimizer: Optimizer,
    prior_space: PriorSpace,
    evaluator: Evaluator,
    rules: list[SelectionRule],
    progress: Progress | None = None,
    journal: EvaluationLog | None = None,
) -> list[Evaluation]:
    """The run's trials (:class:`FoldTrials`) through the one trial loop.

    With ``spec.budget.seconds`` the loop starts no evaluation once that many seconds of
    ``spec.budget.clock`` (wall, or CPU of this process and its fit children) have passed,
    so a run ends within one evaluation of its time budget (``spec.budget.evaluations`` still
    caps the number of evaluations)."""
    trials = FoldTrials(spec, optimizer, prior_space, evaluator, rules, journal)
    clock = Clock(spec.budget.clock, lambda: evaluator.child_cpu_seconds)
    run_trials(trials, spec.budget.evaluations, spec.budget.seconds, clock, progress)
    return trials.evaluations


def _replayed(
    journal: EvaluationLog | None,
    evaluator: Evaluator,
    learner_config: dict[str, Any],
    batch: int,
    resource: dict[str, Any],
) -> RecordedEvaluation | None:
    """The journal's recorded evaluation of this proposal while it replays, else None."""
    if journal is None or not journal.replaying:
        return None
    return journal.replay(evaluator, learner_config, batch, resource)


def _observe(
    spec: RunSpec, optimizer: Optimizer, rules: list[SelectionRule], iteration: int
) -> None:
    """Every rule observes the optimizer after ``iteration``; it computes its choice where an
    outcome row may be written (every iteration with curves, the last, or any under a time
    budget, where any evaluation may be the last one)."""
    wanted = (
        spec.outputs.curves
        or iteration == spec.budget.evaluations
        or spec.budget.seconds is not None
    )
    for rule in rules:
        rule.observe(optimizer, iteration, wanted)


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
