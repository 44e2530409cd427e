"""How a command ends on Ctrl-C (SIGINT) or SIGTERM: the signal becomes :class:`Interrupted`,
which unwinds the run like any error (its clean-ups run, nothing half-written is kept), and the
command prints one line and exits with the shell's code for the signal, 128 + its number (130 for
SIGINT, 143 for SIGTERM). While a single run is inside a long C call (a libsvm fit), the main thread
cannot handle the signal; :class:`HardExit` then ends the process from a watchdog thread within a
grace period, after the run's own clean-up."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
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


_handled = threading.Event()  # the main thread has turned a signal into Interrupted
_writing = threading.Lock()  # held while results are written: the watchdog waits for it


def _raise(signum: int, frame: FrameType | None) -> None:
    _handled.set()
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


# How long a signal may wait for the main thread before the watchdog ends the process: the
# main thread handles a signal only between Python instructions, so a long fit inside a C
# library (libsvm on a large dataset runs for minutes) would otherwise delay the exit by that long.
GRACE_SECONDS = 2.0


class HardExit:
    """While active, a SIGINT or SIGTERM that the main thread has not handled within
    ``grace`` seconds (it is inside a long C call) ends the process from a watchdog thread:
    ``cleanup`` runs (it must leave nothing half-made, as the main thread's ``except`` would),
    the one line is printed and the process exits with the signal's code. The C-level signal
    handler writes the signal's number to a pipe (:func:`signal.set_wakeup_fd`) even while the
    main thread is busy, which wakes the watchdog."""

    def __init__(
        self,
        cleanup: Callable[[Interrupted], None],
        grace: float = GRACE_SECONDS,
    ) -> None:
        self.cleanup = cleanup
        self.grace = grace
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._previous_fd = -1
        self._closed = threading.Event()

    def __enter__(self) -> HardExit:
        _handled.clear()
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="hard-exit", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        signal.set_wakeup_fd(self._previous_fd)
        self._closed.set()
        os.close(self._write_fd)  # the watchdog's read returns b"" and it ends

    def _watch(self) -> None:
        while True:
            data = os.read(self._read_fd, 1)
            if not data or self._closed.is_set():
                os.close(self._read_fd)
                return
            if data[0] not in SIGNALS or _handled.wait(self.grace):
                continue  # another signal, or the main thread has it in hand
            if self._closed.is_set():
                continue
            stop = Interrupted(data[0])
            with _writing:  # a results file being written is finished first
                try:
                    self.cleanup(stop)
                finally:
                    print(stop.line(), file=sys.stderr, flush=True)
                    os._exit(stop.exit_code)


def writing_results() -> threading.Lock:
    """Held while a results file is written, so that :class:`HardExit` never ends the process
    in the middle of a write (the write is short; the watchdog waits for it)."""
    return _writing
