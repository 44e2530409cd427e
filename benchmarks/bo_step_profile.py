"""Where one GP-EI step's grid scoring goes: the seconds of its parts and how many of the
20 000 candidates reach each stage, for ``benchmarks/bo_step.py``'s ``ours-gp`` step.

The parts are timed at their function boundaries (each wrapped by a timer, nothing of the engine
copied): the whole step; ``top_k`` (the grid's EI); in it the float32 correlations of the
screen (``corr_f32``) and the float64 refinement of the candidates the screen lets through
(``_pruned_values``; its count is how many); the float64 correlations (``cross_corr``) and
exact variances (``var_from_corr``; its count is of how many points) of every exact score, the
refinement's, the hints' and the first screened ones' alike; the slice sampler; the L-BFGS-B
refinement.

    taskset -c 1 env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HPO_GP_THREADS=1 \\
        NUMBA_NUM_THREADS=1 python benchmarks/bo_step_profile.py --n 200 --d 2 10

Chunks run on the engine's threads; with more than one (``HPO_GP_THREADS``) the parts inside
``top_k`` add up the threads' seconds, so read them on one thread.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from bo_step import Ours, objective

from hpo.gp import acquisition, kernels, model, slice_sampler
from hpo.gp import acquisition_optimizers as optimizers

ORDER = (
    "EI grid (top_k)",
    "  float32 screen: correlations",
    "  float64 refinement of the screened",
    "  float64 correlations, every score",
    "  exact variances, every score",
    "slice sampling",
    "L-BFGS-B refinement",
)
SECONDS: dict[str, float] = defaultdict(float)
COUNTS: dict[str, int] = defaultdict(int)


def timed(owner: Any, name: str, label: str, count: Callable[..., int] | None = None) -> None:
    """Wrap ``owner.name`` so that its seconds add to ``SECONDS[label]`` (and ``count(*args)`` to
    ``COUNTS[label]``)."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SECONDS[label] += time.perf_counter() - started
            if count is not None:
                COUNTS[label] += count(*args, **kwargs)

    setattr(owner, name, wrapper)


def instrument() -> None:
    timed(acquisition.ExpectedImprovement, "top_k", "EI grid (top_k)")
    timed(kernels.ScaledDistanceKernel, "corr_f32", "  float32 screen: correlations")
    timed(
        acquisition.ExpectedImprovement,
        "_pruned_values",
        "  float64 refinement of the screened",
        count=lambda self, Xs, *rest: len(Xs),
    )
    timed(model.GPPosterior, "cross_corr", "  float64 correlations, every score")
    timed(
        model.GPPosterior,
        "var_from_corr",
        "  exact variances, every score",
        count=lambda self, corr, *rest: corr.shape[2],
    )
    timed(slice_sampler.HyperChain, "sample", "slice sampling")
    timed(optimizers, "refine_lbfgsb", "L-BFGS-B refinement")


def profile(n: int, d: int, steps: int) -> tuple[float, dict[str, float], dict[str, int]]:
    """Mean seconds of a step at ``n`` results in ``d`` dimensions, and its parts' means."""
    impl = Ours("gp", d, seed=0)
    rng = np.random.default_rng(0)
    U = impl.points(rng, n - 1)
    impl.observe(U, np.array([objective(u) for u in U]))
    u = impl.ask()  # the chain's burn-in and the lazy imports: not measured
    SECONDS.clear()
    COUNTS.clear()
    started = time.perf_counter()
    for _ in range(steps):
        impl.tell(u, objective(u))
        u = impl.ask()
    step = (time.perf_counter() - started) / steps
    seconds = {label: SECONDS[label] / steps for label in ORDER if label in SECONDS}
    return step, seconds, {label: count // steps for label, count in COUNTS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[200])
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10])
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    instrument()
    for n in args.n:
        for d in args.d:
            step, seconds, counts = profile(n, d, args.steps)
            print(f"n = {n}, d = {d}: step {step:.3f} s")
            for label, value in seconds.items():
                share = f"{100 * value / step:4.0f} %"
                reached = f"  ({counts[label]} candidates)" if label in counts else ""
                print(f"  {label:<38} {value:.4f} s {share}{reached}")


if __name__ == "__main__":
    main()
