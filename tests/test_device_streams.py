"""Seed 002's networks draw the same random numbers whatever device they train on (CPU only).

Every number of a fit (the initial weights, each epoch's batch order, the dropout masks) comes
from a CPU ``torch.Generator`` and is moved to the device; the drawing code has no branch on the
device. What a device would change is the generator: one bound to a device (``torch.Generator(
device=...)``, as a GPU's Philox) draws another stream for the same seed. The stand-in device
here makes that visible on the CPU: while it is on, every generator made for a device draws
another stream, and a fit must draw the very same numbers as without it (for the single network
and the batched trainer). Binding the generator to the device again fails these tests.

The masks of a block of updates are drawn in one ``torch.rand``; they must be the numbers that
one draw per update and layer gives (the draws before blocks: the CPU's fits unchanged, bit for
bit), and a checkpoint whose generator state is not a CPU generator's is not resumed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hpo.learners.batched_network import fit_together  # noqa: E402
from hpo.learners.network_settings import HiddenLayer, NetworkSettings  # noqa: E402
from hpo.learners.torch_network import (  # noqa: E402
    FeedForwardNetwork,
    draw_keep_masks,
    update_blocks,
)

ANOTHER_STREAM = 7919  # the stand-in device's generator: the seed shifted by this


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, ...]:
    """A slice of scikit-learn's digits: 150 training rows (a last, smaller batch of 22) and
    60 validation rows."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    return X[:150], y[:150], X[150:210], y[150:210]


def _network(seed: int, units: tuple[int, ...], dropout: float, input_dropout: float,
             init: str = "uniform") -> FeedForwardNetwork:  # fmt: skip
    layers = tuple(HiddenLayer(u, "tanh", init, dropout) for u in units)
    settings = NetworkSettings(device="cpu", max_epochs=3, patience=100)
    return FeedForwardNetwork(layers, 0.1, 1e-3, input_dropout, settings, seed)


def _weights(net: FeedForwardNetwork) -> list[np.ndarray]:
    return [p.detach().cpu().numpy().copy() for p in net.model_.parameters()]


class _Recorder:
    """Every random tensor a fit draws (``torch.randperm``, ``torch.rand``), in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.draws: list[tuple[str, torch.Tensor]] = []
        for name in ("randperm", "rand"):
            monkeypatch.setattr(torch, name, self._wrap(name, getattr(torch, name)))

    def _wrap(self, name: str, draw):  # noqa: ANN001, ANN202
        def recorded(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            values = draw(*args, **kwargs)
            self.draws.append((name, values.detach().cpu().clone()))
            return values

        return recorded


def _stand_in_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on a generator made for a device (``torch.Generator(device=...)``) draws
    another stream for the same seed, as a GPU's does; the CPU's own (no device) is as it is."""
    real = torch.Generator

    class DeviceGenerator(real):
        def __new__(cls, device: object = None) -> torch.Generator:
            generator = real.__new__(cls) if device is None else real.__new__(cls, device)
            generator.bound = device is not None
            return generator

        def manual_seed(self, seed: int) -> torch.Generator:
            return super().manual_seed(seed + ANOTHER_STREAM * self.bound)

    monkeypatch.setattr(torch, "Generator", DeviceGenerator)


Fit = Callable[[], list[FeedForwardNetwork]]


def _draws(
    fit: Fit, monkeypatch: pytest.MonkeyPatch, device: bool
) -> tuple[list[FeedForwardNetwork], list[tuple[str, torch.Tensor]]]:
    """``fit()``'s networks and the random tensors it drew, on the CPU or the stand-in
    device."""
    with monkeypatch.context() as patch:
        if device:
            _stand_in_device(patch)
        recorder = _Recorder(patch)
        nets = fit()
    return nets, recorder.draws


def _assert_same_draws(first: list, second: list) -> None:
    assert [name for name, _ in first] == [name for name, _ in second]
    for (_, a), (_, b) in zip(first, second, strict=True):
        assert torch.equal(a, b)


def test_a_block_of_masks_holds_the_numbers_of_one_draw_per_update_and_layer() -> None:
    """Three networks side by side (widths 5, 3, 4 padded to 5; one with no hidden dropout),
    four updates of 6 rows in one block: each network's masks and its generator's state after
    them are those of one ``torch.rand((rows, width)) >= rate`` per update and site."""
    sites = [([7, 7, 7], [0.2, 0.0, 0.5], 7), ([5, 3, 4], [0.3, 0.0, 0.0], 5)]
    updates, rows = 4, 6
    block = [torch.Generator().manual_seed(seed) for seed in (1, 2, 3)]
    keeps = draw_keep_masks(block, updates, rows, sites, torch.device("cpu"))
    for i, seed in enumerate((1, 2, 3)):
        one_by_one = torch.Generator().manual_seed(seed)
        for u in range(updates):
            for keep, (widths, rates, padded) in zip(keeps, sites, strict=True):
                if rates[i] > 0:
                    mask = torch.rand((rows, widths[i]), generator=one_by_one) >= rates[i]
                    assert torch.equal(keep[u, i, :, : widths[i]], mask)
                    assert not keep[u, i, :, widths[i] : padded].any()
                else:
                    assert keep[u, i].all()
        assert torch.equal(block[i].get_state(), one_by_one.get_state())


def test_an_epochs_blocks_hold_its_updates_in_order() -> None:
    """Full updates in blocks of at most MASK_BLOCK_VALUES numbers, the smaller last alone."""
    blocks = list(update_blocks(150, 32, 1_000_000))  # 32 million numbers an update: one each
    assert blocks == [(0, 1, 32), (1, 1, 32), (2, 1, 32), (3, 1, 32), (4, 1, 22)]
    assert list(update_blocks(150, 32, 0)) == [(0, 4, 32), (4, 1, 22)]
    assert list(update_blocks(128, 32, 10)) == [(0, 4, 32)]


@pytest.mark.parametrize("units", [(20,), (16, 9)])
def test_a_networks_draws_do_not_depend_on_its_device(digits, monkeypatch, units) -> None:
    X, y, Xv, yv = digits

    def fit(epochs: int) -> Fit:
        return lambda: [_network(3, units, 0.3, 0.2).fit(X, y, (Xv, yv), epochs=epochs)]

    for init in (0, 1):  # the initial weights, then the first epoch's order, masks and weights
        cpu, cpu_draws = _draws(fit(init), monkeypatch, device=False)
        device, device_draws = _draws(fit(init), monkeypatch, device=True)
        _assert_same_draws(cpu_draws, device_draws)
        for a, b in zip(_weights(cpu[0]), _weights(device[0]), strict=True):
            np.testing.assert_array_equal(a, b)
        assert cpu[0].errors_ == device[0].errors_
    names = [name for name, _ in cpu_draws]
    assert names[0] == "randperm" and names.count("rand") >= 1  # an order, then masks


def test_the_batched_trainers_draws_do_not_depend_on_its_device(digits, monkeypatch) -> None:
    """Members that pad, with dropout in some of them only."""
    X, y, Xv, yv = digits
    members = [(1, (20,), 0.0, 0.0), (2, (7,), 0.3, 0.1), (4, (13,), 0.0, 0.2)]

    def fit(epochs: int) -> Fit:
        def run() -> list[FeedForwardNetwork]:
            nets = [_network(*m, init="normal") for m in members]
            fit_together(nets, X, y, (Xv, yv), epochs=epochs, width_buckets=False)
            return nets

        return run

    for init in (0, 1):
        cpu, cpu_draws = _draws(fit(init), monkeypatch, device=False)
        device, device_draws = _draws(fit(init), monkeypatch, device=True)
        _assert_same_draws(cpu_draws, device_draws)
        for a, b in zip(cpu, device, strict=True):
            for wa, wb in zip(_weights(a), _weights(b), strict=True):
                np.testing.assert_array_equal(wa, wb)
            assert a.errors_ == b.errors_
    assert [name for name, _ in cpu_draws].count("randperm") == len(members)


def test_a_checkpoint_with_a_devices_generator_state_is_not_resumed(digits, tmp_path) -> None:
    """A checkpoint saved on a GPU before the draws moved to the CPU holds a CUDA generator's
    state (16 bytes): the fit starts over, as if there were none."""
    X, y, Xv, yv = digits
    path = Path(tmp_path) / "net.pt"
    _network(5, (12,), 0.2, 0.1).fit(X, y, (Xv, yv), epochs=1, checkpoint=path)
    state = torch.load(path, weights_only=True)
    state["generator"] = torch.zeros(16, dtype=torch.uint8)
    torch.save(state, path)
    resumed = _network(5, (12,), 0.2, 0.1).fit(X, y, (Xv, yv), epochs=2, checkpoint=path)
    fresh = _network(5, (12,), 0.2, 0.1).fit(X, y, (Xv, yv), epochs=2)
    assert resumed.epochs_run_ == 2
    for a, b in zip(_weights(resumed), _weights(fresh), strict=True):
        np.testing.assert_array_equal(a, b)
