"""The least a retraining of the seed's SMAC costs on the CASH space, and the share of a run it
sets at a given evaluation time (issue 29's "optimiser time under 5 % of a smoke run").

At each retraining SMAC fits its random forest to every evaluation so far and scores 10,000
random configurations with it (seed §2.2.1; Hutter et al. 2011, §4.3), before its local search.
This times only those two steps, on SMAC3's own forest as :mod:`hpo.optimizers.smac_instances`
configures it (the hyperparameter-optimisation facade's: 10 trees, every feature tried at each
split), with ``rows`` random configurations of the classification space (264 columns) and
synthetic costs. The sampling, the local search and all of SMAC's bookkeeping are left out: the
floor is what an implementation with no Python overhead at all would still spend. Beside it,
the same SMAC's whole ask + tell over ``--n`` evaluations (synthetic losses, as
``benchmarks/cash_optimizers.py``) and the number of retrainings it made.

    python -m benchmarks.smac_floor [--rows 100 200 400] [--n 300] [--evaluation-ms 44]

``--evaluation-ms``: the wall time of one evaluation without the optimiser (a smoke run's, from
its report's "Optimiser time": wall minus optimiser milliseconds per evaluation).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from experiments.autoweka import make_method
from experiments.configuration.spaces import load_cash_library
from hpo.cash.space import build_cash_space

CANDIDATES = 10_000  # random configurations scored per retraining (seed §2.2.1)
REPEATS = 5


def median_ms(step, repeats: int = REPEATS) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return 1e3 * float(np.median(times))


def whole_smac(cash, n: int) -> tuple[float, int]:  # noqa: ANN001
    """SMAC's ask + tell seconds over ``n`` evaluations, and its number of retrainings."""
    losses = {name: 0.1 + 0.05 * i for i, name in enumerate(cash.learners)}
    optimizer = make_method("smac", cash, 10, np.random.default_rng(0))
    model = optimizer.facade._model
    trainings = [0]
    train = model.train

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        trainings[0] += 1
        return train(*args, **kwargs)

    model.train = counted
    started = time.perf_counter()
    for _ in range(n):
        request = optimizer.ask()
        optimizer.tell(request, losses[str(request.config["learner"])] + 0.01 * request.instance)
    return time.perf_counter() - started, trainings[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[100, 200, 400])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--evaluation-ms", type=float, default=44.0)
    args = parser.parse_args()
    cash = build_cash_space(load_cash_library(), "classification", nonnegative_inputs=True)
    optimizer = make_method("smac", cash, 10, np.random.default_rng(0))
    model = optimizer.facade._model
    space = optimizer.facade.scenario.configspace
    rng = np.random.default_rng(0)
    candidates = np.array([c.get_array() for c in space.sample_configuration(CANDIDATES)])
    seconds, trainings = whole_smac(cash, args.n)
    per_retraining = args.n / max(trainings, 1)
    print(
        f"SMAC's whole ask + tell: {seconds:.2f} s over {args.n} evaluations, {trainings} "
        f"retrainings ({per_retraining:.1f} evaluations each), "
        f"{1e3 * seconds / args.n:.1f} ms per evaluation"
    )
    print(f"\nfloor per retraining (forest fit + {CANDIDATES:,} predictions), median of {REPEATS}")
    header = (
        f"{'rows':>6}{'fit ms':>9}{'predict ms':>12}{'floor ms':>10}"
        f"{'ms / evaluation':>17}{'share %':>9}"
    )
    print(header)
    for rows in args.rows:
        X = np.array([c.get_array() for c in space.sample_configuration(rows)])
        y = rng.random(rows)
        fit = median_ms(lambda X=X, y=y: model.train(X, y))
        predict = median_ms(lambda: model.predict_marginalized(candidates))
        per_evaluation = (fit + predict) / per_retraining
        share = 100 * per_evaluation / (per_evaluation + args.evaluation_ms)
        print(
            f"{rows:>6}{fit:>9.1f}{predict:>12.1f}{fit + predict:>10.1f}"
            f"{per_evaluation:>17.2f}{share:>9.1f}"
        )
    print(
        f"\nshare %: the floor's share of a run whose evaluations take {args.evaluation_ms:g} ms "
        f"without the optimiser, at one retraining per {per_retraining:.1f} evaluations"
    )


if __name__ == "__main__":
    main()
