"""A run's cost on CPU cores: the throughput table (seconds per run at 100 evaluations by optimizer
family, protocol and |D_TVS| size bin), what each run's cost scales with (evaluations, full
fits, epochs, a time budget), its memory bound, and the estimate of a whole submission."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.cluster.networks import (
    BENCHMARKS,
    expected_incumbents,
    fidelity,
    network_seconds,
    plan_epochs,
    plan_full_fits,
    plan_rungs,
)
from experiments.configuration.config import UsageError
from experiments.configuration.spec import RunSpec
from hpo.data.catalog import catalog, resolve_name
from hpo.learners import learner_resources

COSTS_FILE = BENCHMARKS / "throughput_costs.json"


SIZE_BINS = (0, 133, 455, 1403, 10**6)  # Fig 3.4 bins of |D_TVS| (thesis §3.4)


COST_BUDGET = 100  # evaluations the cost table's seconds refer to


TIMEOUT_MARGIN = 3.0  # a shard's timeout: this many times its estimate (bin means understate)


BASE_MEMORY_GB = 0.5  # interpreter, libraries, one dataset


MEMORY_SETTINGS = ["distance_cache_mb", "cache_size_mb"]  # fit guard settings memory depends on


GRAM_FOLDS = 5  # squared-distance matrices a 5-fold run keeps (one per fold)


FULL_FIT_FAMILY = "rs"  # the table family whose cells give the cost of one full fit


SELECTION_STAGE_ALLOWANCE = 0.5  # [assumption] seed 003's selection stage, a share of time_budget


TIME_BUDGET_FAMILY = "time budget"  # the cost family of runs costed by their time budget


def tvs_size(entry: Mapping[str, Any]) -> int:
    """|D_TVS|: the training file when a test file is predefined, else 2/3 of the data."""
    n = int(entry["n_rows"])
    return n if entry["predefined_test"] == "yes" else n - int(round(n / 3))


def size_bin(tvs: int | np.ndarray) -> int | np.ndarray:
    """The Fig 3.4 size bin (0-3) of |D_TVS|."""
    return np.digitize(tvs, SIZE_BINS[1:-1], right=True)


def dataset_sizes(names: Sequence[str]) -> dict[str, int]:
    """|D_TVS| of each dataset, from the catalog (no data is read)."""
    table = catalog().set_index("name", drop=False)
    return {name: tvs_size(table.loc[resolve_name(name)]) for name in set(names)}


def costs_provenance(path: Path = COSTS_FILE) -> str:
    """Where the cost table comes from: the benchmark's command, date and own projection."""
    table = json.loads(Path(path).read_text())
    return (
        f"run costs: {Path(path).name}, measured {table.get('measured', '?')} by "
        f"`{table.get('command', '?')}` (its projection for chapter3/paper: "
        f"{table.get('projected_core_hours', float('nan')):,.1f} core-hours)"
    )


def load_costs(path: Path = COSTS_FILE) -> pd.Series:
    """Mean seconds per run at 100 evaluations, indexed by (family, protocol, bin), from the
    throughput benchmark's ``--json`` output (its per-run records)."""
    try:
        records = pd.DataFrame(json.loads(Path(path).read_text())["runs"])
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"cannot read the run-cost table {path}: {err}") from err
    sizes = dataset_sizes(list(records["dataset"]))
    records["bin"] = size_bin(records["dataset"].map(sizes).to_numpy())
    return records.groupby(["family", "protocol", "bin"])["run_s_at_100"].mean()


@dataclass(frozen=True)
class Estimate:
    """What a submission of ``runs`` cut into ``n_shards`` shards would cost."""

    n_runs: int
    n_shards: int
    core_hours: float
    longest_shard_hours: float
    longest_run_hours: float
    memory_gb: float
    network_core_hours: float = 0.0  # the runs costed by epochs (those a GPU would speed up)

    @property
    def suggested_timeout_min(self) -> int:
        return max(10, math.ceil(self.longest_shard_hours * 60 * TIMEOUT_MARGIN / 10) * 10)

    @property
    def suggested_mem_gb(self) -> int:
        return math.ceil(self.memory_gb * 1.25)


def table_seconds(runs: pd.DataFrame, costs: pd.Series) -> np.ndarray:
    """Estimated seconds of runs costed by the table (columns cost_family, protocol, bin,
    evaluations); a cell the table lacks raises :class:`UsageError`."""
    keys = pd.MultiIndex.from_frame(runs[["cost_family", "protocol", "bin"]])
    seconds = costs.reindex(keys).to_numpy()
    if np.isnan(seconds).any():
        missing = sorted(set(keys[np.isnan(seconds)]))
        raise UsageError(
            f"the run-cost table has no cost for (family, protocol, bin) {missing}; it holds "
            "Chapter 3's runs (benchmarks/throughput.py); Chapter 5's paper profile is "
            "projected by benchmarks/throughput_chapter5.py"
        )
    return seconds * runs["evaluations"].to_numpy() / COST_BUDGET


def run_seconds(
    runs: pd.DataFrame, costs: pd.Series, epoch_costs: pd.Series | None = None
) -> np.ndarray:
    """Estimated seconds of each run: by epochs for network runs (``epochs`` > 0), by its time
    budget and the selection stage's allowance for a timed run (``budget_seconds`` > 0), else by
    the run-cost table."""
    network = runs["epochs"].to_numpy() > 0
    timed = runs["budget_seconds"].to_numpy() > 0
    seconds = np.zeros(len(runs))
    by_table = ~network & ~timed
    seconds[by_table] = table_seconds(runs[by_table], costs)
    allowance = SELECTION_STAGE_ALLOWANCE * runs["selection_stage"].to_numpy(dtype=bool)
    seconds[timed] = (runs["budget_seconds"].to_numpy() * (1 + allowance))[timed]
    if network.any():
        epoch_costs = pd.Series(dtype=float) if epoch_costs is None else epoch_costs
        seconds[network] = network_seconds(runs[network], epoch_costs)
    return seconds


def run_cost_units(spec: RunSpec) -> dict[str, Any]:
    """What a run's cost scales with: for a network run its ``epochs`` (evaluations and
    retraining); for a run with a time budget its ``budget_seconds``; else its ``evaluations`` in
    full fits and the table family that costs them. A network run of Hyperband or BOHB on the
    ``epochs`` resource also has its ``rungs`` (:func:`plan_rungs`: what ``batch_networks``
    trains together, which the GPU line costs batched), and every run its ``batch_networks``."""
    settings = spec.task.space.get("settings") or {}
    learner = spec.task.space.get("learner")  # a name; a tree of learners (seed 003) is no network
    network = isinstance(learner, str) and "epochs" in learner_resources(learner)
    batching = {"rungs": (), "batch_networks": spec.execution.batch_networks}
    if spec.budget.seconds is not None:
        return {
            **batching,
            "epochs": 0.0,
            "evaluations": 0.0,
            "cost_family": TIME_BUDGET_FAMILY,
            # a method that runs longer than the run's budget (seed 004's SMAC-Long: 4 x)
            "budget_seconds": float(spec.budget.seconds)
            * float(dict(spec.method.settings).get("budget_factor", 1.0)),
            "selection_stage": "model_selection" in spec.method.stages,
        }
    plan = fidelity(spec.method.optimizer, spec.method.settings)
    n_evaluations = (
        spec.budget.evaluations
        if plan is None
        else min(spec.budget.evaluations, len(plan.schedule()))
    )
    if network:
        cap = float(settings["max_epochs"])
        if plan is None:
            trained = spec.budget.evaluations * cap
        elif plan.resource == "epochs":
            trained = plan_epochs(plan)
            batching["rungs"] = plan_rungs(plan)  # what batch_networks trains together
        else:  # a share of the rows, trained to the cap
            trained = plan_full_fits(plan) * cap
        retrained = expected_incumbents(n_evaluations) * cap
        units = {
            "epochs": trained + retrained,
            "evaluations": 0.0,
            "cost_family": spec.method.optimizer,
        }
    elif plan is None:
        units = {
            "epochs": 0.0,
            "evaluations": float(spec.budget.evaluations),
            "cost_family": spec.method.optimizer,
        }
    else:
        units = {"epochs": 0.0, "evaluations": plan_full_fits(plan), "cost_family": FULL_FIT_FAMILY}
    return {**units, **batching, "budget_seconds": 0.0, "selection_stage": False}


def memory_gb(train_rows: int, distance_cache_mb: float, libsvm_cache_mb: float) -> float:
    """A run's peak memory bound for training sets of at most ``train_rows`` rows: interpreter
    and data, the kept squared distances (at most ``distance_cache_mb``), one Gram buffer and
    libsvm's kernel cache (docs/performance.md)."""
    matrix_mb = train_rows**2 * 8 / 2**20
    distances_mb = min(distance_cache_mb, GRAM_FOLDS * matrix_mb)
    return BASE_MEMORY_GB + (distances_mb + matrix_mb + libsvm_cache_mb) / 1024


def estimate(
    runs: pd.DataFrame, costs: pd.Series, n_shards: int, epoch_costs: pd.Series | None = None
) -> Estimate:
    """The estimate for ``runs`` (one row per run: cost_family, protocol, bin, evaluations,
    epochs, space, train_rows, distance_cache_mb, cache_size_mb), sharded as ``run.py`` does
    (shard i: runs i, i+k, ...)."""
    seconds = run_seconds(runs, costs, epoch_costs)
    shard_seconds = np.bincount(np.arange(len(runs)) % n_shards, seconds, minlength=n_shards)
    memory = max(
        memory_gb(row.train_rows, row.distance_cache_mb, row.cache_size_mb)
        for row in runs.drop_duplicates(["train_rows", *MEMORY_SETTINGS]).itertuples()
    )
    return Estimate(
        n_runs=len(runs),
        n_shards=n_shards,
        core_hours=float(seconds.sum()) / 3600,
        longest_shard_hours=float(shard_seconds.max()) / 3600,
        longest_run_hours=float(seconds.max()) / 3600,
        memory_gb=memory,
        network_core_hours=float(seconds[runs["epochs"].to_numpy() > 0].sum()) / 3600,
    )


def runs_table(runs: Sequence[Any]) -> pd.DataFrame:
    """One row per planned run (``experiments.sweep.PlannedRun``) with what its cost depends on."""
    sizes = dataset_sizes([run.spec.task.dataset for run in runs])
    table = pd.DataFrame(
        {
            "family": [run.spec.method.optimizer for run in runs],
            "protocol": [run.spec.task.protocol_name for run in runs],
            "budget": [run.spec.budget.evaluations for run in runs],
            "method": [run.spec.method.name for run in runs],
            "space": [run.spec.task.space_name for run in runs],
            "tvs": [sizes[run.spec.task.dataset] for run in runs],
            "train_cap": [run.spec.task.protocol.train_cap or 0 for run in runs],
            **{
                key: [getattr(run.spec.task.fit_guard, key) for run in runs]
                for key in MEMORY_SETTINGS
            },
        }
    )
    table = table.join(pd.DataFrame([run_cost_units(run.spec) for run in runs]))
    table["bin"] = size_bin(table["tvs"].to_numpy())
    capped = table["train_cap"].where(table["train_cap"] > 0, table["tvs"])
    table["train_rows"] = table["tvs"].clip(upper=capped)  # the protocol's training cap
    return table
