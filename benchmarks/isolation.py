"""The cost of per-evaluation limits (seed 004 §4.1): a fit in a child process vs in-process.

Each evaluation is one :func:`hpo.learners.fit_and_predict` call (a decision tree on the
breast-cancer set, 2/3 training, predictions on the other third), run ``--n`` times in-process
and ``--n`` times through :class:`hpo.evaluation.isolation.IsolatedWorker` (forkserver, limits set
but never
reached). The table gives the median and 90th percentile seconds per evaluation, the median
overhead of isolation (target < 50 ms) and the parent's resident memory before and
after the isolated calls (it must not grow: nothing is kept per call).

    python benchmarks/isolation.py [--n 1000] [--learner decision_tree]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import psutil
from sklearn.datasets import load_breast_cancer

from hpo.evaluation.isolation import EvaluationLimits, IsolatedWorker
from hpo.learners import FitGuard, fit_and_predict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--learner", default="decision_tree")
    parser.add_argument("--start-method", default="forkserver")
    args = parser.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    cut = 2 * len(y) // 3
    call = (
        args.learner,
        {"decision_tree__max_depth": 5},
        FitGuard(),
        X[:cut],
        y[:cut],
        [(X[cut:], y[cut:])],
        0,
        None,
    )
    local = []
    for _ in range(args.n):
        started = time.perf_counter()
        fit_and_predict(*call)
        local.append(time.perf_counter() - started)
    me = psutil.Process()
    limits = EvaluationLimits(time_s=60, memory_mb=3072, start_method=args.start_method)
    isolated = []
    with IsolatedWorker(limits) as worker:
        worker.run(fit_and_predict, *call)  # the child's start and imports, once
        rss_before = me.memory_info().rss / 2**20
        for _ in range(args.n):
            started = time.perf_counter()
            result = worker.run(fit_and_predict, *call)
            isolated.append(time.perf_counter() - started)
            assert result.failure is None
        rss_after = me.memory_info().rss / 2**20
    local_ms, isolated_ms = 1e3 * np.array(local), 1e3 * np.array(isolated)
    print(f"{args.n} evaluations of {args.learner} on breast-cancer ({cut} training rows)")
    print(f"{'mode':<12}{'median ms':>12}{'p90 ms':>10}")
    print(f"{'in-process':<12}{np.median(local_ms):>12.2f}{np.percentile(local_ms, 90):>10.2f}")
    print(f"{'isolated':<12}{np.median(isolated_ms):>12.2f}{np.percentile(isolated_ms, 90):>10.2f}")
    overhead = np.median(isolated_ms) - np.median(local_ms)
    print(f"isolation overhead (median): {overhead:.2f} ms per evaluation (target < 50 ms)")
    print(
        f"ratio isolated / in-process (median): {np.median(isolated_ms) / np.median(local_ms):.2f}"
    )
    print(f"parent RSS: {rss_before:.1f} MB before, {rss_after:.1f} MB after {args.n} calls")


if __name__ == "__main__":
    main()
