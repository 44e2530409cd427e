"""Per-evaluation resource limits: a function run in a child process that can be stopped.

Seed 004 (Thornton 2014, §3 "resource handling" and §4.1) runs every learner under hard limits,
150 CPU minutes of training and 3 GB of RAM, and records a breach as a failed evaluation (error
100 %, RMSE 1e10) without stopping the run. This module owns that mechanism and nothing else:

* :class:`EvaluationLimits` — the limits (time in CPU or wall seconds, memory in MB, how many
  consecutive failing folds skip the rest), validated at the boundary;
* :class:`IsolatedWorker` — one persistent child process (started from a ``forkserver``, so it
  forks from a clean interpreter, not from the parent's threads) that runs ``fn(*args)`` and
  returns its value. The parent polls the child every ``poll_s`` seconds while it works: its CPU
  time (user + system, all threads) or the wall time against the time limit, and its resident
  memory against the memory limit. A breach kills the child (SIGKILL) and the call returns an
  :class:`IsolatedResult` whose ``failure`` says which limit; the next call starts a fresh
  child. A child that dies on its own (a segfault, the kernel's OOM killer) is a ``crash``
  failure the same way, so nothing the parent holds is lost. A child whose parent is killed
  from outside exits within a second, also in the middle of a fit (a thread of the child
  watches the parent; a fit in C code that holds Python's interpreter lock throughout is
  stopped when it next releases it).

Memory is measured as resident set size (RSS), the closest thing to a JVM heap cap on a Python
process; as a backstop against an allocation faster than the poll, the child's address space
(``RLIMIT_AS``) is capped before each call at its current size plus twice the memory limit, so
that allocation fails inside the child (``MemoryError`` → a ``memory`` failure) instead of
exhausting the machine. A child started with ``start_method="fork"`` begins with its parent's
resident pages in its RSS, so the limit counts them too; the default ``forkserver`` child starts
from a small interpreter with the preloaded libraries. ``benchmarks/isolation.py`` measures the
per-call overhead against an in-process call and the parent's memory over many calls.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psutil

TIME_KINDS = ("cpu", "wall")
FAILURE_KINDS = ("time", "memory", "crash")
PRELOAD = ["numpy", "sklearn", "hpo.learners"]  # imported once in the forkserver


@dataclass(frozen=True)
class EvaluationLimits:
    """Limits on one evaluation (one fit and its predictions) [seed 004 §4.1].

    ``time_s``: seconds of CPU (``time_kind="cpu"``, the seed's) or wall time; ``memory_mb``:
    resident memory; either may be ``None`` (unlimited), but a child process is used whenever
    limits are given. ``max_failed_folds``: after this many consecutive folds that breach a
    limit the remaining folds of the configuration are skipped and count as failed (the seed's
    TPE wrapper, ``maxfailcount = 3``). ``poll_s``: how often the parent checks the child.
    """

    time_s: float | None = None
    memory_mb: float | None = None
    time_kind: str = "cpu"
    max_failed_folds: int = 3
    poll_s: float = 0.01
    start_method: str = "forkserver"  # "fork" inherits the parent's state (tests' learners)

    def __post_init__(self) -> None:
        for name in ("time_s", "memory_mb"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"limits.{name} must be > 0 or null, got {value}")
        if self.time_kind not in TIME_KINDS:
            valid = ", ".join(TIME_KINDS)
            raise ValueError(f"unknown limits.time_kind {self.time_kind!r}; valid choices: {valid}")
        if self.max_failed_folds < 1:
            raise ValueError(f"limits.max_failed_folds must be >= 1, got {self.max_failed_folds}")
        if self.start_method not in ("forkserver", "fork", "spawn"):
            raise ValueError(
                f"unknown limits.start_method {self.start_method!r}; "
                "valid choices: forkserver, fork, spawn"
            )
        if not 0 < self.poll_s <= 1:
            raise ValueError(f"limits.poll_s must be in (0, 1], got {self.poll_s}")


@dataclass(frozen=True)
class IsolatedResult:
    """What a call in the child returned, or why it did not.

    ``failure`` is ``None`` on success, else one of :data:`FAILURE_KINDS` followed by a short
    reason (``"time: 2.0 cpu seconds > limit 1.0"``); ``value`` is then ``None``. An exception
    raised by the function itself is re-raised in the parent, not turned into a failure: the
    function decides what its own errors mean. ``seconds`` is wall time, ``cpu_seconds`` the
    child's CPU time during the call; ``detected_after_s`` is, for a breach, the time between
    the breach being measured and the call returning (the kill and the wait).
    """

    value: Any
    failure: str | None
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    detected_after_s: float = 0.0

    @property
    def kind(self) -> str | None:
        """``"time"``, ``"memory"``, ``"crash"`` or ``None``."""
        return None if self.failure is None else self.failure.split(":", 1)[0]


def _show_each_warning_once() -> None:
    """Print a warning the first time the child meets it (same category, text and place), not
    on every fit: a learner's numerical warning on a degenerate fold otherwise repeats at every
    evaluation (1,567 times in one shard of seed 004's medium profile). Python's own ``once``
    action cannot do it: every ``catch_warnings`` (scikit-learn enters many) clears its registry.
    The warning filters still decide what is shown at all."""
    shown: set[tuple] = set()
    show = warnings.showwarning

    def first_time(message: Any, category: Any, filename: str, lineno: int, *rest: Any) -> None:
        key = (category, str(message), filename, lineno)
        if key not in shown:
            shown.add(key)
            show(message, category, filename, lineno, *rest)

    warnings.showwarning = first_time


def _exit_when_gone(parent: psutil.Process, period_s: float) -> None:
    """Exit the child once ``parent`` (the process that owns the worker) is gone: a parent
    killed from outside cannot stop its child, whose fit would otherwise run on unsupervised
    (no limit is enforced once the parent is gone). ``is_running`` compares the process's
    start time, so a reused process id does not count as the parent."""
    while parent.is_running():
        time.sleep(period_s)
    os._exit(1)


def _child_loop(conn: Any, memory_mb: float | None, parent_pid: int | None = None) -> None:
    """The child: receive ``(fn, args)``, answer ``("ok", value)`` or ``("error", exc)``; with
    ``parent_pid``, exit within a second once that process is gone (:func:`_exit_when_gone`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the child stops
    if parent_pid is not None:
        try:
            parent = psutil.Process(parent_pid)
        except psutil.NoSuchProcess:
            return
        threading.Thread(target=_exit_when_gone, args=(parent, 0.5), daemon=True).start()
    _show_each_warning_once()
    me = psutil.Process()
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        fn, args = message
        if memory_mb is not None:  # backstop: allocation fails here instead of on the machine
            cap = me.memory_info().vms + int(2 * memory_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
        try:
            reply = ("ok", fn(*args))
        except MemoryError:
            reply = (
                "memory",
                f"MemoryError past the address-space backstop ({memory_mb:g} MB x 2)",
            )
        except BaseException as error:  # noqa: BLE001 - sent back and re-raised in the parent
            reply = ("error", error)
        finally:
            if memory_mb is not None:
                resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2)
        try:
            conn.send(reply)
        except Exception as error:  # an unpicklable value: say so instead of hanging the parent
            conn.send(("error", TypeError(f"result cannot be sent back: {error}")))


class IsolatedWorker:
    """One child process that runs calls under :class:`EvaluationLimits` (see the module)."""

    def __init__(self, limits: EvaluationLimits) -> None:
        self.limits = limits
        self._context = multiprocessing.get_context(limits.start_method)
        if limits.start_method == "forkserver":
            self._context.set_forkserver_preload(PRELOAD)
        self._process: Any = None
        self._conn: Any = None
        self._ps: psutil.Process | None = None
        self.restarts = 0
        self.cpu_seconds = 0.0  # CPU time of every call so far, in the children

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_child_loop, args=(child, self.limits.memory_mb, os.getpid()), daemon=True
        )
        process.start()
        child.close()
        self._process, self._conn = process, parent
        self._ps = psutil.Process(process.pid)

    @property
    def pid(self) -> int | None:
        """The current child's process id (``None`` before the first call)."""
        return None if self._process is None else self._process.pid

    def run(self, fn: Callable[..., Any], *args: Any) -> IsolatedResult:
        """``fn(*args)`` in the child under the limits; ``fn`` must be importable (picklable)."""
        result = self._run(fn, *args)
        self.cpu_seconds += result.cpu_seconds
        return result

    def _run(self, fn: Callable[..., Any], *args: Any) -> IsolatedResult:
        if self._process is None or not self._process.is_alive():
            self._start()
        assert self._ps is not None
        cpu_start = _cpu(self._ps)
        started = time.perf_counter()
        self._conn.send((fn, args))
        peak, limits = 0.0, self.limits
        while True:
            if self._conn.poll(limits.poll_s):
                try:
                    status, payload = self._conn.recv()
                except (EOFError, OSError):
                    return self._crashed(started, cpu_start, peak)
                seconds = time.perf_counter() - started
                cpu = _cpu(self._ps) - cpu_start
                if status == "error":
                    raise payload
                if status == "memory":
                    return IsolatedResult(None, f"memory: {payload}", seconds, cpu, peak)
                return IsolatedResult(payload, None, seconds, cpu, peak)
            try:
                cpu = _cpu(self._ps) - cpu_start
                rss = self._ps.memory_info().rss / 2**20
            except psutil.NoSuchProcess:
                return self._crashed(started, cpu_start, peak)
            peak = max(peak, rss)
            elapsed = time.perf_counter() - started
            spent = cpu if limits.time_kind == "cpu" else elapsed
            if limits.time_s is not None and spent > limits.time_s:
                reason = f"time: {spent:.2f} {limits.time_kind} seconds > limit {limits.time_s:g}"
                return self._kill(reason, started, cpu, peak)
            if limits.memory_mb is not None and rss > limits.memory_mb:
                reason = f"memory: resident {rss:.0f} MB > limit {limits.memory_mb:g} MB"
                return self._kill(reason, started, cpu, peak)
            if not self._process.is_alive():
                return self._crashed(started, cpu_start, peak)

    def _kill(self, reason: str, started: float, cpu: float, peak: float) -> IsolatedResult:
        detected = time.perf_counter()
        self._stop(kill=True)
        done = time.perf_counter()
        return IsolatedResult(None, reason, done - started, cpu, peak, done - detected)

    def _crashed(self, started: float, cpu_start: float, peak: float) -> IsolatedResult:
        code = self._process.exitcode if self._process is not None else None
        self._stop(kill=True)
        reason = f"crash: the child process died (exit code {code})"
        return IsolatedResult(None, reason, time.perf_counter() - started, 0.0, peak)

    def _stop(self, kill: bool) -> None:
        if self._process is None:
            return
        if kill:
            self._process.kill()
            self.restarts += 1
        else:
            with contextlib.suppress(OSError):
                self._conn.send(None)
        self._process.join(timeout=5)
        if self._process.is_alive():  # pragma: no cover - a child that ignored SIGKILL
            os.kill(self._process.pid, signal.SIGKILL)
            self._process.join()
        self._conn.close()
        self._process, self._conn, self._ps = None, None, None

    def close(self) -> None:
        """Stop the child (it also exits on its own when the parent goes away)."""
        self._stop(kill=False)

    def __enter__(self) -> IsolatedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close()


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)
