"""Seconds per epoch of seed 002's network learner (``hpo/learners/ffnn.py``) against a plain
PyTorch loop on the same network and data (the target: at most 1.1×).

One epoch = a shuffled pass of SGD updates (batch 32) plus the validation error that early
stopping reads, as both sides do. The plain loop is what one writes by hand: ``nn.Sequential``
with ``nn.Dropout``, ``torch.optim.SGD``, ``randperm`` batches, ``torch.manual_seed``. Our time per
epoch is ``(fit to E epochs − fit to 0 epochs) / E``, so the one-off set-up (tensors, the model)
is left out on both sides. Data: MNIST-sized random inputs (10,000 × 784, 10 classes; 2,000
validation rows): the time of an epoch does not depend on the values. One thread (the learner's
setting), medians over ``--repeats``.

    nice -n 5 python benchmarks/ffnn_epoch.py [--repeats 5] [--epochs 3]

``--json FILE`` measures instead the learner's epoch on each seed space's representative networks
and writes the epoch-cost table that ``python -m experiments.sweep cost`` sizes the network runs
with (``benchmarks/ffnn_epoch_costs.json``): per space (``conf/space/ffnn_*.yaml``), one network
per depth the space allows, every hidden layer at the mean width of the units' prior (log U(18,
1024) rounded: (high − low) / ln(high/low) = 249 units) and the mean of the dropouts' priors, and
the mean of their epoch times weighted by the prior's depth shares (each "next layer exists" flag
True with probability 1/2: MRBI 1, 2, 3 layers with 1/2, 1/4, 1/4). An epoch's work is affine in
the product of neighbouring widths, so with independent widths the mean width gives the mean
epoch. Both seed datasets have this benchmark's shape (10,000 × 784, 10 classes, 2,000
validation rows; spec B3.1).

    nice -n 5 python benchmarks/ffnn_epoch.py --json benchmarks/ffnn_epoch_costs.json

On a GPU, ``--device cuda --json benchmarks/ffnn_epoch_costs_cuda.json`` measures the GPU's
epoch the same way; ``sweep cost`` gives the GPU-hours from that table when it is committed (and
says the GPU's cost is unmeasured while it is not).

``--batched`` measures instead the batched trainer (``hpo/learners/batched_network.py``): seconds
per epoch *per network* when M networks train as one model, for each M of ``--sizes``, against
the one-at-a-time learner measured in the same run, interleaved with it, on the same networks
(each alone, one after the other; of a rung of different widths, its first 16). Three rungs
(``--rungs``): ``mean``, M networks of ffnn_mnist's mean width (1 × 249, tanh, each its own
seed and learning rate); ``prior``, M widths drawn from ffnn_mnist's prior (log U(18, 1024)),
split into the trainer's width buckets; ``prior-one-group``, the first 16 of those as one
group, padded to their widest (what a GPU would run: one group, few launches). Pin it to one
core for a one-thread figure:

    taskset -c 0 nice -n 5 python benchmarks/ffnn_epoch.py --batched --rungs mean \\
        --sizes 1 16 81 --epochs 1 --repeats 3

``--batched --json FILE`` also writes the table that ``sweep cost`` sizes a batched Hyperband or
BOHB rung from (``benchmarks/ffnn_batched_costs_cuda.json`` on a GPU): per rung measured, the
seconds per epoch per network batched and alone at each M, with its command and date. A rung
already in FILE, measured on the same device, is kept unless measured again, so two commands
(the ``mean`` rung at M = 1 to 256, the slower ``prior`` rung at fewer M) fill one table:

    python benchmarks/ffnn_epoch.py --batched --rungs mean --sizes 1 16 81 256 --epochs 1 \\
        --repeats 3 --device cuda --json benchmarks/ffnn_batched_costs_cuda.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from torch import nn

from hpo.learners import FitGuard, make_estimator

N_TRAIN, N_VALID, N_FEATURES, N_CLASSES, BATCH = 10_000, 2_000, 784, 10, 32
SPACE_DIR = Path(__file__).resolve().parents[1] / "conf" / "space"
SEED_SPACES = ("ffnn_mnist", "ffnn_mrbi")
BATCHED_RUNGS = ("mean", "prior", "prior-one-group")  # --batched --rungs
BATCHED_WIDTHS = {  # each rung's networks, as the batched table (--batched --json) says
    "mean": "M one-layer tanh networks of 249 units (ffnn_mnist's mean width), no dropout, "
    "each its own seed and learning rate",
    "prior": "M one-layer tanh networks of widths drawn from ffnn_mnist's prior log U(18, "
    "1024), no dropout, in the trainer's width buckets",
    "prior-one-group": "the first 16 of the prior rung's widths as one group, padded to their "
    "widest",
}
CASES = {  # name -> (units per hidden layer, input dropout, hidden dropout)
    "1 x 100, no dropout": ((100,), 0.0, 0.0),
    "1 x 500, no dropout": ((500,), 0.0, 0.0),
    "3 x 200, dropout 0.3": ((200, 200, 200), 0.3, 0.3),
}


def _config(
    units: tuple[int, ...], input_dropout: float, dropout: float, device: str, lr: float = 0.01
) -> dict[str, object]:
    """The learner's configuration of a tanh network of ``units`` that never stops early."""
    config: dict[str, object] = {
        "device": device,
        "learning_rate": lr,
        "decay": 1e-4,
        "input_dropout": input_dropout,
        "patience": 10_000,
        "restore_best": "false",
    }
    for k, n in enumerate(units, start=1):
        config.update({f"units_{k}": n, f"activation_{k}": "tanh", f"init_{k}": "uniform"})
        config[f"dropout_{k}"] = dropout
        if k > 1:
            config[f"layer_{k}"] = "True"
    return config


def ours(
    units: tuple[int, ...], input_dropout: float, dropout: float, data, epochs: int, device="cpu"
) -> float:
    X, y, Xv, yv = data
    config = _config(units, input_dropout, dropout, device)

    def seconds(e: int) -> float:
        net = make_estimator("ffnn", config, FitGuard(), seed=1)
        start = time.perf_counter()
        net.fit(X, y, (Xv, yv), epochs=e)
        return time.perf_counter() - start

    return (seconds(epochs) - seconds(0)) / epochs


def plain(units: tuple[int, ...], input_dropout: float, dropout: float, data, epochs: int) -> float:
    X, y, Xv, yv = (torch.as_tensor(a) for a in data)
    X, Xv = X.float(), Xv.float()
    torch.manual_seed(1)
    layers: list[nn.Module] = [nn.Dropout(input_dropout)]
    width = N_FEATURES
    for n in units:
        layers += [nn.Linear(width, n), nn.Tanh(), nn.Dropout(dropout)]
        width = n
    model = nn.Sequential(*layers, nn.Linear(width, N_CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        for group in optimizer.param_groups:
            group["lr"] = 0.01 / (1 + 1e-4 * epoch)
        order = torch.randperm(len(y))
        for i in range(0, len(y), BATCH):
            rows = order[i : i + BATCH]
            loss = loss_fn(model(X[rows]), y[rows])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            float((model(Xv).argmax(1) != yv).float().mean())
    return (time.perf_counter() - start) / epochs


def batched(
    widths: list[int], data, epochs: int, device: str = "cpu", buckets: bool = True
) -> float:
    """Seconds per epoch per network of ``len(widths)`` one-layer networks (the i-th of
    ``widths[i]`` units, seed i, its own learning rate) trained as one batched model
    (``buckets``: split by width buckets, the trainer's default)."""
    from hpo.learners.batched_network import fit_together

    X, y, Xv, yv = data

    def seconds(e: int) -> float:
        nets = [
            make_estimator("ffnn", _config((w,), 0.0, 0.0, device, 0.01 * (1 + i % 7)),
                           FitGuard(), seed=i)
            for i, w in enumerate(widths)
        ]  # fmt: skip
        start = time.perf_counter()
        fit_together(nets, X, y, (Xv, yv), epochs=e, width_buckets=buckets)
        return time.perf_counter() - start

    return (seconds(epochs) - seconds(0)) / (epochs * len(widths))


def batched_table(
    data, sizes: list[int], epochs: int, repeats: int, device: str, names: list[str]
) -> dict[str, dict[int, tuple[float, float]]]:
    """The ``--batched`` table (module docstring): per rung and M, the medians over
    ``repeats`` (interleaved) of seconds per epoch per network batched and alone, and their
    ratio; printed, and returned as {rung name: {M: (batched, alone)}}."""
    widths = np.round(np.exp(np.random.default_rng(0).uniform(np.log(18), np.log(1024), 256)))
    prior = [int(w) for w in widths]
    rungs = [  # name, widths, width buckets
        ("1 x 249", [249] * max(sizes), True),
        ("1 x prior", prior, True),
        ("1 x prior, one group", prior[:16], False),
    ]
    rungs = [(*rung, name) for rung, name in zip(rungs, BATCHED_RUNGS, strict=True)
             if name in names]  # fmt: skip
    measured: dict[str, dict[int, tuple[float, float]]] = {}
    small = tuple(a[:64] for a in data)
    batched([8, 8], small, 1, device)  # the first batched matmuls of a process pay a set-up
    print(f"seconds per epoch per network, {epochs} epoch(s), median of {repeats}, device "
          f"{device_name(device)}, {torch.get_num_threads()} CPU thread(s)")  # fmt: skip
    print(f"{'rung':22} {'M':>4} {'batched':>9} {'alone':>9} {'speed-up':>9}")
    for name, rung_widths, buckets, key in rungs:
        for m in (m for m in sizes if m <= len(rung_widths)):
            widths = rung_widths[:m]
            alone_widths = widths[:16] if len(set(widths)) > 1 else widths[:1]
            together, alone = [], []
            for _ in range(repeats):  # interleaved, so load changes hit both sides alike
                together.append(batched(widths, data, epochs, device, buckets))
                alone.append(statistics.mean(
                    ours((w,), 0.0, 0.0, data, epochs, device) for w in alone_widths
                ))  # fmt: skip
            a, b = statistics.median(together), statistics.median(alone)
            print(f"{name:22} {m:4d} {a:9.4f} {b:9.4f} {b / a:9.2f}", flush=True)
            measured.setdefault(key, {})[m] = (a, b)
    return measured


def _mean(prior: dict | None) -> float:
    """The mean of a uniform real prior (0 when the space has no such parameter)."""
    return 0.0 if prior is None else (prior["low"] + prior["high"]) / 2


def representative_networks(space: dict) -> list[tuple[float, tuple[int, ...], float, float]]:
    """(prior share, units per hidden layer, input dropout, dropout) of one network per depth
    the space allows, at the mean width and mean dropouts of its priors (module docstring)."""
    parameters = space["parameters"]
    units = parameters["units_1"]
    width = round((units["high"] - units["low"]) / math.log(units["high"] / units["low"]))
    depth = 1 + sum(f"layer_{k}" in parameters for k in (2, 3))
    shares = [0.5**k for k in range(1, depth)] + [0.5 ** (depth - 1)]
    dropouts = _mean(parameters.get("input_dropout")), _mean(parameters.get("dropout_1"))
    return [(share, (width,) * (k + 1), *dropouts) for k, share in enumerate(shares)]


def epoch_costs(data, repeats: int, epochs: int, device: str) -> dict[str, dict]:
    """Per seed space: its representative networks' median seconds per epoch and their mean."""
    costs = {}
    for name in SEED_SPACES:
        space = yaml.safe_load((SPACE_DIR / f"{name}.yaml").read_text())
        networks = []
        for share, units, input_dropout, dropout in representative_networks(space):
            times = [ours(units, input_dropout, dropout, data, epochs, device)
                     for _ in range(repeats)]  # fmt: skip
            network = {"share": share, "units": list(units), "input_dropout": input_dropout}
            network.update(dropout=dropout, seconds_per_epoch=statistics.median(times))
            networks.append(network)
            print(f"{name}: {networks[-1]}")
        mean = sum(n["share"] * n["seconds_per_epoch"] for n in networks)
        costs[name] = {"seconds_per_epoch": mean, "networks": networks}
    return costs


def device_name(device: str) -> str:
    """``device`` as the table records it: a GPU by its name (``cuda: NVIDIA H100 ...``)."""
    if device.startswith("cuda"):
        return f"{device}: {torch.cuda.get_device_name(torch.device(device))}"
    return device


def write_costs(path: str, data, repeats: int, epochs: int, device: str) -> None:
    """The epoch-cost table (``--json``), with the command and date, as throughput_costs.json."""
    record = {
        "command": f"python benchmarks/ffnn_epoch.py --repeats {repeats} --epochs {epochs} "
        f"--device {device} --json {path}",
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "device": device,
        "device_name": device_name(device),
        "threads": 1,
        "repeats": repeats,
        "epochs": epochs,
        "data": f"{N_TRAIN} training rows x {N_FEATURES} features, {N_CLASSES} classes, "
        f"{N_VALID} validation rows, batch {BATCH} (MNIST-basic and MRBI alike)",
        "spaces": epoch_costs(data, repeats, epochs, device),
    }
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def write_batched_costs(
    path: str,
    measured: dict[str, dict[int, tuple[float, float]]],
    command: str,
    repeats: int,
    epochs: int,
    device: str,
) -> None:
    """The batched table (``--batched --json``): per rung, seconds per epoch per network batched
    and alone at each M, with its command and date; a rung already in ``path`` from the same
    device is kept unless measured here (a table of another device is replaced)."""
    name = device_name(device)
    try:
        old = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        old = {}
    kept = old.get("rungs", {}) if old.get("device_name") == name else {}
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rungs = dict(kept)
    for rung, cells in measured.items():
        rungs[rung] = {
            "widths": BATCHED_WIDTHS[rung],
            "command": command,
            "measured": when,
            "repeats": repeats,
            "epochs": epochs,
            "batched": {str(m): a for m, (a, _) in sorted(cells.items())},
            "alone": {str(m): b for m, (_, b) in sorted(cells.items())},
        }
    record = {
        "device": device,
        "device_name": name,
        "threads": 1,
        "data": f"{N_TRAIN} training rows x {N_FEATURES} features, {N_CLASSES} classes, "
        f"{N_VALID} validation rows, batch {BATCH} (MNIST-basic and MRBI alike)",
        "seconds": "per epoch per network (batched: the batched trainer's; alone: the "
        "one-at-a-time learner's, measured interleaved with it)",
        "reference_network": {"units": [249], "input_dropout": 0.0, "dropout": 0.0},
        "rungs": rungs,
    }
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--json", default=None, help="write the seed spaces' epoch-cost table "
                        "(with --batched: the batched per-network table)")  # fmt: skip
    parser.add_argument("--device", default="cpu", help="--json: the learner's device (cpu, cuda)")
    parser.add_argument("--batched", action="store_true", help="measure the batched trainer")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 81], help="--batched: M")
    parser.add_argument("--rungs", nargs="+", choices=BATCHED_RUNGS, default=list(BATCHED_RUNGS),
                        help="--batched: which rungs")  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    data = (
        rng.normal(size=(N_TRAIN, N_FEATURES)).astype(np.float32),
        rng.integers(0, N_CLASSES, N_TRAIN),
        rng.normal(size=(N_VALID, N_FEATURES)).astype(np.float32),
        rng.integers(0, N_CLASSES, N_VALID),
    )
    if args.batched:
        measured = batched_table(
            data, args.sizes, args.epochs, args.repeats, args.device, args.rungs
        )
        if args.json:
            command = (
                f"python benchmarks/ffnn_epoch.py --batched --rungs {' '.join(args.rungs)} "
                f"--sizes {' '.join(map(str, args.sizes))} --epochs {args.epochs} "
                f"--repeats {args.repeats} --device {args.device} --json {args.json}"
            )
            write_batched_costs(
                args.json, measured, command, args.repeats, args.epochs, args.device
            )
        return
    if args.json:
        write_costs(args.json, data, args.repeats, args.epochs, args.device)
        return
    print(f"seconds per epoch, median of {args.repeats} ({args.epochs} epochs each), 1 thread")
    print(f"{'network':24} {'ours':>8} {'plain':>8} {'ratio':>6}")
    for name, (units, input_dropout, dropout) in CASES.items():
        ours_s, plain_s = [], []
        for _ in range(args.repeats):  # interleaved, so load changes hit both sides alike
            ours_s.append(ours(units, input_dropout, dropout, data, args.epochs))
            plain_s.append(plain(units, input_dropout, dropout, data, args.epochs))
        a, b = statistics.median(ours_s), statistics.median(plain_s)
        print(f"{name:24} {a:8.3f} {b:8.3f} {a / b:6.2f}")


if __name__ == "__main__":
    main()
