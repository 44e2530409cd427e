"""Sizing a cluster submission before making it, and checking its launcher settings.

``python -m experiments.sweep cost <experiment> --profile P --n-shards K`` prints what
``python run.py -m experiment=<experiment> profile=P n_shards=K 'shard=range(0,K)'
hydra/launcher=slurm`` would submit: runs, shards, the job array's size, the estimated
core-hours, memory per job and a suggested ``timeout_min`` per shard.

Run costs come from the throughput benchmark (``benchmarks/throughput.py --json``), checked in as
``benchmarks/throughput_costs.json``: the mean seconds of a run at 100 evaluations per optimizer
family, protocol and |D_TVS| size bin (the bins of thesis Fig 3.4). A run's estimate is its
cell's mean scaled linearly to the run's budget, so the paper profile's estimate is the
benchmark's projection recomputed run by run.

Two kinds of run are costed otherwise (the ``surrogates`` experiment, seed 002):

* A **network** run (a learner trained by epochs, ``ffnn``) costs its epochs × the seconds per
  epoch of its space's representative network, measured by ``benchmarks/ffnn_epoch.py --json`` and
  checked in as ``benchmarks/ffnn_epoch_costs.json``. Its epochs: budget × the epoch cap for a
  method that evaluates fully (an upper bound: early stopping stops sooner); for ``hyperband`` and
  ``bohb`` the epochs of their plan, resumed (:func:`plan_epochs`, on
  :class:`hpo.optimizers.hyperband.Fidelity`'s brackets); plus the retraining of each distinct
  incumbent up to the cap, counted as the expected number of records among n evaluations in
  random order (the harmonic number H_n).
* A ``hyperband`` or ``bohb`` run on the **training-set fraction** costs the table's ``rs`` cell
  scaled by its plan's full-training-set equivalents (the sum of r/R over its evaluations) instead
  of its budget: an upper bound, as a fit on a share of the rows costs less than that share
  (libsvm's time grows faster than linearly in the rows).

On a GPU the network runs' epochs cost what ``benchmarks/ffnn_epoch.py --device cuda --json``
measured there (``benchmarks/ffnn_epoch_costs_cuda.json``, the same table for the GPU's epoch,
one network at a time): the GPU line gives those GPU-hours beside the core-hours (without that
table it says the GPU's cost is unmeasured and how to measure it). Beside them it gives the
GPU-hours with ``batch_networks`` on (or ``auto``), where each Hyperband or BOHB rung of M > 1
networks trains as one batched model: the rung costs M × the epochs each network trains there ×
the per-network epoch of M networks trained together, from the batched table
(``benchmarks/ffnn_batched_costs_cuda.json``, ``benchmarks/ffnn_epoch.py --batched --device cuda
--json``; :func:`batched_epoch_seconds`: log-log interpolation between the measured M, clamped
beyond them), its rung of widths drawn from the prior (``BATCHED_RUNG``; the rung of networks
all of the mean width, one width bucket, is given beside it as an optimistic bound). That table
measures one-layer networks of ffnn_mnist's widths; a space's rung is scaled by its
representative network's epoch over the measured 249-unit network's, both from the GPU's
one-network table (:func:`batched_seconds`). A rung of one network (the evaluator trains a lone
network by itself), the retraining of incumbents and the other methods' networks stay one at a
time. The CPU's estimate never batches (on one CPU thread batching gains little,
docs/surrogates-hyperband.md).

A run with a **time budget** (``time_budget``, seed 003's paper profile: 8 hours of optimisation
per run) costs that budget plus, when a model-selection stage follows (not in the ``priors``
part: Algorithm 4's evaluations), ``SELECTION_STAGE_ALLOWANCE`` of it for that stage (an
assumption, stated on the cost line: the stage's cross-validation fits on H do not grow with the
optimisation time, and took 35-63 % of the smoke runs' seconds at 20 evaluations,
docs/hierarchical.md).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.config import CONF_DIR, UsageError
from experiments.spec import RunSpec
from hpo.data.catalog import catalog, resolve_name
from hpo.learners import learner_resources
from hpo.optimizers import MultiFidelity, optimizer_class
from hpo.optimizers.hyperband import Fidelity

COSTS_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "throughput_costs.json"
SIZE_BINS = (0, 133, 455, 1403, 10**6)  # Fig 3.4 bins of |D_TVS| (thesis §3.4)
MAX_ARRAY_SIZE = 1001  # SLURM's default MaxArraySize
COST_BUDGET = 100  # evaluations the cost table's seconds refer to
TIMEOUT_MARGIN = 3.0  # a shard's timeout: this many times its estimate (bin means understate)
BASE_MEMORY_GB = 0.5  # interpreter, libraries, one dataset
MEMORY_SETTINGS = ["distance_cache_mb", "cache_size_mb"]  # fit guard settings memory depends on
GRAM_FOLDS = 5  # squared-distance matrices a 5-fold run keeps (one per fold)
EPOCH_COSTS_FILE = COSTS_FILE.with_name("ffnn_epoch_costs.json")
FULL_FIT_FAMILY = "rs"  # the table family whose cells give the cost of one full fit
GPU_EPOCH_COSTS_FILE = COSTS_FILE.with_name("ffnn_epoch_costs_cuda.json")  # measured on a GPU
# seconds per epoch per network of M networks trained as one batched model, on a GPU
GPU_BATCHED_COSTS_FILE = COSTS_FILE.with_name("ffnn_batched_costs_cuda.json")
BATCHED_RUNG = "prior"  # the batched table's rung a run's rungs cost as: widths from the prior
BATCHED_LOWER_RUNG = "mean"  # every network at the mean width: one width bucket, a lower bound
SELECTION_STAGE_ALLOWANCE = 0.5  # [assumption] seed 003's selection stage, a share of time_budget
TIME_BUDGET_FAMILY = "time budget"  # the cost family of runs costed by their time budget


# --------------------------------------------------------------------------- size bins


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


# --------------------------------------------------------------------------- cost table


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


def network_seconds(runs: pd.DataFrame, epoch_costs: pd.Series) -> np.ndarray:
    """Estimated seconds of network runs (columns space, epochs); a space the epoch-cost table
    lacks raises :class:`UsageError`."""
    seconds = epoch_costs.reindex(runs["space"]).to_numpy()
    if np.isnan(seconds).any():
        missing = sorted(set(runs["space"][np.isnan(seconds)]))
        raise UsageError(
            f"the epoch-cost table has no cost for the spaces {missing}; measure them with "
            "python benchmarks/ffnn_epoch.py --json benchmarks/ffnn_epoch_costs.json"
        )
    return seconds * runs["epochs"].to_numpy()


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


# ------------------------------------------------------------ networks and Hyperband plans


def load_epoch_costs(path: Path = EPOCH_COSTS_FILE) -> pd.Series:
    """Seconds per epoch of each seed space's representative network, indexed by space name,
    from ``benchmarks/ffnn_epoch.py --json``."""
    return _epoch_costs(_read_epoch_table(path), path)


def _read_epoch_table(path: Path) -> dict[str, Any]:
    """The whole table ``benchmarks/ffnn_epoch.py --json`` wrote (its device and date too)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read the epoch-cost table {path}: {err}") from err


def _epoch_costs(table: Mapping[str, Any], path: Path) -> pd.Series:
    try:
        spaces = table["spaces"]
        return pd.Series({name: float(cell["seconds_per_epoch"]) for name, cell in spaces.items()})
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UsageError(f"cannot read the epoch-cost table {path}: bad entry {err!r}") from err


def fidelity(method: str, settings: Mapping[str, Any]) -> Fidelity | None:
    """The plan of resources a run of ``method`` with ``settings`` follows, for a method whose
    settings fix one (a multi-fidelity class's ``fidelity_plan``: Hyperband, BOHB), else None
    (the run makes its budget's evaluations)."""
    cls = optimizer_class(method)
    return cls.fidelity_plan(settings) if issubclass(cls, MultiFidelity) else None


def plan_epochs(plan: Fidelity) -> float:
    """Epochs a run of ``plan`` trains when every configuration resumes from its last rung (no
    early stopping): each rung's survivors train the difference to its resource."""
    return sum(n * epochs for n, epochs in plan_rungs(plan))


def plan_rungs(plan: Fidelity) -> tuple[tuple[int, float], ...]:
    """(networks M, epochs each trains there) of every rung of ``plan``, resumed from the
    rung before as in :func:`plan_epochs`, in the plan's order (iterations repeated)."""
    rungs = []
    for bracket in plan.plan:
        previous = 0.0
        for rung in bracket:
            rungs.append((int(rung.n), plan.amount(rung.r) - previous))
            previous = plan.amount(rung.r)
    return tuple(rungs) * plan.iterations


def plan_full_fits(plan: Fidelity) -> float:
    """Full-training-set equivalents of a ``train_fraction`` plan: the sum of r/R over its
    evaluations (each a fresh fit on that share of the rows)."""
    return sum(plan.amount(r) for _, r in plan.schedule())


def expected_incumbents(evaluations: int) -> float:
    """The expected number of records among ``evaluations`` losses in random order (H_n): the
    distinct incumbents a run retrains."""
    return float(sum(1 / k for k in range(1, evaluations + 1)))


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


# ----------------------------------------------------------------------------- report


def check_submission(n_shards: int, max_array_size: int) -> None:
    if n_shards < 1:
        raise UsageError(f"--n-shards must be >= 1, got {n_shards}")
    if max_array_size < 1:
        raise UsageError(f"--max-array-size must be >= 1, got {max_array_size}")


def array_warning(n_runs: int, n_shards: int, max_array_size: int) -> str | None:
    """The warning for an array larger than the cluster's MaxArraySize, with the fix."""
    if n_shards <= max_array_size:
        return None
    per_shard = math.ceil(n_runs / max_array_size)
    return (
        f"warning: {n_shards} shards make a job array of {n_shards} > MaxArraySize "
        f"{max_array_size}; sbatch would refuse it. Pack runs into fewer shards: "
        f"--n-shards {max_array_size} or less (about {per_shard} runs per shard), or ask "
        f"the administrators for a larger MaxArraySize (scontrol show config | grep MaxArraySize)"
    )


def report(name: str, profile: str, estimate: Estimate, max_array_size: int) -> list[str]:
    """The lines ``cost`` prints (the array warning apart)."""
    e = estimate
    per_shard = math.ceil(e.n_runs / e.n_shards)
    lines = [
        f"{name}/{profile}: {e.n_runs} runs in {e.n_shards} shards (up to {per_shard} runs each)",
        f"job array: {e.n_shards} jobs (MaxArraySize {max_array_size})",
        f"estimated cost: {e.core_hours:,.2f} core-hours "
        f"(from {COSTS_FILE.name}: mean run cost per family, protocol and size bin"
        + (f"; network runs by epochs, {EPOCH_COSTS_FILE.name})" if e.network_core_hours else ")"),
        f"longest shard: {e.longest_shard_hours:,.2f} h; longest run: "
        f"{60 * e.longest_run_hours:,.2f} min",
        f"memory per job: {e.memory_gb:.1f} GB at most -> mem_gb={e.suggested_mem_gb}",
        f"suggested: hydra.launcher.timeout_min={e.suggested_timeout_min} "
        f"({TIMEOUT_MARGIN:g}x the longest shard) hydra.launcher.mem_gb={e.suggested_mem_gb}",
        f"submit: python run.py -m experiment={name} profile={profile} n_shards={e.n_shards} "
        f"'shard=range(0,{e.n_shards})' hydra/launcher=slurm "
        f"hydra.launcher.timeout_min={e.suggested_timeout_min} "
        f"hydra.launcher.mem_gb={e.suggested_mem_gb}",
    ]
    return lines


def network_lines(runs: pd.DataFrame, epoch_costs: pd.Series, core_hours: float) -> list[str]:
    """The lines on the runs costed by epochs, with their assumptions (none without such runs)."""
    network = runs[runs["epochs"] > 0]
    if network.empty:
        return []
    per_run = network.groupby(["space", "method"], sort=False)["epochs"].mean()
    spaces = {space: ", ".join(f"{family} {epochs:,.0f}" for (_, family), epochs in group.items())
              for space, group in per_run.groupby(level=0, sort=False)}  # fmt: skip
    return [
        f"network runs: {len(network)} runs, {network['epochs'].sum():,.0f} epochs at most, "
        f"{core_hours:,.2f} core-hours at "
        + ", ".join(f"{epoch_costs[space]:.3f} s/epoch ({space})" for space in spaces),
        *(f"  epochs per run, {space}: {text}" for space, text in spaces.items()),
        "  assumption: a method evaluating fully trains budget x the epoch cap, hyperband and "
        "bohb the epochs of their plan, resumed: upper bounds, early stopping stops sooner",
        "  assumption: each run retrains its distinct incumbents up to the cap, H_n of its n "
        "evaluations (the expected records in random order)",
        "  assumption: an epoch costs as the space's representative network (mean widths, the "
        "prior's depth shares) on 10,000 x 784 rows, one CPU thread",
    ]


def train_fraction_lines(runs: pd.DataFrame) -> list[str]:
    """The line on Hyperband-style runs on a share of the rows (none without such runs)."""
    multi = runs["family"].map(lambda family: issubclass(optimizer_class(family), MultiFidelity))
    shares = runs[multi.astype(bool) & (runs["epochs"] == 0)]
    if shares.empty:
        return []
    fits = ", ".join(f"{f:,.1f}" for f in sorted(shares["evaluations"].unique()))
    return [
        f"{'/'.join(shares['family'].unique())} on train_fraction ({len(shares)} runs): the "
        f"{FULL_FIT_FAMILY} cell x the plan's full-training-set equivalents (sum of r/R: {fits} "
        "per run) instead of the budget: an upper bound, a fit on a share of the rows costs "
        "less than that share (libsvm is superlinear in the rows)"
    ]


def load_batched_costs(path: Path, rung: str) -> dict[int, float]:
    """Seconds per epoch per network of M networks trained as one batched model, by M, for
    ``rung`` of the batched table (``benchmarks/ffnn_epoch.py --batched --json``). A rung not
    measured at M = 1 takes the ``mean`` rung's M = 1: one network is one group, unpadded,
    whatever its width."""
    table = _read_epoch_table(path)
    try:
        rungs = table["rungs"]
        cells = {int(m): float(s) for m, s in rungs[rung]["batched"].items()}
        lone = rungs.get(BATCHED_LOWER_RUNG, {}).get("batched", {}).get("1")
        if 1 not in cells and lone is not None:
            cells[1] = float(lone)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UsageError(f"cannot read the batched-cost table {path}: bad entry {err!r}") from err
    if not cells or min(cells) < 1 or min(cells.values()) <= 0:
        raise UsageError(f"cannot read the batched-cost table {path}: rung {rung!r} has no M >= 1")
    return cells


def batched_epoch_seconds(
    networks: float | np.ndarray, measured: Mapping[int, float]
) -> float | np.ndarray:
    """Seconds per epoch per network when ``networks`` (M) train as one batched model: the
    measured cost at M, log-log interpolated between the measured M (a power law between
    neighbours) and clamped at the smallest and largest measured M."""
    sizes = sorted(measured)
    logs = np.log([measured[m] for m in sizes])
    return np.exp(np.interp(np.log(networks), np.log(sizes), logs))


def reference_epoch(single: Mapping[str, Any], network: Mapping[str, Any], path: Path) -> float:
    """The one-network table's (``single``) seconds per epoch of the batched table's measured
    ``network`` (units and dropouts), found among the spaces' representative networks."""
    for cell in single.get("spaces", {}).values():
        for candidate in cell.get("networks", []):
            if all(candidate.get(key) == value for key, value in network.items()):
                return float(candidate["seconds_per_epoch"])
    raise UsageError(
        f"the GPU's epoch-cost table {path} has no network {dict(network)} to scale the batched "
        "table's measurement by; measure both on one GPU (benchmarks/gpu_networks.sh)"
    )


def batched_seconds(
    runs: pd.DataFrame, epoch_costs: pd.Series, measured: Mapping[int, float], reference: float
) -> np.ndarray:
    """Seconds of network runs (columns space, epochs, rungs) when each rung of (M, epochs)
    trains as one batched model: M × epochs × the per-network epoch at M
    (:func:`batched_epoch_seconds`) × the space's epoch over the measured network's
    (``epoch_costs[space] / reference``: the batched speed-up taken as the same for the
    space's networks). Their other epochs (retraining, methods without rungs) and a rung of one
    network (``Evaluator.pretrain`` trains a lone network by itself) cost one at a time."""
    seconds = network_seconds(runs, epoch_costs)
    per_epoch = epoch_costs.reindex(runs["space"]).to_numpy()
    for i, rungs in enumerate(runs["rungs"]):
        together = [(m, epochs) for m, epochs in rungs if m > 1]
        if not together:
            continue
        m, epochs = np.array(together, dtype=float).T
        one_at_a_time = per_epoch[i] * float(np.sum(m * epochs))
        batched = float(np.sum(m * epochs * batched_epoch_seconds(m, measured)))
        seconds[i] += per_epoch[i] / reference * batched - one_at_a_time
    return seconds


def gpu_line(
    table: pd.DataFrame,
    estimate: Estimate,
    gpu_costs_file: Path = GPU_EPOCH_COSTS_FILE,
    batched_costs_file: Path = GPU_BATCHED_COSTS_FILE,
) -> list[str]:
    """What a GPU changes (none without network runs): the network runs' GPU-hours at the GPU's
    measured epoch (``gpu_costs_file``), one network at a time, and with Hyperband's and BOHB's
    rungs batched (``batched_costs_file``); or that it is unmeasured while no table exists."""
    e = estimate
    if not e.network_core_hours:
        return []
    other = f"the other {e.core_hours - e.network_core_hours:,.2f} core-hours stay on CPU"
    measure = f"python benchmarks/ffnn_epoch.py --device cuda --json {_repo_path(gpu_costs_file)}"
    if not Path(gpu_costs_file).exists():
        return [
            f"on a GPU: unmeasured, no GPU epoch-cost table ({_repo_path(gpu_costs_file)}); "
            f"the network runs' {e.network_core_hours:,.2f} core-hours are one CPU thread's; "
            f"{other}; measure on the GPU with: {measure} (one network at a time) and "
            "python benchmarks/ffnn_epoch.py --batched --device cuda (M networks as one model)"
        ]
    network = table[table["epochs"] > 0]
    measured = _read_epoch_table(gpu_costs_file)
    single = _epoch_costs(measured, gpu_costs_file)
    gpu_hours = network_seconds(network, single).sum() / 3600
    batched = _batched_text(network, single, measured, gpu_costs_file, batched_costs_file)
    return [
        f"on a GPU: the network runs' {e.network_core_hours:,.2f} core-hours are "
        f"{gpu_hours:,.2f} GPU-hours, one network at a time at the GPU's measured epoch "
        f"({_repo_path(gpu_costs_file)}, {_device(measured)}, {measured.get('measured', '?')}); "
        f"{other}; add `space.settings.device: cuda` to the network parts' overrides"
        + (", and `batch_networks: auto` to batch the rungs" if batched else ""),
        *batched,
    ]


def _device(table: Mapping[str, Any]) -> str:
    return str(table.get("device_name", table.get("device", "?")))


def _batched_text(
    network: pd.DataFrame,
    single: pd.Series,
    measured: Mapping[str, Any],
    gpu_costs_file: Path,
    batched_costs_file: Path,
) -> list[str]:
    """The GPU line's batched part: the network runs' GPU-hours with Hyperband's and BOHB's
    rungs trained as one batched model (none when no run has rungs)."""
    if "rungs" not in network or not any(map(len, network["rungs"])):
        return []
    with_rungs = network[network["rungs"].map(len) > 0]
    settings = "/".join(sorted(set(with_rungs.get("batch_networks", ["?"]))))
    head = (
        f"  with Hyperband's and BOHB's rungs batched (batch_networks on or auto; this "
        f"profile's {len(with_rungs)} such runs: {settings})"
    )
    path = _repo_path(batched_costs_file)
    if not Path(batched_costs_file).exists():
        return [
            f"{head}: unmeasured, no batched-cost table ({path}); measure on the GPU with: "
            "python benchmarks/ffnn_epoch.py --batched --rungs mean prior --sizes 1 16 81 256 "
            f"--epochs 1 --repeats 3 --device cuda --json {path}"
        ]
    table = _read_epoch_table(batched_costs_file)
    reference = reference_epoch(measured, table.get("reference_network", {}), gpu_costs_file)
    hours, sizes = {}, {}
    has_rungs = (network["rungs"].map(len) > 0).to_numpy()
    alone = network_seconds(with_rungs, single).sum() / 3600
    for rung in (BATCHED_RUNG, BATCHED_LOWER_RUNG):
        cells = load_batched_costs(batched_costs_file, rung)
        seconds = batched_seconds(network, single, cells, reference)
        hours[rung] = seconds.sum() / 3600, seconds[has_rungs].sum() / 3600
        own = {int(m) for m in table["rungs"][rung]["batched"]}
        sizes[rung] = ", ".join(f"{m}" + ("" if m in own else " (the mean rung's)")
                                for m in sorted(cells))  # fmt: skip
    (total, runs), (lower, _) = hours[BATCHED_RUNG], hours[BATCHED_LOWER_RUNG]
    return [
        f"{head}: the network runs' {total:,.2f} GPU-hours (those {len(with_rungs)} runs' "
        f"{alone:,.2f} become {runs:,.2f}); a rung of M > 1 networks costs M x its "
        "epochs x the per-network epoch of M networks of the prior's widths, log-log "
        f"interpolated between the measured M = {sizes[BATCHED_RUNG]} and clamped beyond "
        f"({lower:,.2f} GPU-hours were every network 249 units wide, M = "
        f"{sizes[BATCHED_LOWER_RUNG]}: one width bucket, optimistic), scaled per space as the "
        f"one-network epoch ({path}, {_device(table)}, "
        f"{table['rungs'][BATCHED_RUNG].get('measured', '?')}); "
        "a lone network, the retraining and the other methods' networks one at a time"
    ]


def _repo_path(path: Path) -> str:
    """``path`` relative to the repository when inside it (as commands are typed)."""
    try:
        return str(Path(path).resolve().relative_to(COSTS_FILE.parents[1]))
    except ValueError:
        return str(path)


def dependent_lines(runs: Sequence[Any]) -> list[str]:
    """How parts that run after others are submitted (none: no line): the runs that wait, and
    the second stage, queued behind the first array by a SLURM dependency."""
    waiting = [run for run in runs if getattr(run, "waiting", "")]
    if not waiting:
        return []
    later = sorted({run.part for run in waiting})
    first = sorted({run.part for run in runs} - set(later))
    return [
        f"{len(waiting)} runs of parts that run after others ({', '.join(later)}) wait for "
        f"those parts: submit in two stages, parts=[{','.join(first)}] then "
        f"parts=[{','.join(later)}] with "
        "+hydra.launcher.additional_parameters.dependency=afterok:<the first array's job id> "
        "(docs/running-at-scale.md); a stage run again skips what is finished"
    ]


def epoch_costs_provenance(path: Path = EPOCH_COSTS_FILE) -> str:
    """Where the epoch-cost table comes from: the benchmark's command and date."""
    table = json.loads(Path(path).read_text())
    return (
        f"epoch costs: {Path(path).name}, measured {table.get('measured', '?')} by "
        f"`{table.get('command', '?')}`"
    )


def time_budget_lines(table: pd.DataFrame) -> list[str]:
    """How runs with a time budget were costed (none: no line)."""
    timed = table[table["budget_seconds"] > 0]
    if timed.empty:
        return []
    staged = timed["selection_stage"].to_numpy(dtype=bool)
    lines = []
    for with_stage, group in ((True, timed[staged]), (False, timed[~staged])):
        if group.empty:
            continue
        budgets = ", ".join(f"{h:g} h" for h in sorted(set(group["budget_seconds"] / 3600)))
        head = f"{len(group)} runs with a time budget ({budgets} of optimisation each)"
        lines.append(
            f"{head} are costed at that budget + {SELECTION_STAGE_ALLOWANCE:.0%} for the "
            "model-selection stage [assumption: its CV fits on H do not grow with the "
            "optimisation time and took 35-63 % of the smoke runs' seconds at 20 evaluations; "
            "re-measure with the medium profile]"
            if with_stage
            else f"{head} have no model-selection stage and are costed at that budget"
        )
    return lines


def print_cost(
    name: str,
    profile: str,
    runs: Sequence[Any],
    n_shards: int,
    max_array_size: int = MAX_ARRAY_SIZE,
    costs_file: Path = COSTS_FILE,
    epoch_costs_file: Path = EPOCH_COSTS_FILE,
    gpu_costs_file: Path = GPU_EPOCH_COSTS_FILE,
    batched_costs_file: Path = GPU_BATCHED_COSTS_FILE,
) -> int:
    """Print the cost of submitting ``runs`` in ``n_shards`` shards; returns the exit code."""
    check_submission(n_shards, max_array_size)
    if not runs:
        raise UsageError(f"{name}/{profile} has no runs")
    table = runs_table(runs)
    networks = bool((table["epochs"] > 0).any())
    epoch_costs = load_epoch_costs(epoch_costs_file) if networks else None
    result = estimate(table, load_costs(costs_file), n_shards, epoch_costs)
    for line in report(name, profile, result, max_array_size):
        print(line)
    lines = network_lines(table, epoch_costs, result.network_core_hours) if networks else []
    for line in [
        *lines,
        *train_fraction_lines(table),
        *time_budget_lines(table),
        *gpu_line(table, result, gpu_costs_file, batched_costs_file),
        *dependent_lines(runs),
    ]:
        print(line)
    print(costs_provenance(costs_file))
    if networks:
        print(epoch_costs_provenance(epoch_costs_file))
    warning = array_warning(len(runs), n_shards, max_array_size)
    if warning:
        print(warning, file=sys.stderr)
    return 0


# ------------------------------------------------------------------- launcher overrides


def _launcher_settings(launcher: str) -> list[str]:
    """The settings of ``hydra/launcher=<launcher>``; raises :class:`UsageError` naming the
    launchers when it is unknown."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        choices = GlobalHydra.instance().config_loader().get_group_options("hydra/launcher")
        choices = [c for c in choices if not c.startswith("_")]
        if launcher not in choices:
            raise UsageError(f"unknown launcher {launcher!r}; valid: {', '.join(choices)}")
        try:
            cfg = compose("config", [f"hydra/launcher={launcher}"], return_hydra_config=True)
        except HydraException as err:  # e.g. the submitit plugin is not installed
            raise UsageError(f"launcher {launcher}: {str(err).splitlines()[0]}") from err
    return [str(key) for key in cfg.hydra.launcher]


def check_launcher_overrides(overrides: Sequence[str]) -> None:
    """Reject an unknown ``hydra/launcher`` choice or ``hydra.launcher.<setting>`` with one
    line (Hydra's own message spans several and exits 1)."""
    pairs = [o.split("=", 1) for o in overrides if "=" in o and not o.startswith("-")]
    launcher = ([v for k, v in pairs if k == "hydra/launcher"] or [None])[-1]
    settings = [
        k.lstrip("~").split(".")[2]
        for k, _ in pairs
        if k.startswith(("hydra.launcher.", "~hydra.launcher."))
    ]
    if launcher is None and not settings:
        return
    valid = _launcher_settings(launcher or "basic")
    for setting in settings:
        if setting not in valid:
            raise UsageError(
                f"unknown setting hydra.launcher.{setting} of launcher {launcher or 'basic'}; "
                f"valid: {', '.join(valid)}"
            )


def _override_values(overrides: Sequence[str], key: str, default: int) -> list[Any]:
    """Every value that ``key`` takes in ``overrides`` (a sweep such as ``range(0,8)`` gives
    each of its values)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    ours = [o for o in overrides if o.split("=", 1)[0] == key]
    if not ours:
        return [default]
    (override,) = OverridesParser.create().parse_overrides(ours[-1:])
    return list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]


def check_shards(overrides: Sequence[str]) -> None:
    """Reject a ``shard`` outside ``[0, n_shards)`` before any job is submitted (each job would
    fail on its own, after the queue)."""
    for n_shards in _override_values(overrides, "n_shards", 1):
        if not isinstance(n_shards, int) or n_shards < 1:
            raise UsageError(f"n_shards must be an integer >= 1, got {n_shards!r}")
        for shard in _override_values(overrides, "shard", 0):
            if not isinstance(shard, int) or not 0 <= shard < n_shards:
                raise UsageError(f"shard must be in [0, {n_shards}), got {shard!r}")
