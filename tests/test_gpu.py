"""Seed 002's networks on a GPU (float32, the learner's dtype): one network's first epochs agree
with the CPU's, the batched trainer on the GPU ends each member near training it alone there, and
two runs with deterministic algorithms on are identical. Skipped, with the reason, where PyTorch
sees no GPU; ``benchmarks/gpu_networks.sh`` runs them with the GPU benchmarks in one go.

The GPU draws the CPU's random numbers: the initial weights, each epoch's batch order and the
dropout masks come from a CPU generator on every device and are moved to the GPU
(``hpo/learners/torch_network.py``, "Random streams on any device"; the CPU-only
``tests/test_device_streams.py``), so the same seed trains the same network on both and only
the kernels' rounding differs (``CPU_TOLERANCE``)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hpo.learners import FitGuard, make_estimator  # noqa: E402
from hpo.learners.batched_network import fit_together  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU (torch.cuda.is_available())"),
]

EPOCHS = 3
CPU_TOLERANCE = 1e-4  # |weight difference| GPU vs CPU after EPOCHS epochs (other kernels' sums)
BATCHED_TOLERANCE = 1e-5  # batched vs alone on the GPU, as on the CPU in float32
RATES = (0.05, 0.2, 0.01, 0.5)  # each member its own learning rate, all below the chaotic ~1


def _net(device: str, seed: int, units: int = 32, lr: float = 0.05):  # noqa: ANN202
    config = {"device": device, "learning_rate": lr, "decay": 1e-3, "max_epochs": EPOCHS,
              "patience": 100, "units_1": units, "activation_1": "tanh", "init_1": "uniform",
              "dropout_1": 0.1, "input_dropout": 0.1}  # fmt: skip
    return make_estimator("ffnn", config, FitGuard(), seed=seed)


def _weights(net) -> list[np.ndarray]:  # noqa: ANN001
    return [p.detach().cpu().numpy().copy() for p in net.model_.parameters()]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    return X[:1000], y[:1000], X[1000:1400], y[1000:1400]


def test_one_networks_first_epochs_on_the_gpu_agree_with_the_cpu(digits) -> None:
    X, y, Xv, yv = digits
    cpu = _net("cpu", 1).fit(X, y, (Xv, yv))
    gpu = _net("cuda", 1).fit(X, y, (Xv, yv))
    for a, b in zip(_weights(cpu), _weights(gpu), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=CPU_TOLERANCE)
    np.testing.assert_allclose(cpu.errors_, gpu.errors_, rtol=0, atol=2 / len(yv))


def test_batched_on_the_gpu_ends_each_member_near_training_it_alone(digits) -> None:
    X, y, Xv, yv = digits
    alone = [_net("cuda", s, 16 + 8 * s, lr).fit(X, y, (Xv, yv)) for s, lr in enumerate(RATES)]
    batched = [_net("cuda", s, 16 + 8 * s, lr) for s, lr in enumerate(RATES)]
    fit_together(batched, X, y, (Xv, yv), width_buckets=False)  # one group, padded
    for a, b in zip(alone, batched, strict=True):
        assert a.epochs_trained_ == b.epochs_trained_
        for wa, wb in zip(_weights(a), _weights(b), strict=True):
            np.testing.assert_allclose(wa, wb, rtol=0, atol=BATCHED_TOLERANCE)


def test_two_batched_gpu_runs_are_identical(digits) -> None:
    X, y, Xv, yv = digits
    runs = []
    for _ in range(2):
        nets = [_net("cuda", s, 16 + 8 * s, lr) for s, lr in enumerate(RATES)]
        fit_together(nets, X, y, (Xv, yv), width_buckets=False)
        runs.append([_weights(n) for n in nets])
    for first, second in zip(*runs, strict=True):
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
