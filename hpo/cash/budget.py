"""A run's budget in CPU or wall seconds (seed 004 §4.1: 30 CPU hours per run, scaled in the
profiles) or in evaluations, and the clock that every trace row and trajectory point is stamped
with. A budget in seconds makes a run depend on the machine's speed and load; a budget in
evaluations (one evaluation = one configuration on one instance) makes it bit-identical for the
same seed, which is what the determinism tests use."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

BUDGET_KINDS = ("cpu", "wall", "evaluations")


@dataclass(frozen=True)
class TimeBudget:
    """``seconds`` of CPU time (the parent's and its fit children's) or of wall time, or a
    number of evaluations (``kind="evaluations"``)."""

    seconds: float
    kind: str = "cpu"

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"budget must be > 0 seconds (or evaluations), got {self.seconds}")
        if self.kind not in BUDGET_KINDS:
            raise ValueError(
                f"unknown budget kind {self.kind!r}; valid choices: {', '.join(BUDGET_KINDS)}"
            )


class Clock:
    """Seconds spent since the clock started, of the budget's kind. ``child_cpu`` reports the
    CPU seconds spent in fit children
    (:attr:`hpo.evaluation.evaluator.Evaluator.child_cpu_seconds`)."""

    def __init__(self, kind: str, child_cpu: Callable[[], float] = lambda: 0.0) -> None:
        self.kind = kind
        self.child_cpu = child_cpu
        self._wall0 = time.perf_counter()
        self._cpu0 = time.process_time()
        self._child0 = child_cpu()
        self.evaluations = 0

    def wall(self) -> float:
        return time.perf_counter() - self._wall0

    def cpu(self) -> float:
        return time.process_time() - self._cpu0 + self.child_cpu() - self._child0

    def tick(self) -> None:
        """One more evaluation done."""
        self.evaluations += 1

    def spent(self) -> float:
        if self.kind == "evaluations":
            return float(self.evaluations)
        return self.cpu() if self.kind == "cpu" else self.wall()
