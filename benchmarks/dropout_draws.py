"""What drawing an epoch's random numbers on the CPU costs seed 002's network learner: seconds per
epoch of the draws (the batch order and every dropout mask, as ``hpo/learners/torch_network.py``
and ``hpo/learners/batched_network.py`` draw them: a CPU generator, the masks of a block of
updates in one ``torch.rand``) against seconds per epoch of training (``share``; ``before``: the
share of the draws one update at a time).

The draws are timed on their own, with the learner's functions (``draw_order``,
``update_blocks``, ``draw_keep_masks``), and beside them the way they were drawn before (one
``torch.rand`` per update and dropout site), which draws the same numbers. An epoch is the
learner's: ``(fit to E epochs − fit to 0 epochs) / E``, its draws included, for one network
and, with ``--members M`` (0: left out), for M networks trained as one batched model
(``fit_together``). Data: MNIST-sized random inputs (10,000 × 784, 10 classes; 2,000 validation
rows), batch 32, hidden layers of 249 units (the mean width of the prior, log U(18, 1024)) with
input dropout 0.2 and hidden dropout 0.5 (every site drawn). One thread (the learner's setting),
medians over ``--repeats``. On a GPU the masks' copy to the device comes on top (not measured
here: the CPU's numbers are what every device now draws).

    nice -n 5 python benchmarks/dropout_draws.py [--repeats 5] [--epochs 2] [--members 16]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from hpo.learners import FitGuard, make_estimator
from hpo.learners.batched_network import fit_together
from hpo.learners.torch_network import draw_keep_masks, draw_order, update_blocks

N_TRAIN, N_VALID, N_FEATURES, N_CLASSES, BATCH, UNITS = 10_000, 2_000, 784, 10, 32, 249
INPUT_DROPOUT, DROPOUT = 0.2, 0.5


def _config(layers: int, seed: int) -> dict[str, object]:
    """A tanh network of ``layers`` hidden layers of :data:`UNITS` that never stops early."""
    config: dict[str, object] = {
        "device": "cpu",
        "learning_rate": 0.01 * (1 + seed % 7),
        "decay": 1e-4,
        "input_dropout": INPUT_DROPOUT,
        "patience": 10_000,
        "restore_best": "false",
    }
    for k in range(1, layers + 1):
        config.update({f"units_{k}": UNITS, f"activation_{k}": "tanh", f"init_{k}": "uniform"})
        config[f"dropout_{k}"] = DROPOUT
        if k > 1:
            config[f"layer_{k}"] = "True"
    return config


def epoch_seconds(layers: int, members: int, data: tuple[np.ndarray, ...], epochs: int) -> float:
    """Seconds per epoch of ``members`` networks (1: the learner alone, else batched)."""
    X, y, Xv, yv = data

    def seconds(e: int) -> float:
        nets = [make_estimator("ffnn", _config(layers, i), FitGuard(), seed=i)
                for i in range(members)]  # fmt: skip
        start = time.perf_counter()
        if members == 1:
            nets[0].fit(X, y, (Xv, yv), epochs=e)
        else:
            fit_together(nets, X, y, (Xv, yv), epochs=e)
        return time.perf_counter() - start

    return (seconds(epochs) - seconds(0)) / epochs


def _sites(layers: int, members: int) -> list[tuple[list[int], list[float], int]]:
    widths = [N_FEATURES] + [UNITS] * layers
    rates = [INPUT_DROPOUT] + [DROPOUT] * layers
    return [([w] * members, [r] * members, w) for w, r in zip(widths, rates, strict=True)]


def draw_seconds(layers: int, members: int) -> float:
    """Seconds of one epoch's draws as the learner draws them now (blocks on the CPU)."""
    generators = [torch.Generator().manual_seed(i) for i in range(members)]
    sites, cpu = _sites(layers, members), torch.device("cpu")
    per_row = members * sum(padded for _, _, padded in sites)
    start = time.perf_counter()
    for g in generators:
        draw_order(N_TRAIN, g, cpu)
    for _, updates, rows in update_blocks(N_TRAIN, BATCH, per_row):
        draw_keep_masks(generators, updates, rows, sites, cpu)
    return time.perf_counter() - start


def draw_seconds_before(layers: int, members: int) -> float:
    """Seconds of the same draws one ``torch.rand`` per update and site (as before)."""
    generators = [torch.Generator().manual_seed(i) for i in range(members)]
    sites = _sites(layers, members)
    start = time.perf_counter()
    for g in generators:
        torch.randperm(N_TRAIN, generator=g)
    for first in range(0, N_TRAIN, BATCH):
        rows = min(BATCH, N_TRAIN - first)
        for widths, rates, padded in sites:
            keep = torch.ones((members, rows, padded), dtype=torch.bool)
            for i, g in enumerate(generators):
                keep[i] = torch.rand((rows, widths[i]), generator=g) >= rates[i]
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--members", type=int, default=16, help="batched row's M (0: none)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    X = rng.random((N_TRAIN + N_VALID, N_FEATURES), dtype=np.float32)
    y = rng.integers(0, N_CLASSES, N_TRAIN + N_VALID)
    data = (X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:])
    cases = [(f"1 network, 1 x {UNITS}", 1, 1), (f"1 network, 3 x {UNITS}", 3, 1)]
    if args.members:
        cases.append((f"{args.members} networks batched, 1 x {UNITS}", 1, args.members))
    print(
        f"torch {torch.__version__}, 1 thread, {N_TRAIN} x {N_FEATURES}, batch {BATCH}, "
        f"input dropout {INPUT_DROPOUT}, dropout {DROPOUT}; medians of {args.repeats}"
    )
    header = (
        f"{'case':<32} {'draws/epoch s':>14} {'before s':>10} {'epoch s':>10} "
        f"{'share':>7} {'before':>7}"
    )
    print(header)
    for name, layers, members in cases:
        draws, before, epochs = [], [], []
        for _ in range(args.repeats):
            draws.append(draw_seconds(layers, members))
            before.append(draw_seconds_before(layers, members))
            epochs.append(epoch_seconds(layers, members, data, args.epochs))
        d, b, e = (statistics.median(v) for v in (draws, before, epochs))
        row = f"{name:<32} {d:>14.4f} {b:>10.4f} {e:>10.3f} {d / e:>7.1%} {b / e:>7.1%}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
