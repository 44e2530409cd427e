"""Seconds of one SMBO step of seed 002's surrogates with n = 30 points told, in MRBI's 17
conditional dimensions (issue 27's target: under 1 s each).

One step = ``ask`` (fit the model, score the candidates, pick) after 30 ``tell``s of random
losses; medians over ``--repeats`` fresh optimizers. ``skopt-gp`` and ``skopt-rf`` are ours
(scikit-learn's GP and forest, 10,000 EI candidates); ``tpe`` is hyperopt's ``tpe.suggest``
itself behind our adapter, so its row is the library's own step plus the adapter's bookkeeping.

    nice -n 5 python benchmarks/surrogate_step.py [--repeats 5] [--n 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from experiments.spaces import load_space
from hpo.optimizers import make_optimizer

METHODS = {
    "skopt-gp": ("surrogate", {"model": "gp", "n_initial": 3}),
    "skopt-rf": ("surrogate", {"model": "forest", "n_initial": 3}),
    "tpe": ("tpe", {"n_startup_jobs": 1}),
}


def step_seconds(family: str, settings: dict, n: int, seed: int) -> float:
    space = load_space("ffnn_mrbi")
    optimizer = make_optimizer(family, space, n + 1, np.random.default_rng(seed), **settings)
    losses = np.random.default_rng(seed + 1000)
    for _ in range(n):
        proposal = optimizer.ask()
        optimizer.tell(proposal, float(losses.uniform(0.5, 0.9)))
    start = time.perf_counter()
    optimizer.ask()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=30)
    args = parser.parse_args()
    print(f"seconds per step at n = {args.n}, ffnn_mrbi (17 dimensions), median of {args.repeats}")
    for name, (family, settings) in METHODS.items():
        times = [step_seconds(family, settings, args.n, seed) for seed in range(args.repeats)]
        median, low, high = statistics.median(times), min(times), max(times)
        print(f"{name:10} {median:8.3f}   (min {low:.3f}, max {high:.3f})")


if __name__ == "__main__":
    main()
