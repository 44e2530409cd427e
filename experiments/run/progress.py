"""What a long command tells the person watching it: a progress bar on a terminal, else (a log, a
pipe) one flushed line every ``HPO_PROGRESS_SECONDS`` seconds (default 30), written by a
background thread so that a line comes even while one long evaluation or run is under way.

:class:`RunProgress` follows one run's evaluations (``run.py``); :class:`StatusLines` prints any
``describe()`` at the steady interval (sweeps use it with their counts). Neither touches a run's
results.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from experiments.configuration.config import UsageError

INTERVAL_VARIABLE = "HPO_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 30.0


def interval_seconds() -> float:
    """Seconds between progress lines: ``$HPO_PROGRESS_SECONDS``, else 30 (a value that is not a
    number of seconds > 0 is a :class:`UsageError`)."""
    value = os.environ.get(INTERVAL_VARIABLE)
    if value is None:
        return DEFAULT_INTERVAL
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise UsageError(f"{INTERVAL_VARIABLE} must be a number of seconds > 0, got {value!r}")
    return seconds


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stderr, where progress goes) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``1 h 02 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def remaining(elapsed: float, done: int, total: int) -> str:
    """``about 4 min 10 s left`` at the pace so far (nothing to say before the first one)."""
    if done <= 0 or done >= total:
        return ""
    return f", about {duration(elapsed / done * (total - done))} left"


class StatusLines:
    """A context manager printing ``describe()`` to ``stream`` every ``interval`` seconds (first
    line after one interval), flushed; the thread ends with the block, and a block that ends
    without an error prints one last line (a run shorter than the interval says where it
    ended)."""

    def __init__(
        self, describe: Callable[[], str], interval: float, stream: TextIO | None = None
    ) -> None:
        self.describe, self.interval = describe, interval
        self.stream = sys.stderr if stream is None else stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="progress-lines", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            print(self.describe(), file=self.stream, flush=True)

    def __enter__(self) -> StatusLines:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        if kind is None:
            print(self.describe(), file=self.stream, flush=True)


class RunProgress:
    """One run's evaluations for :class:`StatusLines` (and the terminal's bar): called after
    every evaluation with (iteration, validation loss), as ``experiments.run.runner.run``'s
    ``progress``. A resumed run's first ``replayed`` evaluations come from its journal
    (:mod:`experiments.run.journal`): they are said to be replayed, and the time left is estimated
    from the pace of the evaluations after them."""

    def __init__(
        self,
        label: str,
        total: int,
        show_loss: Callable[[float], str],
        clock: Callable[[], float] = time.perf_counter,
        replayed: int = 0,
    ) -> None:
        self.label, self.total, self.show_loss, self.clock = label, total, show_loss, clock
        self.started = self.paced_from = clock()
        self.done = 0
        self.replayed = replayed
        self.best = math.inf

    def __call__(self, iteration: int, loss: float) -> None:
        self.done = iteration
        self.best = min(self.best, loss)
        if iteration <= self.replayed:  # the pace is measured from the replay's end
            self.paced_from = self.clock()

    def best_text(self) -> str:
        return f"best validation {self.show_loss(self.best)}" if self.done else "no evaluation yet"

    def line(self) -> str:
        """``rs sklearn-iris: 37/200 evaluations, best validation 3.12%, 1 min 04 s elapsed,
        about 4 min 10 s left``; once the evaluations are done, what the run does next."""
        elapsed = self.clock() - self.started
        head = (
            f"{self.label}: {self.done}/{self.total} evaluations, {self.best_text()}, "
            f"{duration(elapsed)} elapsed"
        )
        if self.done >= self.total:
            return f"{head}; testing the chosen models"
        if self.done < self.replayed:
            return f"{head}; replaying {self.replayed} recorded evaluations"
        return head + remaining(
            self.clock() - self.paced_from, self.done - self.replayed, self.total - self.replayed
        )
