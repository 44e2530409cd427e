"""The seed-004 optimisers' own time (ask + tell) per evaluation on the full CASH space.

Each method asks for ``--n`` (configuration, instance) evaluations of the classification space
(264 hyperparameters) with 10 instances, told a synthetic loss (a per-learner constant plus a
per-fold offset, so that racing and models have something to learn); no fit is run. The table
gives the median and mean milliseconds per evaluation and the total, beside random search (the
peer with no model). Issue 29 asks that the optimisers' time stay under 5 % of a smoke run's wall
time: an evaluation of a smoke run (10-fold CV on Car or Yeast in a child process) takes tens to
hundreds of milliseconds per fold, printed by every report's "Optimiser time" section.

    python -m benchmarks.cash_optimizers [--n 300] [--methods random smac tpe irace smac_10batch]

Peers of two speed-ups, measured in the same run (the proposals are the same with and without):
``<name>/configspace`` runs a SMAC method on ConfigSpace's own hot paths instead of
:func:`hpo.optimizers.backends.configspace_shortcuts.configspace_shortcuts` (its equality, hashing,
iteration and neighbours); ``<name>/hyperopt-suggest``
runs a TPE method through hyperopt's own ``tpe.suggest`` and ``rand.suggest`` (a posterior graph
built on every proposal and evaluated by ``pyll.rec_eval``) instead of the adapter's
(``TPEOptimizer._suggest_on_one_graph``: one graph, run as a compiled program). The TPE
methods of one run share hyperopt's graphs of the space (``hyperopt_graphs``): the first TPE
row pays for building them.
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

from experiments.autoweka import make_method
from experiments.configuration.spaces import load_cash_library
from hpo.cash.space import build_cash_space
from hpo.optimizers import smac_instances
from hpo.optimizers.backends.configspace_shortcuts import configspace_shortcuts
from hpo.optimizers.tpe import TPEOptimizer

ONE_GRAPH = TPEOptimizer._suggest_on_one_graph


def _hyperopts_own(self: TPEOptimizer, suggest: object, *arguments: object) -> object:
    return suggest(*arguments)  # type: ignore[operator]


def use_peer(variant: str) -> None:
    """Undo one speed-up for the next optimiser built (``variant``: see the module), or none."""
    if variant not in PEERS:
        raise SystemExit(f"unknown variant {variant!r}; valid: {', '.join(PEERS[1:])} or none")
    smac_instances.configspace_shortcuts = (  # type: ignore[assignment]
        contextlib.nullcontext if variant == "configspace" else configspace_shortcuts
    )
    TPEOptimizer._suggest_on_one_graph = (  # type: ignore[method-assign]
        _hyperopts_own if variant == "hyperopt-suggest" else ONE_GRAPH
    )


PEERS = ("", "configspace", "hyperopt-suggest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument(
        "--methods", nargs="*", default=["random", "smac", "tpe", "irace", "smac_10batch"]
    )
    args = parser.parse_args()
    cash = build_cash_space(load_cash_library(), "classification", nonnegative_inputs=True)
    losses = {name: 0.1 + 0.05 * i for i, name in enumerate(cash.learners)}
    print(f"{args.n} evaluations, {cash.n_hyperparameters} hyperparameters, 10 instances")
    print(f"{'method':<24}{'median ms':>11}{'mean ms':>10}{'total s':>9}")
    for method in args.methods:
        name, _, variant = method.partition("/")
        use_peer(variant)
        optimizer = make_method(name, cash, 10, np.random.default_rng(0))
        times = []
        for _ in range(args.n):
            started = time.perf_counter()
            try:
                request = optimizer.ask()
            except StopIteration:  # a finished grid
                break
            loss = losses[str(request.config["learner"])] + 0.01 * request.instance
            optimizer.tell(request, loss)
            times.append(time.perf_counter() - started)
        ms = 1e3 * np.array(times)
        print(f"{method:<24}{np.median(ms):>11.2f}{np.mean(ms):>10.2f}{ms.sum() / 1e3:>9.2f}")


if __name__ == "__main__":
    main()
