"""The cost report of a submission (``python -m experiments.sweep cost``): runs, shards, the job
array's size against SLURM's limit, core-hours, memory, a timeout per shard, and the lines on
network runs, GPU-hours, runs that wait for other parts and runs with a time budget."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.cluster.costs import (
    COSTS_FILE,
    FULL_FIT_FAMILY,
    SELECTION_STAGE_ALLOWANCE,
    TIMEOUT_MARGIN,
    Estimate,
    costs_provenance,
    estimate,
    load_costs,
    runs_table,
)
from experiments.cluster.networks import (
    BATCHED_LOWER_RUNG,
    BATCHED_RUNG,
    EPOCH_COSTS_FILE,
    GPU_BATCHED_COSTS_FILE,
    GPU_EPOCH_COSTS_FILE,
    batched_seconds,
    epoch_costs_of,
    epoch_costs_provenance,
    load_batched_costs,
    load_epoch_costs,
    network_seconds,
    read_epoch_table,
    reference_epoch,
)
from experiments.configuration.config import UsageError
from hpo.optimizers import MultiFidelity, optimizer_class

MAX_ARRAY_SIZE = 1001  # SLURM's default MaxArraySize


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
    measured = read_epoch_table(gpu_costs_file)
    single = epoch_costs_of(measured, gpu_costs_file)
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
    table = read_epoch_table(batched_costs_file)
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
