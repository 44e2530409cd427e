"""Wall time of one Bayesian-optimisation step: our fully Bayesian GP-EI against GP peers.

One step = ``tell`` the last result + ``ask`` the next point (hyperparameter fitting or sampling
and acquisition optimisation), measured with ``n`` observations already told, for
``n in {25, 100, 200}`` and ``d in {2, 10, 14}``. Peers, when installed, run in the same process:
Optuna's ``GPSampler`` (a MAP GP on PyTorch) and scikit-optimize's ``Optimizer`` with a GP.
Also defines the ask/tell adapters that ``bo_quality.py`` reuses.

Chapter 5's variants (``ours-cond-ls``, ``ours-laplace-ls``, ``ours-matern-ls``: conditional,
Laplace, Matérn kernels with local search and Chapter 5's priors, thesis §5.5) run on
:func:`conditional_space` (d = 14: one choice among four + 13 conditional reals, the size of the
thesis's scikit-learn space, Table 5.1); their rows exist for d = 14 only (``-`` elsewhere).

    python benchmarks/bo_step.py [--repeats 5] [--json FILE] [--history]

``--history`` appends one record (commit, date, CPU, thread count, every median) to
``benchmarks/bo_step_history.jsonl``; ``python benchmarks/bo_step_check.py`` compares the last
record with the previous one of the same CPU and thread count and names every step more than
20 % slower. Run both before a change to the GP engine is committed.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from hpo.gp.acquisition_optimizers import space_sampler
from hpo.optimizers import make_optimizer
from hpo.optimizers.base import Proposal
from hpo.space.search_space import Categorical, Condition, Real, Space


class AskTell(Protocol):
    """The minimal loop interface every implementation is wrapped into (unit-cube points)."""

    def ask(self) -> np.ndarray: ...

    def tell(self, u: np.ndarray, loss: float) -> None: ...

    def observe(self, U: np.ndarray, losses: np.ndarray) -> None:
        """Add results at points that were not asked (to set up a state with ``n`` results)."""


def unit_space(d: int) -> Space:
    return Space("unit", tuple(Real(f"x{i}", 0.0, 1.0) for i in range(d)))


CONDITIONAL_DIM = 14


def conditional_space() -> Space:
    """A synthetic CASH space of 14 dimensions: ``clf`` among four values, with 4, 3, 3 and 3
    conditional reals (half of them log-scaled)."""
    parameters: list[Categorical | Real] = [Categorical("clf", ("a", "b", "c", "d"))]
    for choice, size in zip("abcd", (4, 3, 3, 3), strict=True):
        condition = Condition("clf", (choice,))
        for i in range(size):
            log = i % 2 == 1
            parameters.append(Real(f"{choice}{i}", 1e-3 if log else 0.0, 1.0, log, condition))
    return Space("conditional", tuple(parameters))


class Ours:
    """``hpo.optimizers`` families (``gp``, ``rs``) behind :class:`AskTell`, with ``settings``
    passed to the family's class."""

    def __init__(
        self,
        family: str,
        d: int,
        seed: int,
        budget: int = 1000,
        space: Space | None = None,
        **settings: object,
    ) -> None:
        rng = np.random.default_rng(seed)
        space = unit_space(d) if space is None else space
        self.opt = make_optimizer(family, space, budget, rng, **settings)
        self._pending: Proposal | None = None

    def points(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``m`` random points of the space to start from (valid ones in a conditional space)."""
        space = self.opt.space
        return space_sampler(space)(rng, m) if space.is_conditional else rng.random((m, space.dim))

    def ask(self) -> np.ndarray:
        self._pending = self.opt.ask()
        return self._pending.u

    def tell(self, u: np.ndarray, loss: float) -> None:
        proposal = self._pending if self._pending is not None else Proposal(u, len(self.opt.y) + 1)
        self.opt.tell(proposal, loss)
        self._pending = None

    def observe(self, U: np.ndarray, losses: np.ndarray) -> None:
        for u, loss in zip(U, losses, strict=True):
            self.opt.tell(Proposal(u, len(self.opt.y) + 1), float(loss))


class OptunaGP:
    """Optuna's ``GPSampler`` with its defaults (10 random start-up trials)."""

    def __init__(self, d: int, seed: int) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        self.names = [f"x{i}" for i in range(d)]
        self.dists = {name: optuna.distributions.FloatDistribution(0.0, 1.0) for name in self.names}
        self.study = optuna.create_study(sampler=optuna.samplers.GPSampler(seed=seed))
        self._trial = None

    def ask(self) -> np.ndarray:
        self._trial = self.study.ask(self.dists)
        return np.array([self._trial.params[name] for name in self.names])

    def tell(self, u: np.ndarray, loss: float) -> None:
        self.study.tell(self._trial, loss)

    def observe(self, U: np.ndarray, losses: np.ndarray) -> None:
        for u, loss in zip(U, losses, strict=True):
            params = dict(zip(self.names, map(float, u), strict=True))
            trial = self.optuna.trial.create_trial(
                params=params, distributions=self.dists, value=float(loss)
            )
            self.study.add_trial(trial)


class SkoptGP:
    """scikit-optimize's ``Optimizer`` with a GP surrogate and its defaults otherwise."""

    def __init__(self, d: int, seed: int) -> None:
        from skopt import Optimizer

        self.opt = Optimizer([(0.0, 1.0)] * d, base_estimator="GP", random_state=seed)

    def ask(self) -> np.ndarray:
        return np.asarray(self.opt.ask(), dtype=float)

    def tell(self, u: np.ndarray, loss: float) -> None:
        self.opt.tell([float(v) for v in u], float(loss))

    def observe(self, U: np.ndarray, losses: np.ndarray) -> None:
        self.opt.tell([[float(v) for v in u] for u in U], [float(v) for v in losses])


def chapter5(kernel: str) -> Factory:
    """Our GP with ``kernel``, local search and Chapter 5's priors on :func:`conditional_space`
    (rows for d = 14 only)."""

    def factory(d: int, seed: int) -> AskTell | None:
        if d != CONDITIONAL_DIM:
            return None
        settings = {
            "kernel": kernel,
            "priors": "lognormal",
            "acquisition_optimizer": "local_search",
        }
        return Ours("gp", d, seed, space=conditional_space(), **settings)

    return factory


Factory = Callable[[int, int], "AskTell | None"]  # None: no row for this d
IMPLEMENTATIONS: dict[str, tuple[str | None, Factory]] = {
    "ours-gp": (None, lambda d, seed: Ours("gp", d, seed)),
    "optuna-gp": ("optuna", OptunaGP),
    "skopt-gp": ("skopt", SkoptGP),
    "ours-cond-ls": (None, chapter5("conditional")),
    "ours-laplace-ls": (None, chapter5("laplace")),
    "ours-matern-ls": (None, chapter5("matern52")),
}


def available(names: list[str]) -> list[str]:
    """The implementations whose package is installed; prints a note for the others."""
    found = []
    for name in names:
        package = IMPLEMENTATIONS[name][0]
        if package is None or importlib.util.find_spec(package) is not None:
            found.append(name)
        else:
            print(f"note: {name} skipped ({package} not installed; pip install -e '.[baselines]')")
    return found


def objective(u: np.ndarray) -> float:
    """A smooth multimodal test function on ``[0, 1]^d``."""
    return float(np.sum((u - 0.3) ** 2) + 0.1 * np.sin(10.0 * u).sum())


def step_times(name: str, n: int, d: int, repeats: int, seed: int = 0) -> list[float] | None:
    """Seconds of ``repeats`` successive steps, the first one telling the ``n``-th result
    (``None``: the implementation has no row for ``d``)."""
    impl = IMPLEMENTATIONS[name][1](d, seed)
    if impl is None:
        return None
    rng = np.random.default_rng(seed)
    U = impl.points(rng, n - 1) if isinstance(impl, Ours) else rng.random((n - 1, d))
    impl.observe(U, np.array([objective(u) for u in U]))
    u = impl.ask()  # warm-up: our chain's one-off burn-in, lazy imports and set-up of peers
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        impl.tell(u, objective(u))
        u = impl.ask()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, nargs="+", default=[25, 100, 200])
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10, CONDITIONAL_DIM])
    parser.add_argument("--impl", nargs="+", default=list(IMPLEMENTATIONS))
    parser.add_argument("--json", help="write one record per (impl, n, d) to this file")
    parser.add_argument(
        "--history", action="store_true", help=f"append the medians to {HISTORY.name}"
    )
    args = parser.parse_args()
    names = available(args.impl)
    records = []
    print(f"{'n':>4} {'d':>3} " + " ".join(f"{name:>12}" for name in names) + "  ratios vs ours")
    for d in args.d:
        for n in args.n:
            medians: dict[str, float | None] = {}
            for name in names:
                times = step_times(name, n, d, args.repeats)
                medians[name] = None if times is None else statistics.median(times)
                if times is not None:
                    records.append({"impl": name, "n": n, "d": d, "median_s": medians[name]})
            ours = medians.get("ours-gp")
            ratios = (
                " ".join(
                    f"{name}={value / ours:.2f}"
                    for name, value in medians.items()
                    if name != "ours-gp" and value is not None
                )
                if ours
                else ""
            )
            row = " ".join(
                f"{'-':>12}" if medians[name] is None else f"{medians[name]:>11.3f}s"
                for name in names
            )
            print(f"{n:>4} {d:>3} {row}  {ratios}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    if args.history:
        append_history(records, args.repeats)


HISTORY = Path(__file__).resolve().with_name("bo_step_history.jsonl")


def machine() -> dict[str, object]:
    """What a record's times depend on: the CPU's model name and the threads the step may use
    (the CPUs this process may run on: ``taskset -c 1`` gives 1)."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "threads": len(os.sched_getaffinity(0))}


def append_history(records: list[dict], repeats: int) -> None:
    """One line of :data:`HISTORY`: this checkout's commit (``-dirty`` with local changes),
    the date, :func:`machine` and the medians."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") + (
        "-dirty" if git("status", "--porcelain", "--", ".", f":!benchmarks/{HISTORY.name}") else ""
    )
    entry = {
        "commit": commit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **machine(),
        "repeats": repeats,
        "medians": records,
    }
    with HISTORY.open("a") as f:
        f.write(json.dumps(entry) + "\n")
    print(f"appended to {HISTORY}")


if __name__ == "__main__":
    main()
