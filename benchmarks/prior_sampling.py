"""Speed of top-down sampling from per-context priors (Bermúdez-Chacón 2014, §3.1.3).

Draws 10,000 configurations of the 17-learner tree of ``conf/space/seed003.yaml`` (48
parameters, two virtual ones, priors of every family) with :meth:`hpo.space.priors.PriorSpace.
sample_batch`, several times, and prints the best and median wall time; beside it, one
configuration at a time (:meth:`PriorSpace.sample`) and the plain unit-cube sampler of
Chapter 5's space (:meth:`hpo.space.search_space.Space.sample`) for scale. The issue's target:
10,000
configurations in under a second.

    nice -n 5 python benchmarks/prior_sampling.py [--n 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from experiments.configuration.spaces import load_prior_space, load_space


def timed(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(best, median) wall seconds of ``repeats`` calls of ``run``."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="configurations per draw")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tree = load_prior_space("seed003")
    cash = load_space("sklearn_cash")
    rng = np.random.default_rng(0)
    single = max(args.n // 10, 1)
    rows = [
        (f"seed003 tree, sample_batch({args.n})", args.n,
         timed(lambda: tree.sample_batch(rng, args.n), args.repeats)),
        (f"seed003 tree, sample() x {single}", single,
         timed(lambda: [tree.sample(rng) for _ in range(single)], args.repeats)),
        (f"sklearn_cash Space.sample() x {single}", single,
         timed(lambda: [cash.sample(rng) for _ in range(single)], args.repeats)),
    ]  # fmt: skip
    print(f"{tree.space.dim} parameters, {len(tree.space.learners)} learners")
    print(f"{'what':<42} {'best s':>8} {'median s':>9} {'us/config':>10}")
    for label, n, (best, median) in rows:
        print(f"{label:<42} {best:8.3f} {median:9.3f} {1e6 * median / n:10.1f}")


if __name__ == "__main__":
    main()
