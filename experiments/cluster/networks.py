"""What network runs cost: epochs per run from a method's fidelity plan (Hyperband, BOHB), the
seconds per epoch measured on a CPU and a GPU, and a rung's networks trained batched on a GPU."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.configuration.config import UsageError
from hpo.optimizers import MultiFidelity, optimizer_class
from hpo.optimizers.hyperband import Fidelity

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"  # the measured tables
EPOCH_COSTS_FILE = BENCHMARKS / "ffnn_epoch_costs.json"


GPU_EPOCH_COSTS_FILE = BENCHMARKS / "ffnn_epoch_costs_cuda.json"  # measured on a GPU


# seconds per epoch per network of M networks trained as one batched model, on a GPU
GPU_BATCHED_COSTS_FILE = BENCHMARKS / "ffnn_batched_costs_cuda.json"


BATCHED_RUNG = "prior"  # the batched table's rung a run's rungs cost as: widths from the prior


BATCHED_LOWER_RUNG = "mean"  # every network at the mean width: one width bucket, a lower bound


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


def load_epoch_costs(path: Path = EPOCH_COSTS_FILE) -> pd.Series:
    """Seconds per epoch of each seed space's representative network, indexed by space name,
    from ``benchmarks/ffnn_epoch.py --json``."""
    return epoch_costs_of(read_epoch_table(path), path)


def read_epoch_table(path: Path) -> dict[str, Any]:
    """The whole table ``benchmarks/ffnn_epoch.py --json`` wrote (its device and date too)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read the epoch-cost table {path}: {err}") from err


def epoch_costs_of(table: Mapping[str, Any], path: Path) -> pd.Series:
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


def load_batched_costs(path: Path, rung: str) -> dict[int, float]:
    """Seconds per epoch per network of M networks trained as one batched model, by M, for
    ``rung`` of the batched table (``benchmarks/ffnn_epoch.py --batched --json``). A rung not
    measured at M = 1 takes the ``mean`` rung's M = 1: one network is one group, unpadded,
    whatever its width."""
    table = read_epoch_table(path)
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


def epoch_costs_provenance(path: Path = EPOCH_COSTS_FILE) -> str:
    """Where the epoch-cost table comes from: the benchmark's command and date."""
    table = json.loads(Path(path).read_text())
    return (
        f"epoch costs: {Path(path).name}, measured {table.get('measured', '?')} by "
        f"`{table.get('command', '?')}`"
    )
