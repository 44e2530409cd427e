"""What the Optuna adapter (``hpo/optimizers/optuna_sampler.py``) adds to Optuna's own ask + tell.

On Chapter 3's SVM space (C and gamma, log-uniform in [1e-5, 1e5]), ``--n`` trials of the same
sampler, seeded alike, are run twice in this process: by Optuna's own loop
(``study.ask(fixed_distributions)``, ``study.tell``) and through the adapter
(``OptunaSampler.ask``, ``.tell``), against the same synthetic loss, whose time is not counted.
Both loops propose the same configurations (checked), so they do the same sampler work; the
difference is the adapter's. After an untimed warm-up of each arm, each is repeated
``--repeats`` times, interleaved, in alternating order; the table gives the median over
repeats of the median ask + tell time per trial and of the total, and the ratio
adapter / Optuna (1.05 = 5 % overhead). Times are CPU seconds of this process
(``time.process_time``): on a shared core the wall clock would also count the neighbours' work.

    taskset -c 0 python benchmarks/optuna_adapter_overhead.py [--n 100] [--repeats 3]
        [--samplers TPESampler GPSampler]
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna

from experiments.configuration.spaces import plain_space, space_config
from hpo.optimizers.optuna_sampler import OptunaSampler, distribution

SEED = 7


def loss(config: dict[str, Any]) -> float:
    """A smooth synthetic loss on the SVM space (minimum near C = 10, gamma = 0.01)."""
    return (math.log10(config["C"]) - 1) ** 2 / 50 + (math.log10(config["gamma"]) + 2) ** 2 / 50


def sampler_seed() -> int:
    """The seed the adapter draws from its generator (``default_rng(SEED)``)."""
    return int(np.random.default_rng(SEED).integers(2**31 - 1))


def optuna_loop(sampler: str, n: int) -> tuple[list[float], list[dict[str, Any]]]:
    space = plain_space(space_config("svm_rbf"))
    distributions = {p.name: distribution(p) for p in space.parameters}
    cls = getattr(optuna.samplers, sampler)
    study = optuna.create_study(direction="minimize", sampler=cls(seed=sampler_seed()))
    seconds, configs = [], []
    for _ in range(n):
        started = time.process_time()
        trial = study.ask(distributions)
        spent = time.process_time() - started
        value = loss(trial.params)
        started = time.process_time()
        study.tell(trial, value)
        seconds.append(spent + time.process_time() - started)
        configs.append(dict(trial.params))
    return seconds, configs


def adapter_loop(sampler: str, n: int) -> tuple[list[float], list[dict[str, Any]]]:
    space = plain_space(space_config("svm_rbf"))
    optimizer = OptunaSampler(
        space, n, np.random.default_rng(SEED), sampler={"_target_": f"optuna.samplers.{sampler}"}
    )
    seconds, configs = [], []
    for _ in range(n):
        started = time.process_time()
        proposal = optimizer.ask()
        spent = time.process_time() - started
        value = loss(dict(proposal.config))
        started = time.process_time()
        optimizer.tell(proposal, value)
        seconds.append(spent + time.process_time() - started)
        configs.append(dict(proposal.config))
    return seconds, configs


def measure(sampler: str, n: int, repeats: int) -> dict[str, float]:
    arms: dict[str, Callable[[str, int], tuple[list[float], list[dict[str, Any]]]]] = {
        "optuna": optuna_loop,
        "adapter": adapter_loop,
    }
    medians: dict[str, list[float]] = {name: [] for name in arms}
    totals: dict[str, list[float]] = {name: [] for name in arms}
    proposed: dict[str, list[dict[str, Any]]] = {}
    for loop in arms.values():  # warm-up, untimed: imports, caches, compiled kernels
        loop(sampler, min(n, 10))
    for repeat in range(repeats):  # the order alternates, so neither arm always runs first
        order = list(arms.items()) if repeat % 2 == 0 else list(arms.items())[::-1]
        for name, loop in order:
            seconds, configs = loop(sampler, n)
            medians[name].append(float(np.median(seconds)))
            totals[name].append(float(np.sum(seconds)))
            proposed[name] = configs
    if proposed["optuna"] != proposed["adapter"]:
        raise SystemExit(f"{sampler}: the two loops proposed different configurations")
    row = {
        f"{k}_{name}": float(np.median(v[name]))
        for k, v in (("median", medians), ("total", totals))
        for name in arms
    }
    row["ratio_median"] = row["median_adapter"] / row["median_optuna"]
    row["ratio_total"] = row["total_adapter"] / row["total_optuna"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--samplers", nargs="+", default=["TPESampler", "GPSampler"])
    args = parser.parse_args()
    optuna.logging.set_verbosity(logging.WARNING)
    print(f"optuna {optuna.__version__}, n = {args.n} trials, {args.repeats} repeats, SVM space")
    print(
        f"{'sampler':<12} {'optuna ms':>10} {'adapter ms':>11} {'ratio':>6}"
        f" {'optuna s':>9} {'adapter s':>10} {'ratio':>6}"
    )
    for sampler in args.samplers:
        row = measure(sampler, args.n, args.repeats)
        print(
            f"{sampler:<12} {1e3 * row['median_optuna']:>10.3f}"
            f" {1e3 * row['median_adapter']:>11.3f}"
            f" {row['ratio_median']:>6.3f} {row['total_optuna']:>9.3f}"
            f" {row['total_adapter']:>10.3f} {row['ratio_total']:>6.3f}"
        )
    print("ms: median ask + tell per trial; s: total over the n trials; ratio: adapter / optuna")


if __name__ == "__main__":
    main()
