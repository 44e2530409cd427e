"""A single run's journal: its evaluations appended one by one, so that an interrupted run resumes.

With ``journal=true`` (``run.py``), every evaluation's validation is appended to
``<results file>.journal`` as it finishes (pickled, flushed and synced, so that at most the one
being written is lost when the process is killed). Running the same command again replays the
journal: the optimizer asks as before, and each of the first recorded evaluations is answered
from the journal instead of fitting again, after checking that it is the configuration, batch and
resource that was recorded. The optimizer, the rules and the evaluator's cache then hold what they
held when the run stopped, and the run goes on; its results are those of a run that was never
interrupted (``tests/test_journal.py``), timing columns aside: replayed evaluations keep their
recorded times, and ``elapsed_seconds`` goes on from the last recorded one, so it counts the
evaluations' time and not the replay's. The journal is removed once the results file is written.

What is replayed is what the optimizer saw, so the run's determinism is what makes this work:
a run whose proposals depend on anything else is refused (:func:`check_journaled`): a time
budget (how many evaluations fit depends on the clock), multi-fidelity optimizers (their
networks resume from checkpoint files the journal does not keep), ``batch_networks`` (trains
ahead of the asks) and the instance loop (its races are not a sequence of validations). A
journal written by another code revision, or by another run, is refused with one line.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

from experiments.configuration.spec import RunSpec
from experiments.run.results import provenance
from experiments.run.runner import RecordedEvaluation
from hpo.evaluation.evaluator import Evaluator
from hpo.optimizers import MultiFidelity, optimizer_class

FORMAT = 1


class JournalError(ValueError):
    """A journal that cannot be resumed from (another run's, another revision's, or one that
    disagrees with what the run proposes)."""


def journal_path(results_path: Path) -> Path:
    """Where the journal of the run whose results go to ``results_path`` is kept."""
    return results_path.with_name(results_path.name + ".journal")


def check_journaled(spec: RunSpec) -> None:
    """Refuse, in one line, a run that a journal cannot resume exactly (module docstring)."""
    reasons = []
    cls = optimizer_class(spec.method.optimizer)
    if spec.budget.seconds is not None:
        reasons.append("it has a time budget (how many evaluations fit depends on the clock)")
    if issubclass(cls, MultiFidelity):
        reasons.append(
            f"optimizer {spec.method.optimizer!r} is multi-fidelity (its networks resume from "
            "checkpoints the journal does not keep)"
        )
    if spec.execution.batch_networks != "off":
        reasons.append("batch_networks trains networks ahead of the optimizer's asks")
    if cls.races_instances:
        reasons.append(f"optimizer {spec.method.optimizer!r} races configurations over instances")
    if reasons:
        raise JournalError(f"journal=true cannot resume this run: {'; '.join(reasons)}")


class Journal:
    """The evaluations of one run, as recorded so far, and the file new ones are appended to.

    ``run_name`` is the run's results file name (its identity: dataset, method, protocol, seed,
    repetition and configuration hash); with the code revision it is the journal's header."""

    def __init__(self, path: Path, run_name: str) -> None:
        self.path = path
        self._header = {"format": FORMAT, "run": run_name, "revision": _revision()}
        self.entries: list[RecordedEvaluation] = self._read() if path.exists() else []
        self._replayed = 0

    def _read(self) -> list[RecordedEvaluation]:
        entries: list[RecordedEvaluation] = []
        with self.path.open("rb") as stream:
            try:
                header = pickle.load(stream)
            except (EOFError, pickle.UnpicklingError):
                header = None  # killed while writing the header: nothing was recorded
            if header is not None and header != self._header:
                raise JournalError(self._foreign(header))
            good = stream.tell()
            while True:
                try:
                    entry = pickle.load(stream)
                except EOFError:
                    break
                except (pickle.UnpicklingError, ValueError, AttributeError, IndexError):
                    break  # the last record, cut short when the process was killed
                entries.append(entry)
                good = stream.tell()
        with self.path.open("r+b") as stream:
            stream.truncate(good if header is not None else 0)
        return entries

    def _foreign(self, header: Any) -> str:
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            what = "is not a journal this code can read"
        elif header.get("run") != self._header["run"]:
            what = f"belongs to another run ({header.get('run')})"
        else:
            what = (
                f"was written by code revision {header.get('revision')}, this checkout is "
                f"{self._header['revision']}"
            )
        return f"journal {self.path} {what}; delete it to start the run over"

    @property
    def replaying(self) -> bool:
        """Whether the next evaluation is answered from the journal."""
        return self._replayed < len(self.entries)

    def replay(
        self, evaluator: Evaluator, config: dict[str, Any], batch: int, resource: dict[str, Any]
    ) -> RecordedEvaluation:
        """The next recorded evaluation, after checking it is of ``config`` on ``batch`` with
        ``resource``; the evaluator's cache learns it as :meth:`Evaluator.validate` would have."""
        entry = self.entries[self._replayed]
        if (entry.config, entry.batch, entry.resource) != (config, batch, resource):
            raise JournalError(
                f"journal {self.path}: evaluation {self._replayed + 1} was of {entry.config} on "
                f"batch {entry.batch}, the run now proposes {config} on batch {batch}; delete "
                "the journal to start the run over"
            )
        evaluator.remember(config, batch, entry.scored, **resource)
        self._replayed += 1
        return entry

    def record(self, entry: RecordedEvaluation) -> None:
        """Append one finished evaluation (on disk before this returns)."""
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as stream:
            if new:
                pickle.dump(self._header, stream, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(entry, stream, protocol=pickle.HIGHEST_PROTOCOL)
            stream.flush()
            os.fsync(stream.fileno())
        self.entries.append(entry)
        self._replayed = len(self.entries)

    def remove(self) -> None:
        """Delete the journal (its run's results are written)."""
        self.path.unlink(missing_ok=True)


def _revision() -> str:
    return provenance()["git_revision"]
