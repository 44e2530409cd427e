"""The one trial loop every run goes through: ask the optimizer for a proposal, evaluate it, tell
the optimizer its loss, record the trial — until the budget in evaluations is spent, the budget
in seconds has passed (no trial starts after it; the one running then is finished) or the
optimizer has nothing left to ask (``StopIteration``, a finished grid).

What a trial is evaluated on is the :class:`Trials` the run hands it: a proposal's folds of its
batch's split (:class:`experiments.run.runner.FoldTrials`, every study but Thornton 2014's) or one
instance a racing optimizer asked for (:class:`experiments.run.instances.InstanceTrials`). The loop
times the optimizer's share of each trial (asking and telling) and nothing else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from hpo.evaluation.clock import Clock
from hpo.optimizers import Proposal

Result = TypeVar("Result")
# Called after every trial with (its number, the loss told).
Progress = Callable[[int, float], None]


class Trials(Protocol[Result]):
    """How a run's trials are proposed, evaluated, told and recorded."""

    def propose(self, iteration: int) -> Proposal:
        """The proposal of trial ``iteration`` (``StopIteration`` when the optimizer is done)."""

    def evaluate(self, proposal: Proposal) -> Result:
        """The proposal's evaluation."""

    def tell(self, proposal: Proposal, result: Result) -> float:
        """Tell the optimizer the result; the loss told."""

    def record(
        self, iteration: int, proposal: Proposal, result: Result, optimizer_seconds: float
    ) -> None:
        """Keep the finished trial (``optimizer_seconds``: its asking and telling)."""


def run_trials(
    trials: Trials[Result],
    evaluations: int,
    seconds: float | None,
    clock: Clock,
    progress: Progress | None = None,
) -> str:
    """Run at most ``evaluations`` trials, starting none once ``seconds`` of ``clock`` have
    passed; ``progress`` hears of every trial (it cannot change the results). Why the loop
    stopped: ``budget`` (evaluations or seconds spent) or ``finished`` (the optimizer had no
    more to ask)."""
    for iteration in range(1, evaluations + 1):
        if seconds is not None and clock.spent() >= seconds:
            break
        started = time.perf_counter()
        try:
            proposal = trials.propose(iteration)
        except StopIteration:
            return "finished"
        asked = time.perf_counter() - started
        result = trials.evaluate(proposal)
        started = time.perf_counter()
        loss = trials.tell(proposal, result)
        told = time.perf_counter() - started
        trials.record(iteration, proposal, result, asked + told)
        if progress is not None:
            progress(iteration, loss)
    return "budget"
