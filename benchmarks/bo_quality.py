"""Optimisation quality: median simple regret of our GP-EI against random search and GP peers.

Problems: Branin / 100 (d=2), Hartmann-6 (d=6) and the RBF-SVM hold-out validation error of five
UCI-121 datasets on Chapter 3's 2-D space (``experiments.objectives.svm_validation_objective``).
Regret after ``t`` evaluations = best value among the first ``t`` minus the optimum (the known
one for the synthetic functions; for an SVM problem and seed, the best value any method found in
this run of the benchmark, every method seeing the same split for a seed). Branin is divided by
100 to bring it to the O(1) scale of error rates: the engine, like Spearmint, feeds raw losses to
scale-dependent priors ([decide], docs/deviations.md), while both peers standardise internally.
Methods:
``gp`` (ours, Spearmint's settings), ``gp-std`` (ours with the two non-Spearmint switches
``standardize`` and ``log_hypers``: the losses standardised as the peers do, and amp2 and noise
slice-sampled on a log scale), ``rs``, and when installed Optuna's ``GPSampler`` and
scikit-optimize's GP ``Optimizer``.

    python benchmarks/bo_quality.py [--quick] [--seeds 20] [--jobs 2] [--json FILE] [--cache DIR]

The full run takes hours (scikit-optimize's step is ~1 s at 100 observations). With ``--cache DIR``
every finished (problem, method, seed) trace is written to DIR as it completes, and a re-run with
the same DIR reuses them: an interrupted benchmark resumes where it stopped. A cached trace is
keyed by a fingerprint of everything it depends on (:func:`fingerprint`: the source files of the
method and of the problem, the peer's adapter, package versions), so a change to any of them
recomputes it and unrelated changes do not.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np
from bo_step import IMPLEMENTATIONS, Ours, available
from joblib import Parallel, delayed

from experiments.run.results import provenance

Objective = Callable[[np.ndarray], float]
SVM_DATASETS = (
    "ionosphere",
    "pima",
    "breast-cancer-wisc",
    "statlog-heart",
    "conn-bench-sonar-mines-rocks",
)
BRANIN_MIN = 0.397887357729739 / 100
HARTMANN6_MIN = -3.322368011391339
HARTMANN6_A = np.array(
    [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
     [17, 8, 0.05, 10, 0.1, 14]]
)  # fmt: skip
HARTMANN6_P = 1e-4 * np.array(
    [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
)  # fmt: skip
HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def branin(u: np.ndarray) -> float:
    """Branin on the unit square, divided by 100."""
    x1, x2 = 15.0 * u[0] - 5.0, 15.0 * u[1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return float((x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10) / 100


def hartmann6(u: np.ndarray) -> float:
    return float(-HARTMANN6_ALPHA @ np.exp(-(HARTMANN6_A * (u - HARTMANN6_P) ** 2).sum(axis=1)))


def problem(name: str, seed: int) -> tuple[int, Objective, float | None]:
    """``(d, objective, known optimum or None)`` of problem ``name`` for repetition ``seed``."""
    if name == "branin":
        return 2, branin, BRANIN_MIN
    if name == "hartmann6":
        return 6, hartmann6, HARTMANN6_MIN
    from experiments.objectives import svm_validation_objective

    return 2, svm_validation_objective(name.removeprefix("svm:"), seed), None


REPO_ROOT = Path(__file__).resolve().parents[1]
OUR_SOURCES = ("hpo/gp", "hpo/optimizers", "hpo/space/search_space.py", "hpo/seeding.py")
# what the SVM objective runs: the run's evaluator and the library, except the optimizer engine
SVM_SOURCES = ("experiments/objectives.py", "experiments/run/runner.py", "hpo")
NOT_OBJECTIVE = ("hpo/gp", "hpo/optimizers")
# our methods: (optimizer family, settings); gp-std = the engine with the two switches that are
# not Spearmint (standardised losses, log-scale slice sampling of amp2 and noise)
OURS: dict[str, tuple[str, dict[str, object]]] = {
    "gp": ("gp", {}),
    "gp-std": ("gp", {"standardize": True, "log_hypers": True}),
    "rs": ("rs", {}),
}
PACKAGES = {
    "gp": ("numpy", "scipy", "numba"),
    "gp-std": ("numpy", "scipy", "numba"),
    "rs": ("numpy",),
    "optuna-gp": ("numpy", "optuna", "torch"),
    "skopt-gp": ("numpy", "scipy", "scikit-optimize", "scikit-learn"),
}


def fingerprint(problem_name: str, method: str) -> str:
    """A hash of what the trace of ``method`` on ``problem_name`` depends on (seed aside)."""
    digest = hashlib.sha256()
    sources = list(OUR_SOURCES) if method in OURS else []
    adapter = Ours if method in OURS else IMPLEMENTATIONS[method][1]
    digest.update(inspect.getsource(adapter).encode())
    if method in OURS:
        digest.update(repr(OURS[method]).encode())
    if problem_name.startswith("svm:"):
        sources += SVM_SOURCES
        digest.update(metadata.version("scikit-learn").encode())
    else:
        for function in (problem, branin, hartmann6):
            digest.update(inspect.getsource(function).encode())
        for constant in (BRANIN_MIN, HARTMANN6_MIN, HARTMANN6_A, HARTMANN6_P, HARTMANN6_ALPHA):
            digest.update(repr(constant).encode())
    files = []
    for source in sources:
        path = REPO_ROOT / source
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    engine = [REPO_ROOT / source for source in NOT_OBJECTIVE]
    for file in dict.fromkeys(files):  # unique, in order
        if method not in OURS and any(file.is_relative_to(part) for part in engine):
            continue  # a peer's trace on an SVM problem does not depend on our engine
        digest.update(file.relative_to(REPO_ROOT).as_posix().encode() + file.read_bytes())
    for package in PACKAGES[method]:
        digest.update(f"{package}=={metadata.version(package)}".encode())
    return digest.hexdigest()[:12]


def make(method: str, d: int, seed: int):
    if method in OURS:
        family, settings = OURS[method]
        return Ours(family, d, seed, **settings)
    return IMPLEMENTATIONS[method][1](d, seed)


def trace(name: str, method: str, seed: int, budget: int, cache: Path | None = None) -> list[float]:
    """Values of the ``budget`` points ``method`` evaluates on ``name`` with ``seed``, read from
    ``cache`` when a previous run of the same code stored them there."""
    stored = None
    if cache is not None:
        key = f"{name.replace(':', '-')}__{method}__{seed}__{budget}__{fingerprint(name, method)}"
        stored = cache / f"{key}.json"
        if stored.exists():
            return json.loads(stored.read_text())["values"]
    d, objective, _ = problem(name, seed)
    impl = make(method, d, seed)
    values = []
    for _ in range(budget):
        u = impl.ask()
        values.append(objective(u))
        impl.tell(u, values[-1])
    if stored is not None:
        partial = stored.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"revision": provenance()["git_revision"], "values": values}))
        partial.replace(stored)  # atomic: a killed run never leaves a truncated trace
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, 25 evaluations, 3 problems")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budgets", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--problems", nargs="+")
    parser.add_argument(
        "--methods", nargs="+", default=["gp", "gp-std", "rs", "optuna-gp", "skopt-gp"]
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write the median regrets to this file")
    parser.add_argument("--cache", type=Path, help="store and reuse finished traces in this folder")
    args = parser.parse_args()
    problems = args.problems or ["branin", "hartmann6", *(f"svm:{n}" for n in SVM_DATASETS)]
    if args.quick:
        args.seeds, args.budgets = 3, [10, 25]
        problems = args.problems or ["branin", "hartmann6", f"svm:{SVM_DATASETS[0]}"]
    unknown = sorted(set(args.methods) - set(OURS) - set(IMPLEMENTATIONS))
    if unknown:
        parser.error(f"unknown methods {unknown}; valid: {', '.join([*OURS, *IMPLEMENTATIONS])}")
    methods = [m for m in args.methods if m in OURS] + available(
        [m for m in args.methods if m not in OURS]
    )
    budget = max(args.budgets)
    tasks = [(p, m, s) for p in problems for s in range(args.seeds) for m in methods]
    cache = args.cache
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        print(f"trace cache: {cache}", flush=True)
    traces = Parallel(n_jobs=args.jobs, verbose=5)(
        delayed(trace)(p, m, s, budget, cache) for p, m, s in tasks
    )
    best = {(p, m, s): np.minimum.accumulate(v) for (p, m, s), v in zip(tasks, traces, strict=True)}
    results = []
    for p in problems:
        for s in range(args.seeds):
            optimum = problem(p, s)[2] if not p.startswith("svm:") else None
            if optimum is None:
                optimum = min(best[p, m, s][-1] for m in methods)
            for m in methods:
                best[p, m, s] = best[p, m, s] - optimum
        for m in methods:
            for t in args.budgets:
                regret = float(np.median([best[p, m, s][t - 1] for s in range(args.seeds)]))
                results.append({"problem": p, "method": m, "budget": t, "median_regret": regret})
    report(results, problems, methods, args.budgets)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


def report(
    results: list[dict], problems: list[str], methods: list[str], budgets: list[int]
) -> None:
    """Median regret per (problem, budget) and the mean rank of each method across problems."""
    table = {(r["problem"], r["method"], r["budget"]): r["median_regret"] for r in results}
    print(f"{'problem':<36} {'t':>4} " + " ".join(f"{m:>11}" for m in methods))
    for p in problems:
        for t in budgets:
            print(f"{p:<36} {t:>4} " + " ".join(f"{table[p, m, t]:>11.4g}" for m in methods))
    for t in budgets:
        ranks = np.mean([_ranks([table[p, m, t] for m in methods]) for p in problems], axis=0)
        print(
            f"mean rank at t={t}: "
            + ", ".join(f"{m}={r:.2f}" for m, r in zip(methods, ranks, strict=True))
        )


def _ranks(values: list[float]) -> np.ndarray:
    """Ranks (1 = best), ties sharing the average rank."""
    values = np.asarray(values)
    return np.array([1 + np.sum(values < v) + 0.5 * (np.sum(values == v) - 1) for v in values])


if __name__ == "__main__":
    main()
