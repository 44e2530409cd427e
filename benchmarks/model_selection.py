"""Speed of the statistical model-selection cascade (Bermúdez-Chacón 2014, §3.5, Algorithm 2).

Times :func:`hpo.significance.comparisons.select_models` on 10 candidates x 30 scores (3 x 10-fold
CV on
the hold-out part, §3.3) on both paths of the cascade (normal, equal-variance scores take ANOVA
+ Tukey HSD; skewed ones Kruskal-Wallis + Nemenyi), the k-means filter of one leaf (§3.5.1) and
Algorithm 3 over a 17-family tree of 10 candidates per leaf; beside them, scipy's own
``tukey_hsd`` on all 45 pairs, which the cascade avoids. The issue's target: well under a second
for 10 candidates x 30 scores.

    nice -n 5 python benchmarks/model_selection.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from hpo.significance.comparisons import (
    Candidate,
    kmeans_filter,
    select_hierarchically,
    select_models,
)


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
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    means = np.linspace(0.70, 0.80, 10)
    normal = [Candidate(f"n{i}", tuple(rng.normal(m, 0.02, 30))) for i, m in enumerate(means)]
    skewed = [
        Candidate(f"s{i}", tuple(m - rng.exponential(0.03, 30) ** 2)) for i, m in enumerate(means)
    ]
    points, scores = rng.uniform(size=(200, 3)), rng.uniform(size=200)
    tree = {
        f"family{f}": [
            Candidate(f"f{f}c{i}", tuple(rng.normal(0.7 + 0.01 * i, 0.02, 30))) for i in range(10)
        ]
        for f in range(17)
    }
    groups = [c.scores for c in normal]
    rows = [
        ("select_models, ANOVA + Tukey path", lambda: select_models(normal)),
        ("select_models, Kruskal + Nemenyi path", lambda: select_models(skewed)),
        ("kmeans_filter, 200 points -> 10", lambda: kmeans_filter(points, scores)),
        ("select_hierarchically, 17 leaves x 10", lambda: select_hierarchically(tree, top_n=3)),
        ("scipy.stats.tukey_hsd, all 45 pairs", lambda: stats.tukey_hsd(*groups)),
    ]  # fmt: skip
    print(
        f"paths: {select_models(normal).comparison.test}, {select_models(skewed).comparison.test}"
    )
    print(f"{'what':<42} {'best s':>8} {'median s':>9}")
    for label, run in rows:
        best, median = timed(run, args.repeats)
        print(f"{label:<42} {best:8.3f} {median:9.3f}")


if __name__ == "__main__":
    main()
