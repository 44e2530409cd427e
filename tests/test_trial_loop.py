"""The one trial loop (experiments/run/trial_loop.py): it stops at the budget in evaluations, at the
budget in seconds (no trial starts after it) or when the optimizer has nothing left to ask, and
charges the optimizer with asking and telling only."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from experiments.run import trial_loop
from experiments.run.trial_loop import run_trials
from hpo.optimizers import Proposal


class FakeClock:
    """A clock only the trials move."""

    def __init__(self) -> None:
        self.now = 0.0

    def spent(self) -> float:
        return self.now


@dataclass
class CountingTrials:
    """Proposes ``available`` trials (then StopIteration); each evaluation advances the clock
    by ``seconds`` and the performance counter by 10 (what the optimizer must not be charged);
    asking and telling advance the counter by 1 each."""

    clock: FakeClock
    counter: list[float]
    available: int = 1_000
    seconds: float = 0.0
    recorded: list[tuple[int, float, float]] = field(default_factory=list)

    def propose(self, iteration: int) -> Proposal:
        self.counter[0] += 1.0
        if iteration > self.available:
            raise StopIteration
        return Proposal(None, iteration, config={"x": iteration})

    def evaluate(self, proposal: Proposal) -> float:
        self.counter[0] += 10.0
        self.clock.now += self.seconds
        return proposal.batch / 100

    def tell(self, proposal: Proposal, result: float) -> float:
        self.counter[0] += 1.0
        return result

    def record(self, iteration: int, proposal: Proposal, result: float, seconds: float) -> None:
        self.recorded.append((iteration, result, seconds))


@pytest.fixture
def trials(monkeypatch: pytest.MonkeyPatch) -> CountingTrials:
    counter = [0.0]
    monkeypatch.setattr(trial_loop.time, "perf_counter", lambda: counter[0])
    return CountingTrials(FakeClock(), counter)


def test_the_loop_runs_its_budget_of_trials_and_charges_asking_and_telling(trials) -> None:
    heard: list[tuple[int, float]] = []
    stopped = run_trials(trials, 5, None, trials.clock, lambda i, loss: heard.append((i, loss)))
    assert stopped == "budget"
    assert [r[0] for r in trials.recorded] == [1, 2, 3, 4, 5]
    assert all(seconds == 2.0 for _, _, seconds in trials.recorded)  # not the evaluation's 10
    assert heard == [(i, i / 100) for i in range(1, 6)]


def test_the_loop_ends_when_the_optimizer_has_nothing_left(trials) -> None:
    trials.available = 3
    assert run_trials(trials, 10, None, trials.clock) == "finished"
    assert len(trials.recorded) == 3


def test_no_trial_starts_once_the_seconds_are_spent(trials) -> None:
    trials.seconds = 0.3  # the fourth trial starts at 0.9 s and ends past the budget
    assert run_trials(trials, 100, 1.0, trials.clock) == "budget"
    assert len(trials.recorded) == 4 and trials.clock.now == pytest.approx(1.2)


@pytest.mark.parametrize(
    ("overrides", "data", "message"),
    [
        (["optimizer=rs", "dataset=sklearn-iris"], "sklearn-diabetes",
         "space 'svm_rbf' is a classification space and dataset 'sklearn-diabetes' a regression "
         "dataset; a regression dataset needs a regression space"),
        (["optimizer=aw_random", "dataset=sklearn-diabetes", "space=autoweka_regression"],
         "sklearn-iris",
         "space 'autoweka_regression' is a regression space and dataset 'sklearn-iris' a "
         "classification dataset; a classification dataset needs a classification space"),
    ],
)  # fmt: skip
def test_both_kinds_of_trials_refuse_data_of_another_task_in_the_same_line(
    overrides: list[str], data: str, message: str
) -> None:
    """Data handed to a run directly (composition refuses the mismatch earlier): the trials on
    folds and the trials over instances give the one check's line."""
    from experiments.configuration.compose import compose_run
    from experiments.run.runner import run
    from hpo.data.catalog import load_dataset

    spec = compose_run([*overrides, "budget=2"])
    with pytest.raises(ValueError) as refused:
        run(spec, load_dataset(data))
    assert str(refused.value) == message
