"""Entry point. One run::

    python run.py optimizer=gp_r dataset=adult protocol=cv5 seed=0

or one shard of an experiment's sweep per Hydra job, many runs per job (a Hydra job per run does
not scale to 10^5 runs); the launcher decides where jobs run (joblib locally, SLURM on a cluster)::

    python run.py -m experiment=chapter3 profile=medium n_shards=8 'shard=range(0,8)' \\
        hydra/launcher=joblib

The entry point only composes the config and hands plain objects to the library. Off a
terminal a run prints a progress line every ``$HPO_PROGRESS_SECONDS`` seconds (default 30);
Ctrl-C or SIGTERM ends it with one line, nothing written, exit code 130 or 143.
"""

from __future__ import annotations

import sys

from experiments.run.interrupt import HardExit, Interrupted, exit_on_interrupt, raise_on_signals

if __name__ == "__main__":  # before the slow imports: a Ctrl-C while they load is one line too
    raise_on_signals()

from pathlib import Path  # noqa: E402 - after the signal handlers

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from experiments.cluster import check_launcher_overrides, check_shards
from experiments.configuration.command_line import check_overrides, open_settings, relabelled
from experiments.configuration.config import UsageError, boolean, spec_from_config
from experiments.configuration.search_path import search_path, use_search_path
from experiments.configuration.spec import RunSpec
from experiments.run.journal import Journal, check_journaled, journal_path
from experiments.run.progress import interval_seconds
from experiments.run.results import run_filename
from experiments.run.single import footnotes, prepare, run_and_save, summarize
from hpo.data.catalog import DatasetError
from runfiles.layout import predictions_path


def _single_run(cfg: DictConfig) -> None:
    spec = relabelled(
        spec_from_config(OmegaConf.to_container(cfg, resolve=True)),
        HydraConfig.get().overrides.task,
        cfg.optimizer.get("label"),
    )
    path = Path(cfg.results_dir) / run_filename(spec)
    journaled, journal = boolean("journal", cfg.journal), None
    if journaled:
        check_journaled(spec)
    created = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    finished_before, sidecar = path.exists(), predictions_path(path)
    sidecar_before = sidecar.exists()

    def leave_nothing(err: BaseException) -> None:
        """A refused or interrupted run leaves no folder or sidecar behind (with a journal:
        none but the journal's, which keeps the finished evaluations)."""
        if isinstance(err, Interrupted) and path.exists() and not finished_before:
            err.outcome = f"the run had finished, its results are kept: {path}"
        elif isinstance(err, Interrupted) and journal is not None and journal.entries:
            err.outcome = (
                f"{len(journal.entries)} evaluations kept in {journal.path}; "
                "the same command resumes from them"
            )
        if not path.exists() and sidecar.exists() and not sidecar_before:
            sidecar.unlink(missing_ok=True)  # stopped between the sidecar and the results file
        for folder in created:  # deepest first; stops at the first one that is not empty
            try:
                folder.rmdir()
            except OSError:
                break

    try:
        with HardExit(leave_nothing):  # Ctrl-C during a long fit in C ends the run too
            finished, messages = prepare(path, spec, boolean("rerun_stale", cfg.rerun_stale))
            if journaled and not finished:
                journal = Journal(journal_path(path), path.name)
                if journal.entries:
                    messages.append(
                        f"resuming: {len(journal.entries)} evaluations recorded in {journal.path}"
                    )
            _run_once(cfg, spec, path, finished, messages, journal)
    except BaseException as err:
        leave_nothing(err)
        raise


def _run_once(
    cfg: DictConfig,
    spec: RunSpec,
    path: Path,
    finished: bool,
    messages: list[str],
    journal: Journal | None,
) -> None:
    for message in messages:
        print(message, file=sys.stderr)
    if finished:
        print(
            "already finished, not run again (the run specification it stores is this run's; "
            f"results are never overwritten): {path}"
        )
    else:
        run_and_save(spec, path, cfg.data_dir, show_progress=True, journal=journal)
    summary = summarize(path)
    print(summary.to_string(index=False, na_rep="n/a"))
    for note in footnotes(path):
        print(note)
    print(f"results: {path}")


def _sweep_shard(cfg: DictConfig) -> None:
    from experiments.sweep import record_dataset_notes, record_shard, run_all, shard_path

    if not 0 <= cfg.shard < cfg.n_shards:
        raise UsageError(f"shard must be in [0, {cfg.n_shards}), got {cfg.shard}")
    hydra_config = HydraConfig.get()
    name = hydra_config.runtime.choices["experiment"]  # the config file's name
    # an own experiment file found on hydra.searchpath: its sweep's runs compose with it too
    use_search_path(search_path(hydra_config.overrides.hydra))
    record_dataset_notes(name, cfg.profile, data_dir=cfg.data_dir)
    parts = None if cfg.get("parts") is None else [str(part) for part in cfg.parts]
    record = shard_path(name, cfg.profile, cfg.shard, cfg.n_shards, parts=parts)
    record_shard(record)  # who runs the shard (``sweep status --n-shards``), under SLURM its job
    try:
        runs, counts = run_all(
            name,
            cfg.profile,
            data_dir=cfg.data_dir,
            shard=cfg.shard,
            n_shards=cfg.n_shards,
            parts=parts,
            n_jobs=1,
            progress=False,
        )
    except Interrupted as stop:
        stop.outcome = "the shard's finished runs are kept; the same command runs the rest"
        raise
    record_shard(record, counts)
    waiting = sum(bool(run.waiting) for run in runs)
    if waiting:  # parts that run after others, whose runs other shards have not finished
        counts["waiting"] = waiting
    print(f"{name}/{cfg.profile} shard {cfg.shard}/{cfg.n_shards}: {counts}")


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig) -> None:
    try:
        if cfg.get("experiment"):
            _sweep_shard(cfg)
        else:
            _single_run(cfg)
    except (UsageError, DatasetError, ValueError, PermissionError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    try:
        check_overrides(sys.argv[1:])
        check_shards(sys.argv[1:])
        check_launcher_overrides(sys.argv[1:])
        interval_seconds()  # a bad $HPO_PROGRESS_SECONDS is refused before anything runs
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as stop:
        exit_on_interrupt(stop)
    sys.argv[1:] = open_settings(sys.argv[1:])
    try:
        main()
    except Interrupted as stop:
        exit_on_interrupt(stop)
