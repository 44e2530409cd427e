"""A run's journal (``journal=true``, :mod:`experiments.run.journal`): an interrupted run resumes
from its recorded evaluations and ends with the results of a run never interrupted, bit for bit
(timing columns aside); a journal cut short mid-record, another run's, another revision's or one
that disagrees with the run's proposals is handled as the module says; runs a journal cannot
resume exactly are refused in one line."""

from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.spec import RunSpec
from experiments.run.interrupt import Interrupted
from experiments.run.journal import Journal, JournalError, check_journaled, journal_path
from experiments.run.results import run_filename
from experiments.run.runner import _set_up, run
from experiments.run.single import run_and_save
from hpo.data.catalog import load_dataset
from hpo.optimizers.base import Proposal
from hpo.optimizers.random_search import RandomSearch
from runfiles.files import bit_differences, without_timing

REPO = Path(__file__).resolve().parents[1]


def _spec(optimizer: str = "gp_r", budget: int = 8, **overrides: object) -> RunSpec:
    return compose_run(
        [f"optimizer={optimizer}", "dataset=sklearn-wine", f"budget={budget}", "seed=5"]
        + [f"{key}={value}" for key, value in overrides.items()]
    )


def _interrupted_at(iteration: int, pause: float = 0.0):
    """A progress callback that stops the run after ``iteration`` evaluations, waiting ``pause``
    seconds after each (time the recorded evaluations' clock counts and a replay does not)."""

    def progress(done: int, loss: float) -> None:
        time.sleep(pause)
        if done == iteration:
            raise Interrupted(signal.SIGINT)

    return progress


def _run_interrupted(spec, path: Path, data, stop_at: int, pause: float = 0.0) -> Journal:
    journal = Journal(journal_path(path), path.name)
    with pytest.raises(Interrupted):
        run(spec, data=data, progress=_interrupted_at(stop_at, pause), journal=journal)
    return journal


@pytest.fixture(scope="module")
def wine():
    return load_dataset("sklearn-wine")


def _ask_three_points_in_turn(self: RandomSearch) -> Proposal:
    """Random search that proposes again what it proposed before (a cache hit after a resume)."""
    return Proposal(u=np.full(self.space.dim, (1 + len(self.y) % 3) / 4), batch=len(self.y) + 1)


@pytest.mark.parametrize("optimizer", ["gp_r", "rs", "rs_repeating"])
def test_a_resumed_run_writes_what_an_uninterrupted_run_writes(
    tmp_path: Path, wine, optimizer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if optimizer == "rs_repeating":
        monkeypatch.setattr(RandomSearch, "ask", _ask_three_points_in_turn)
    spec = _spec(optimizer.removesuffix("_repeating"))
    straight = run_and_save(spec, tmp_path / "straight" / run_filename(spec), data=wine)
    path = tmp_path / "resumed" / run_filename(spec)
    journal = _run_interrupted(spec, path, wine, stop_at=5, pause=0.3)
    assert len(journal.entries) == 5 and journal.path.exists() and not path.exists()

    resumed = Journal(journal_path(path), path.name)
    assert len(resumed.entries) == 5
    run_and_save(spec, path, data=wine, journal=resumed)
    assert not journal_path(path).exists()  # removed once the results are written
    a, b = (without_timing(pd.read_parquet(p)) for p in (straight, path))
    assert bit_differences(a, b) == []
    elapsed = pd.read_parquet(path).groupby("iteration")["elapsed_seconds"].first()
    assert elapsed.iloc[:5].tolist() == [e.elapsed_seconds for e in journal.entries]
    assert elapsed.is_monotonic_increasing  # goes on from the recorded evaluations' time


def test_a_record_cut_short_is_dropped_and_the_run_still_resumes(tmp_path: Path, wine) -> None:
    spec = _spec("gp_r")
    straight = run_and_save(spec, tmp_path / "straight" / run_filename(spec), data=wine)
    path = tmp_path / "resumed" / run_filename(spec)
    journal = _run_interrupted(spec, path, wine, stop_at=4)
    size = journal.path.stat().st_size
    with journal.path.open("r+b") as stream:  # killed while writing the 4th record
        stream.truncate(size - 7)
    resumed = Journal(journal_path(path), path.name)
    assert len(resumed.entries) == 3
    with pytest.raises(Interrupted):  # interrupted again: the cut record is gone, not in between
        run(spec, data=wine, progress=_interrupted_at(6), journal=resumed)
    resumed = Journal(journal_path(path), path.name)
    assert len(resumed.entries) == 6
    run_and_save(spec, path, data=wine, journal=resumed)
    a, b = (without_timing(pd.read_parquet(p)) for p in (straight, path))
    assert bit_differences(a, b) == []


def test_another_runs_or_revisions_journal_is_refused(tmp_path: Path, wine) -> None:
    spec = _spec("gp_r")
    path = tmp_path / run_filename(spec)
    _run_interrupted(spec, path, wine, stop_at=2)
    with pytest.raises(JournalError, match="belongs to another run"):
        Journal(journal_path(path), "another-run.parquet")
    with journal_path(path).open("rb") as stream:
        header = pickle.load(stream)
        rest = stream.read()
    journal_path(path).write_bytes(pickle.dumps({**header, "revision": "0123abc"}) + rest)
    with pytest.raises(JournalError, match="written by code revision 0123abc"):
        Journal(journal_path(path), path.name)


def test_a_journal_the_run_disagrees_with_is_refused(tmp_path: Path, wine) -> None:
    spec = _spec("gp_r")
    path = tmp_path / run_filename(spec)
    journal = _run_interrupted(spec, path, wine, stop_at=3)
    entries = journal.entries
    with journal.path.open("rb") as stream:
        header = pickle.load(stream)
    config = entries[1].config
    records = [entries[0], replace(entries[1], config=config | {"C": 2 * config["C"]}), entries[2]]
    journal.path.write_bytes(b"".join(pickle.dumps(r) for r in [header, *records]))
    with pytest.raises(JournalError, match="evaluation 2 was of"):
        run(spec, data=wine, journal=Journal(journal.path, path.name))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"time_budget": 60.0}, "it has a time budget"),
        ({"optimizer": "hyperband"}, "optimizer 'hyperband' is multi-fidelity"),
        ({"batch_networks": "on"}, "batch_networks trains networks ahead"),
        ({"optimizer": "cash_irace"}, "races configurations over instances"),
    ],
)
def test_runs_a_journal_cannot_resume_exactly_are_refused(changes: dict, reason: str) -> None:
    with pytest.raises(JournalError, match=f"^journal=true cannot resume this run: .*{reason}"):
        check_journaled(_spec("rs").with_settings(**changes))


def test_the_command_keeps_and_names_the_journal_on_ctrl_c_and_resumes(
    tmp_path: Path, isolated_env: dict, signal_after_first_evaluation
) -> None:
    results = tmp_path / "results"
    command = [
        sys.executable, "run.py", "optimizer=rs", "dataset=sklearn-iris", "budget=60",
        "curves=false", f"results_dir={results}", "journal=true",
    ]  # fmt: skip
    returncode, _, err = signal_after_first_evaluation(command, signal.SIGINT)
    assert returncode == 130, err
    (journal,) = results.rglob("*.journal")
    last = [line for line in err.splitlines() if not line.startswith("rs sklearn-iris: ")]
    assert len(last) == 1 and last[0].startswith("interrupted (SIGINT): ")
    assert last[0].endswith(f"evaluations kept in {journal}; the same command resumes from them")
    assert list(results.rglob("*.parquet")) == []

    env = {**isolated_env, "HPO_PROGRESS_SECONDS": "0.05"}
    again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "resuming: " in again.stderr and f"evaluations recorded in {journal}" in again.stderr
    assert not journal.exists() and len(list(results.rglob("*.parquet"))) == 1


def test_a_remembered_validation_is_what_validate_answers_without_fitting(
    wine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replayed evaluation is in the evaluator's cache as if it had been validated, so that
    a configuration proposed again after the resume is not fitted again (as in the run that
    was never interrupted)."""
    spec = _spec("rs")
    config = {"C": 3.0, "gamma": 0.05}
    first = _set_up(spec, wine).evaluator.validate(config, 0)
    assert first.n_fits > 0
    evaluator = _set_up(spec, wine).evaluator
    evaluator.remember(config, 0, first)
    monkeypatch.setattr(evaluator.fitter, "fit", lambda *a, **k: pytest.fail("fitted again"))
    again = evaluator.validate(config, 0)
    assert again == replace(first, n_fits=0, fit_seconds=0.0)
