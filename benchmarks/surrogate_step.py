"""Seconds of one SMBO step of seed 002's surrogates with n = 30 points told, in MRBI's 17
conditional dimensions (the target: under 1 s each), beside each library's own step.

One step = ``ask`` (fit the model, score the candidates, pick) after 30 ``tell``s of random
losses; medians over ``--repeats`` fresh optimizers. Ours: ``skopt-gp`` and ``skopt-rf``
(scikit-learn's GP and forest, 10,000 EI candidates) and ``tpe`` (hyperopt's ``tpe.suggest``
behind our adapter). Peers, on the same 17 dimensions and budgets:

* ``scikit-optimize GP`` / ``RF``: ``skopt.Optimizer`` with the seed's settings (3 initial points,
  EI, acquisition by 10,000 random samples); skopt fits in ``tell``, so its step is the 30th
  ``tell`` plus the ``ask``. Needs scikit-optimize (the ``baselines`` extra; skipped without it).
* ``hyperopt TPE``: ``fmin`` with ``tpe.suggest`` (one start point) adding its 31st trial to a
  ``Trials`` of 30, on the same converted space (``hpo.optimizers.tpe.hyperopt_space``).

    nice -n 5 python benchmarks/surrogate_step.py [--repeats 5] [--n 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from experiments.configuration.spaces import load_space
from hpo.optimizers import make_optimizer
from hpo.space.search_space import Categorical, Integer, Real

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


def skopt_dimensions() -> list:
    """MRBI's 17 dimensions as scikit-optimize's (every one always active, as the seed's)."""
    from skopt.space import Categorical as SkCategorical
    from skopt.space import Integer as SkInteger
    from skopt.space import Real as SkReal

    dimensions = []
    for p in load_space("ffnn_mrbi").parameters:
        prior = "log-uniform" if getattr(p, "log", False) else "uniform"
        if isinstance(p, Real):
            dimensions.append(SkReal(p.low, p.high, prior=prior, name=p.name))
        elif isinstance(p, Integer):
            dimensions.append(SkInteger(p.low, p.high, prior=prior, name=p.name))
        elif isinstance(p, Categorical):
            dimensions.append(SkCategorical(list(p.choices), name=p.name))
    return dimensions


def skopt_step(model: str, n: int, seed: int) -> float:
    from skopt import Optimizer

    optimizer = Optimizer(
        skopt_dimensions(),
        base_estimator=model,
        n_initial_points=3,
        acq_func="EI",
        acq_optimizer="sampling",
        acq_optimizer_kwargs={"n_points": 10_000},
        random_state=seed,
    )
    losses = np.random.default_rng(seed + 1000)
    points = optimizer.ask(n_points=n - 1) if n > 1 else []
    optimizer.tell(points, [float(losses.uniform(0.5, 0.9)) for _ in points])
    last = optimizer.ask()
    start = time.perf_counter()
    optimizer.tell(last, float(losses.uniform(0.5, 0.9)))
    optimizer.ask()
    return time.perf_counter() - start


def hyperopt_step(n: int, seed: int) -> float:
    from hyperopt import STATUS_OK, Trials, fmin, tpe

    from hpo.optimizers.tpe import hyperopt_space

    space = hyperopt_space(load_space("ffnn_mrbi"))
    losses = np.random.default_rng(seed + 1000)

    def objective(_: object) -> dict:
        return {"loss": float(losses.uniform(0.5, 0.9)), "status": STATUS_OK}

    trials = Trials()
    algo = partial(tpe.suggest, n_startup_jobs=1)
    rstate = np.random.default_rng(seed)
    options = {"trials": trials, "rstate": rstate, "show_progressbar": False}
    fmin(objective, space, algo, max_evals=n, **options)
    start = time.perf_counter()
    fmin(objective, space, algo, max_evals=n + 1, **options)
    return time.perf_counter() - start


def peers() -> dict[str, Callable[[int, int], float]]:
    rows: dict[str, Callable[[int, int], float]] = {}
    try:
        import skopt  # noqa: F401
    except ImportError:
        print("(scikit-optimize not installed: its rows are skipped; pip install scikit-optimize)")
    else:
        rows["scikit-optimize GP"] = partial(skopt_step, "GP")
        rows["scikit-optimize RF"] = partial(skopt_step, "RF")
    rows["hyperopt TPE"] = hyperopt_step
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--only", nargs="*", default=None, help="rows to time (default: all)")
    args = parser.parse_args()
    print(f"seconds per step at n = {args.n}, ffnn_mrbi (17 dimensions), median of {args.repeats}")
    rows = {
        name: partial(step_seconds, family, settings)
        for name, (family, settings) in METHODS.items()
    }
    rows.update(peers())
    for name, step in rows.items():
        if args.only and name not in args.only:
            continue
        times = [step(args.n, seed) for seed in range(args.repeats)]
        median, low, high = statistics.median(times), min(times), max(times)
        print(f"{name:20} {median:8.3f}   (min {low:.3f}, max {high:.3f})")


if __name__ == "__main__":
    main()
