"""Optimizer time of one EO iteration (thesis Alg. 4.1) next to one GP-EI (BO-best) iteration.

Setting: ``t`` models already evaluated (200 = the thesis's budget, §4.4.1), ``m = 12`` slots,
on a synthetic pool the size of the largest Chapter-4 dataset's validation set: letter has
20 000 rows and 26 classes; a third is the test split (thesis §4.4.1), so 5-fold CV validates on
the other ≈ 13 334 rows in 5 folds of ≈ 2 667 (every row is validated once). Each synthetic
model is right with a probability drawn in [0.6, 0.95] and otherwise predicts a random label.
The space is the unit cube of dimension 5 (the SVM space of §4.4.1: kernel, C, width, degree,
intercept).

One step = ``tell`` the last model (EO: refill its slot, after ``observe_predictions``) + ``ask``
the next point; EO's is split into pool re-scoring, GP hyperparameter sampling (slice sampling;
``hyper_chain``: ``per_slot`` = one chain per slot continued when the round robin returns to it
(default), ``restart`` = a new 100-transition burn-in every iteration as the thesis does,
``continue`` = one chain as GP-EI), the
acquisition (EI on the Sobol grid + L-BFGS-B) and the slot refill. GP-EI continues its chain
(10 transitions per iteration after a single burn-in). Medians over ``--repeats`` steps.

    python benchmarks/eo_step.py [--t 200] [--repeats 5] [--rows 13334] [--labels 26]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from hpo.gp.acquisition import single_threaded_blas
from hpo.optimizers import make_optimizer
from hpo.optimizers.base import Proposal
from hpo.records import FoldPredictions
from hpo.space.search_space import Real, Space

DIM = 5


class SyntheticPool:
    """Fold predictions of random classifiers on ``rows`` validation rows in ``n_folds`` folds."""

    def __init__(self, rows: int, n_labels: int, n_folds: int, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.labels = self.rng.integers(0, n_labels, rows)
        self.n_labels = n_labels
        self.folds = np.array_split(np.arange(rows), n_folds)

    def model(self) -> tuple[tuple[FoldPredictions, ...], float]:
        accuracy = self.rng.uniform(0.6, 0.95)
        right = self.rng.random(self.labels.size) < accuracy
        predicted = np.where(right, self.labels, self.rng.integers(0, self.n_labels, right.size))
        folds = tuple(
            FoldPredictions(rows, self.labels[rows], predicted[rows], np.zeros(0, np.int64))
            for rows in self.folds
        )
        return folds, float(np.mean(predicted != self.labels))


def timed_chain(opt) -> list[float]:
    """Record the seconds of every ``opt.chain.sample`` call."""
    seconds: list[float] = []
    sample = opt.chain.sample

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        result = sample(*args, **kwargs)
        seconds.append(time.perf_counter() - started)
        return result

    opt.chain.sample = wrapper
    return seconds


def bench_eo(pool: SyntheticPool, t: int, repeats: int, chain: str) -> dict[str, list[float]]:
    space = Space("unit", tuple(Real(f"x{i}", 0.0, 1.0) for i in range(DIM)))
    opt = make_optimizer("eo", space, t + repeats + 1, np.random.default_rng(0), hyper_chain=chain)
    rng = np.random.default_rng(1)
    m = opt.ensemble_size
    for i in range(t):  # the pool: evaluated models (their slots refilled as EO would)
        folds, loss = pool.model()
        # the last m models follow EO's own proposals: every slot's chain exists (per_slot), as
        # it does at t = 200 in a run (each slot optimised ~16 times)
        u = opt.ask().u if i >= t - m else rng.uniform(size=DIM)
        proposal = Proposal(u=u, batch=i + 1)
        opt.observe_predictions(proposal, folds)
        opt.tell(proposal, loss)
    parts: dict[str, list[float]] = {
        k: [] for k in ("rescore", "sampling", "acquisition", "refill", "step")
    }
    for _ in range(repeats):
        folds, loss = pool.model()
        proposal = Proposal(u=rng.uniform(size=DIM), batch=len(opt.y) + 1)
        started = time.perf_counter()
        opt.observe_predictions(proposal, folds)
        opt.tell(proposal, loss)
        refill = opt.timings["refill"]
        opt.ask()
        parts["step"].append(time.perf_counter() - started)
        for name in ("rescore", "sampling", "acquisition"):
            parts[name].append(opt.timings[name])
        parts["refill"].append(refill)
    return parts


def bench_gp(pool: SyntheticPool, t: int, repeats: int) -> dict[str, list[float]]:
    space = Space("unit", tuple(Real(f"x{i}", 0.0, 1.0) for i in range(DIM)))
    opt = make_optimizer("gp", space, t + repeats + 1, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for i in range(t):
        opt.tell(Proposal(u=rng.uniform(size=DIM), batch=i + 1), pool.model()[1])
    opt.ask()  # warm-up: the one burn-in of the run
    sampling = timed_chain(opt)
    parts: dict[str, list[float]] = {"sampling": [], "acquisition": [], "step": []}
    for _ in range(repeats):
        loss = pool.model()[1]
        started = time.perf_counter()
        opt.tell(Proposal(u=rng.uniform(size=DIM), batch=len(opt.y) + 1), loss)
        opt.ask()
        step = time.perf_counter() - started
        parts["step"].append(step)
        parts["sampling"].append(sampling[-1])
        parts["acquisition"].append(step - sampling[-1])
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=13334)
    parser.add_argument("--labels", type=int, default=26)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    pool = SyntheticPool(args.rows, args.labels, args.folds, seed=0)
    with single_threaded_blas():
        results = {
            "gp-ei (BO-best)": bench_gp(pool, args.t, args.repeats),
            "eo, per-slot chains (default)": bench_eo(pool, args.t, args.repeats, "per_slot"),
            "eo, restart burn-in (thesis)": bench_eo(pool, args.t, args.repeats, "restart"),
            "eo, one continued chain": bench_eo(pool, args.t, args.repeats, "continue"),
        }
    columns = ("rescore", "sampling", "acquisition", "refill", "step")
    print(
        f"t = {args.t}, m = 12, |D_V| = {args.rows} rows in {args.folds} folds, "
        f"{args.labels} labels, d = {DIM}; medians of {args.repeats} steps, seconds"
    )
    print(f"| {'optimizer':<22} | " + " | ".join(f"{c:>11}" for c in columns) + " | vs gp-ei |")
    print("|" + "---|" * (len(columns) + 2))
    base = statistics.median(results["gp-ei (BO-best)"]["step"])
    for name, parts in results.items():
        cells = [
            f"{statistics.median(parts[c]):11.3f}" if c in parts else f"{'-':>11}" for c in columns
        ]
        ratio = statistics.median(parts["step"]) / base
        print(f"| {name:<22} | " + " | ".join(cells) + f" | {ratio:7.2f}x |")


if __name__ == "__main__":
    main()
