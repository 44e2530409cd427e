"""A run's time budget clock: seconds of wall time, or of CPU time of the run's process and its
fit children (seed 004 §4.1 budgets CPU hours)."""

from __future__ import annotations

import time
from collections.abc import Callable

TIME_BUDGET_KINDS = ("wall", "cpu")  # a run's time_budget in seconds of wall or CPU time


class Clock:
    """Seconds spent since the clock started, of a time budget's kind: ``wall``, or ``cpu`` (this
    process's and its fit children's, ``child_cpu``: :attr:`Evaluator.child_cpu_seconds`; seed
    004 §4.1 budgets CPU hours)."""

    def __init__(self, kind: str = "wall", child_cpu: Callable[[], float] = lambda: 0.0) -> None:
        if kind not in TIME_BUDGET_KINDS:
            raise ValueError(
                f"unknown time budget kind {kind!r}; valid choices: {', '.join(TIME_BUDGET_KINDS)}"
            )
        self.kind = kind
        self.child_cpu = child_cpu
        self._wall0 = time.perf_counter()
        self._cpu0 = time.process_time()
        self._child0 = child_cpu()

    def wall(self) -> float:
        return time.perf_counter() - self._wall0

    def cpu(self) -> float:
        return time.process_time() - self._cpu0 + self.child_cpu() - self._child0

    def spent(self) -> float:
        """Seconds of the clock's kind."""
        return self.cpu() if self.kind == "cpu" else self.wall()
