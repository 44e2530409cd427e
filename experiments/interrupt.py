"""How a command ends on Ctrl-C (SIGINT) or SIGTERM: the signal becomes :class:`Interrupted`,
which unwinds the run like any error (its clean-ups run, nothing half-written is kept), and the
command prints one line and exits with the shell's code for the signal, 128 + its number (130 for
SIGINT, 143 for SIGTERM)."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType, TracebackType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A signal asked the command to stop (a ``BaseException``, like ``KeyboardInterrupt``, so
    that ``except Exception`` in a run does not swallow it). ``outcome`` is what the command
    says of its results (set where that is known, e.g. by the single run)."""

    def __init__(self, signum: int) -> None:
        self.signal = signal.Signals(signum)
        self.outcome = "nothing written; run the same command again to start over"
        super().__init__(self.signal.name)

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signal)

    def line(self) -> str:
        return f"interrupted ({self.signal.name}): {self.outcome}"


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


def _last_resort(
    kind: type[BaseException], error: BaseException, traceback: TracebackType | None
) -> None:
    """An :class:`Interrupted` no ``except`` caught (e.g. raised while modules load, before
    anything is written) is its one line and exit code too, not a traceback."""
    if not isinstance(error, Interrupted):
        sys.__excepthook__(kind, error, traceback)
        return
    print(error.line(), file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(error.exit_code)  # an exception hook cannot choose the exit code otherwise


def raise_on_signals() -> None:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` in this (main) thread; one that is not
    caught ends the process with :meth:`Interrupted.line` and its code (no traceback)."""
    for signum in SIGNALS:
        signal.signal(signum, _raise)
    sys.excepthook = _last_resort


def exit_on_interrupt(stop: Interrupted) -> None:
    """The one line on stderr, then exit with the signal's code."""
    print(stop.line(), file=sys.stderr, flush=True)
    sys.exit(stop.exit_code)
