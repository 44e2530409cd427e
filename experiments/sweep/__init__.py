"""Sweeps: plan the runs of an experiment profile, execute them in parallel, resume, report.

An experiment (``conf/experiment/<name>.yaml``) has profiles (``smoke``, ``medium``, ``paper``);
a profile has parts (e.g. Chapter 3's main experiment and its posterior-mean experiment), each a
product datasets × methods × protocols × repetitions. Methods of a part that differ only in their
selection rule share one run (``cma-pv``, ``cma-bw`` and ``cma-gv`` are one CMA-ES run read by
three rules), and their seeds never depend on which rules are read, so a method run alone gives
the same numbers.

A part may run after another (``after: <part>``): its runs wait until every run of that part on
the same dataset has finished (or failed), and ``derive: <module>:<function>`` then turns each
run's specification into the one to run from those finished runs (seed 004: I/F-Race's budget
calibrated from random search's runs). A waiting run is planned (``sweep cost`` counts it, its
results file is named once it can run) but not executed; ``run`` plans again after each round,
so one command runs both parts.

Resuming is the same command as starting: a run whose results file exists is skipped; a failed
run (its error recorded next to where its results would be, ``*.failed.json``) is tried again.
One failing run never stops the sweep; the exit code says whether anything failed. A worker that
dies (e.g. out of memory) is detected from the marker its run left and recorded as a failure.

Command line::

    python -m experiments.sweep run chapter3 --profile smoke [--jobs N] [--shard i --n-shards k]
    python -m experiments.sweep run reshuffle --profile local --parts fractions,pm_incumbent
    python -m experiments.sweep status chapter3 --profile smoke
    python -m experiments.sweep consolidate chapter3 --profile smoke
    python -m experiments.sweep cost chapter3 --profile paper --n-shards 500  # before a cluster job

The package, one concern per module: ``experiment`` (an experiment file, its profiles and parts),
``planning`` (the runs of a profile and where their results go), ``candidates`` (a benchmark's
added optimizers), ``workers`` (claims on runs, live and dead workers), ``execution`` (running
runs and shards), ``states`` (run and shard states), ``merge`` (consolidation) and ``cli``.
"""

from __future__ import annotations

from experiments.sweep.candidates import add_candidates, checked_candidates, read_candidates
from experiments.sweep.execution import execute, run_all, run_sweep
from experiments.sweep.experiment import experiment_choices, load_experiment
from experiments.sweep.merge import consolidate
from experiments.sweep.planning import (
    PlannedRun,
    check_data,
    dataset_notes,
    of_parts,
    plan,
    record_dataset_notes,
)
from experiments.sweep.states import record_shard, shard_path, shard_status, status
from runfiles.layout import RESULTS_ROOT

__all__ = [
    "RESULTS_ROOT",
    "PlannedRun",
    "add_candidates",
    "check_data",
    "checked_candidates",
    "consolidate",
    "dataset_notes",
    "execute",
    "experiment_choices",
    "load_experiment",
    "of_parts",
    "plan",
    "read_candidates",
    "record_dataset_notes",
    "record_shard",
    "run_all",
    "run_sweep",
    "shard_path",
    "shard_status",
    "status",
]
