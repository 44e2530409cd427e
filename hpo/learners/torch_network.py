"""The PyTorch side of :mod:`hpo.learners.ffnn`: the estimator (:class:`FeedForwardNetwork`),
the module, the SGD loop, early stopping and checkpoints (imported only when a network is
built; needs the ``nn`` extra).

Determinism: every random number of a fit (weight initialisation, the shuffling of each epoch,
dropout masks) comes from one CPU ``torch.Generator`` seeded with the learner's derived seed,
whose state is saved in the checkpoint; on the CPU a fit runs on ``settings.threads`` (1) threads
with ``torch.use_deterministic_algorithms(True)``. So the same configuration gives the same
weights on every run, and training to r epochs, saving, and resuming to r' gives exactly the
model that trains to r' at once (``tests/test_ffnn.py``).

Random streams on any device: the generator is the CPU's whatever ``settings.device`` says (a
CUDA generator, Philox, would give another stream for the same seed), so the same seed draws the
same numbers on every device. The weights are initialised on the CPU and then moved; each
epoch's batch order is drawn on the CPU and moved; dropout masks are drawn on the CPU a block of
updates at a time (:func:`draw_keep_masks`: one ``torch.rand`` per block, at most
:data:`MASK_BLOCK_VALUES` numbers, compared with the rate there) and each block's masks moved in
one copy. The CPU's ``torch.rand`` draws its numbers one after the other, so a block holds the
very numbers that one draw per update and layer gave (``tests/test_device_streams.py``): on the
CPU the fits are those of before, bit for bit. A checkpoint whose generator state is not a CPU
generator's (a GPU generator's, as GPU fits saved before their draws came from the CPU) is
ignored: the fit starts over.

A checkpoint holds the model, the optimizer, the epoch and update counts, the early-stopping
state (best error, best epoch and weights, epochs without improvement, stopped) and the
generator, with a fingerprint of everything the model depends on (architecture, learning rate,
decay, settings, seed, training rows): a checkpoint with another fingerprint, or at more epochs
than asked, is ignored and training starts over [decide].
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from hpo.learners.network_settings import HiddenLayer, NetworkSettings, resolve_device

PREDICT_CHUNK_ROWS = 8192
MASK_BLOCK_VALUES = 1 << 20  # dropout numbers drawn at once (4 MiB of float32, 1 MiB of masks)
DTYPES = ("float32", "float64")


class FeedForwardNetwork:
    """The seed's network as an estimator: ``fit`` (optionally with a validation set, a target
    number of epochs and a checkpoint file to resume from and save to) and ``predict``.

    After ``fit``: ``epochs_trained_`` (total epochs of the model), ``epochs_run_`` (epochs this
    call trained: the resource it spent), ``stopped_early_``, ``best_epoch_``, ``errors_`` (the
    validation error after each epoch, resumed epochs included).

    ``dtype`` (``float32``, the learner's; ``float64`` for the equality tests of
    :mod:`hpo.learners.batched_network`) is not a setting: runs always train in float32.
    """

    supports_resource = True  # fit takes ``epochs`` and ``checkpoint`` (hpo.learners.fit)

    def __init__(
        self,
        layers: tuple[HiddenLayer, ...],
        learning_rate: float,
        decay: float,
        input_dropout: float = 0.0,
        settings: NetworkSettings | None = None,
        random_state: int = 0,
        dtype: str = "float32",
    ) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"unknown ffnn dtype {dtype!r}; valid choices: {', '.join(DTYPES)}")
        self.dtype = dtype
        self.layers = layers
        self.learning_rate = float(learning_rate)
        self.decay = float(decay)
        self.input_dropout = float(input_dropout)
        self.settings = settings or NetworkSettings()
        self.random_state = random_state

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        validation: tuple[np.ndarray, np.ndarray] | None = None,
        epochs: float | None = None,
        checkpoint: str | Path | None = None,
    ) -> FeedForwardNetwork:
        """Train to ``epochs`` total epochs (default and cap: ``max_epochs``), stopping early on
        the validation error; resume from ``checkpoint`` when it holds this model at fewer
        epochs, and save the state there afterwards."""
        train(self, np.asarray(X), np.asarray(y), validation, epochs, checkpoint)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return predict(self, np.asarray(X))


def _dropout(x: torch.Tensor, rate: float, keep: torch.Tensor | None) -> torch.Tensor:
    """Inverted dropout (Srivastava et al. 2014, as Keras's ``Dropout``) with the mask ``keep``
    (True: kept; from :func:`draw_keep_masks`); the identity when not training or at rate 0
    (``keep`` None)."""
    if keep is None:
        return x
    return x * keep / (1.0 - rate)


def draw_order(n: int, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """An epoch's batch order, a permutation of ``n`` rows drawn from the CPU ``generator`` and
    moved to ``device``."""
    return torch.randperm(n, generator=generator).to(device, non_blocking=True)


def update_blocks(n: int, batch: int, values_per_row: int) -> Iterator[tuple[int, int, int]]:
    """An epoch's updates of ``n`` rows in batches of ``batch``, in blocks whose dropout masks
    are drawn at once: ``(first update, updates, rows per update)``; a block holds at most
    :data:`MASK_BLOCK_VALUES` numbers (``values_per_row`` per row; all of the epoch's full
    updates when 0), a last, smaller update is a block of its own."""
    full, tail = divmod(n, batch)
    size = full if values_per_row == 0 else MASK_BLOCK_VALUES // (batch * values_per_row)
    size = max(1, size)
    for first in range(0, full, size):
        yield first, min(size, full - first), batch
    if tail:
        yield full, 1, tail


def draw_keep_masks(
    generators: Sequence[torch.Generator],
    updates: int,
    rows: int,
    sites: Sequence[tuple[Sequence[int], Sequence[float], int]],
    device: torch.device,
) -> list[torch.Tensor | None]:
    """The dropout masks of ``updates`` consecutive updates of ``rows`` rows for networks that
    train side by side, one CPU generator each (``generators``), moved to ``device``.

    ``sites`` are the dropout sites in the order the forward pass meets them (the input, then
    each hidden layer): each network's true width and rate there, and the width of the stacked
    masks. Per site: None where no network drops out there, else a bool ``[updates, networks,
    rows, width]`` (True: kept); a network at rate 0 keeps every unit, one at a positive rate
    drops the units past its width. Each network's numbers come in the order in which one
    ``torch.rand((rows, width)) >= rate`` per update and site (rate above 0) draws them: its
    block's numbers in one ``torch.rand`` on the CPU, the same numbers (the CPU's ``rand`` draws
    them one after the other)."""
    count = len(generators)
    keeps = [
        torch.empty((updates, count, rows, padded), dtype=torch.bool)
        if any(rate > 0.0 for rate in rates)
        else None
        for _, rates, padded in sites
    ]
    for i, generator in enumerate(generators):
        per_row = sum(widths[i] for widths, rates, _ in sites if rates[i] > 0.0)
        values = torch.rand(updates * rows * per_row, generator=generator)
        values = values.view(updates, rows * per_row)
        start = 0
        for keep, (widths, rates, padded) in zip(keeps, sites, strict=True):
            if keep is None:
                continue
            if rates[i] <= 0.0:
                keep[:, i].fill_(True)
                continue
            width = widths[i]
            drawn_values = values[:, start : start + rows * width].view(updates, rows, width)
            torch.ge(drawn_values, rates[i], out=keep[:, i, :, :width])
            start += rows * width
            if width < padded:
                keep[:, i, :, width:].fill_(False)
    return [None if k is None else k.to(device, non_blocking=True) for k in keeps]


class Network(nn.Module):
    """Input dropout, hidden layers (linear, activation, dropout), a linear output whose softmax
    the cross-entropy applies (§2.1.1.2: softmax output, categorical cross-entropy)."""

    def __init__(
        self, n_inputs: int, layers: tuple[HiddenLayer, ...], n_outputs: int, input_dropout: float
    ) -> None:
        super().__init__()
        sizes = [n_inputs, *(layer.units for layer in layers)]
        self.hidden = nn.ModuleList(nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(layers)))
        self.output = nn.Linear(sizes[-1], n_outputs)
        self.activations = [
            torch.tanh if lay.activation == "tanh" else torch.sigmoid for lay in layers
        ]
        self.rates = [layer.dropout for layer in layers]
        self.input_dropout = input_dropout
        self.specs = layers

    def initialise(self, generator: torch.Generator) -> None:
        """Hidden weights from U(−1, 1) or N(0, 1) per layer (Table 2.1); output weights
        Glorot-uniform (Keras's ``Dense`` default) [decide]; biases 0 (Keras's default)."""
        with torch.no_grad():
            for linear, spec in zip(self.hidden, self.specs, strict=True):
                if spec.init == "uniform":
                    linear.weight.uniform_(-1.0, 1.0, generator=generator)
                else:
                    linear.weight.normal_(0.0, 1.0, generator=generator)
                linear.bias.zero_()
            nn.init.xavier_uniform_(self.output.weight, generator=generator)
            self.output.bias.zero_()

    def sites(self, n_inputs: int) -> list[tuple[list[int], list[float], int]]:
        """The dropout sites (the input, then each hidden layer) as :func:`draw_keep_masks`
        takes them."""
        widths = [n_inputs, *(spec.units for spec in self.specs)]
        rates = [self.input_dropout, *self.rates]
        return [([w], [r], w) for w, r in zip(widths, rates, strict=True)]

    def forward(
        self, x: torch.Tensor, keeps: Sequence[torch.Tensor | None] | None = None
    ) -> torch.Tensor:
        """Logits of ``x``; with dropout when training: ``keeps``, one mask (or None) per site
        (:meth:`sites`)."""
        masks = [None] * (1 + len(self.hidden)) if keeps is None else keeps
        x = _dropout(x, self.input_dropout, masks[0])
        layers = zip(self.hidden, self.activations, self.rates, masks[1:], strict=True)
        for linear, activation, rate, keep in layers:
            x = _dropout(activation(linear(x)), rate, keep)
        return self.output(x)


@contextlib.contextmanager
def _deterministic(threads: int) -> Iterator[None]:
    """One fit's thread count and deterministic algorithms, restored afterwards."""
    old_threads = torch.get_num_threads()
    old_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_deterministic)


def _fingerprint(net: FeedForwardNetwork, X: np.ndarray, y: np.ndarray) -> str:
    """What a checkpoint must match to be resumed: the model's definition and its data."""
    digest = hashlib.sha256()
    definition = {
        "layers": [vars(layer) for layer in net.layers],
        "lr": net.learning_rate,
        "decay": net.decay,
        "input_dropout": net.input_dropout,
        "settings": {k: v for k, v in vars(net.settings).items() if k not in ("threads",)},
        "seed": net.random_state,
    }
    if net.dtype != "float32":  # float32 checkpoints keep the fingerprint they always had
        definition["dtype"] = net.dtype
    digest.update(json.dumps(definition, sort_keys=True).encode())
    digest.update(np.ascontiguousarray(X).tobytes())
    digest.update(np.ascontiguousarray(y).tobytes())
    return digest.hexdigest()


def _holdout(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, early-stopping rows) of ``n`` training rows, seeded."""
    order = np.random.default_rng(seed).permutation(n)
    n_hold = min(n - 1, max(1, int(round(fraction * n))))
    return np.sort(order[n_hold:]), np.sort(order[:n_hold])


def _learning_rate(net: FeedForwardNetwork, epoch: int, updates: int) -> float:
    """``lr_0 / (1 + d·t)`` (§2.1.1.2), ``t`` the epochs or updates done (``decay_step``)."""
    t = epoch if net.settings.decay_step == "epoch" else updates
    return net.learning_rate / (1.0 + net.decay * t)


def _error(model: Network, X: torch.Tensor, labels: torch.Tensor) -> float:
    """Zero-one error of ``model`` (no dropout) on ``X`` against class indices ``labels``."""
    with torch.no_grad():
        predicted = torch.cat(
            [
                model(X[i : i + PREDICT_CHUNK_ROWS]).argmax(1)
                for i in range(0, len(X), PREDICT_CHUNK_ROWS)
            ]
        )
    return float((predicted != labels).float().mean())


def _load(path: Path | None, fingerprint: str, target: int) -> dict[str, Any] | None:
    if path is None or not path.is_file():
        return None
    state = torch.load(path, weights_only=True)
    if state.get("fingerprint") != fingerprint or state["epoch"] > target:
        return None
    return state


def _save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    torch.save(state, temporary)
    os.replace(temporary, path)


def train(
    net: FeedForwardNetwork,
    X: np.ndarray,
    y: np.ndarray,
    validation: tuple[np.ndarray, np.ndarray] | None,
    epochs: float | None,
    checkpoint: str | Path | None,
) -> None:
    """Fit ``net`` (see :meth:`FeedForwardNetwork.fit`); sets its fitted attributes."""
    settings = net.settings
    device = torch.device(resolve_device(settings.device))
    target = target_epochs(net, epochs)
    classes = np.unique(y)
    if validation is None:
        rows, held = _holdout(len(y), settings.holdout_fraction, net.random_state)
        validation = (X[held], y[held])
        X, y = X[rows], y[rows]
    X_valid, y_valid = validation
    path = None if checkpoint is None else Path(checkpoint)
    fingerprint = "" if path is None else _fingerprint(net, X, y)

    def tensor(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
        return torch.as_tensor(np.ascontiguousarray(values), dtype=dtype, device=device)

    dtype = getattr(torch, net.dtype)
    X_train, X_check = tensor(X, dtype), tensor(X_valid, dtype)
    y_train = tensor(np.searchsorted(classes, y), torch.int64)
    known = np.isin(y_valid, classes)
    y_check = tensor(np.where(known, np.searchsorted(classes, y_valid), -1), torch.int64)

    with _deterministic(settings.threads):
        model, generator, state = start_training(
            net, X.shape[1], len(classes), device, path, fingerprint, target
        )
        optimizer = torch.optim.SGD(model.parameters(), lr=net.learning_rate)
        if "optimizer" in state:
            optimizer.load_state_dict(state["optimizer"])
        epochs_run = _train_epochs(
            net, model, optimizer, generator, X_train, y_train, X_check, y_check, state, target
        )
        finish_training(net, model, optimizer, generator, state, path, fingerprint)
    set_fitted(net, model, classes, device, state, epochs_run)


def target_epochs(net: FeedForwardNetwork, epochs: float | None) -> int:
    """The total epochs a fit trains to: ``epochs`` rounded, capped by ``max_epochs``."""
    cap = net.settings.max_epochs
    return cap if epochs is None else min(cap, round(epochs))


def start_training(
    net: FeedForwardNetwork,
    n_inputs: int,
    n_classes: int,
    device: torch.device,
    path: Path | None,
    fingerprint: str,
    target: int,
) -> tuple[Network, torch.Generator, dict[str, Any]]:
    """``net``'s module initialised from its seed's generator, and its training state: both
    from the checkpoint at ``path`` when that holds this model (``fingerprint``) at no more
    than ``target`` epochs, else fresh (epoch 0). A loaded state keeps the optimizer's
    state under ``optimizer``. The generator is the CPU's on every device, and the weights are
    initialised on the CPU before they move to ``device`` (module docstring)."""
    generator = torch.Generator()  # the CPU's: a device's own generator draws another stream
    generator.manual_seed(int(net.random_state))
    model = Network(n_inputs, net.layers, n_classes, net.input_dropout)
    model = model.to(dtype=getattr(torch, net.dtype))
    model.initialise(generator)
    model = model.to(device)
    state = _load(path, fingerprint, target)
    if state is not None and state["generator"].shape == generator.get_state().shape:
        model.load_state_dict(state["model"])
        generator.set_state(state["generator"])
        return model, generator, state
    state = {
        "epoch": 0,
        "updates": 0,
        "best_error": float("inf"),
        "best_epoch": 0,
        "best_model": None,
        "wait": 0,
        "stopped": False,
    }
    return model, generator, state


def finish_training(
    net: FeedForwardNetwork,
    model: Network,
    optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
    state: dict[str, Any],
    path: Path | None,
    fingerprint: str,
) -> None:
    """After training: the checkpoint saved to ``path`` (when given); then the best epoch's
    weights loaded into ``model`` when ``restore_best``."""
    if path is not None:
        state.update(
            model=model.state_dict(),
            optimizer=optimizer.state_dict(),
            generator=generator.get_state(),
            fingerprint=fingerprint,
        )
        _save(path, state)
    if net.settings.restore_best and state["best_model"] is not None:
        model.load_state_dict(state["best_model"])


def set_fitted(
    net: FeedForwardNetwork,
    model: Network,
    classes: np.ndarray,
    device: torch.device,
    state: dict[str, Any],
    epochs_run: int,
) -> None:
    """``net``'s fitted attributes (:class:`FeedForwardNetwork`) from its training state."""
    model.eval()
    net.model_ = model
    net.classes_ = classes
    net.device_ = device
    net.epochs_trained_ = int(state["epoch"])
    net.epochs_run_ = epochs_run
    net.stopped_early_ = bool(state["stopped"])
    net.best_epoch_ = int(state["best_epoch"])
    net.best_error_ = float(state["best_error"])
    net.errors_ = list(state.get("errors", []))


def _train_epochs(
    net: FeedForwardNetwork,
    model: Network,
    optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
    X: torch.Tensor,
    y: torch.Tensor,
    X_check: torch.Tensor,
    y_check: torch.Tensor,
    state: dict[str, Any],
    target: int,
) -> int:
    """Epochs until ``target`` or early stopping; updates ``state``; returns the epochs run."""
    settings = net.settings
    n, batch = len(y), settings.batch_size
    sites = model.sites(X.shape[1])
    per_row = sum(widths[0] for widths, rates, _ in sites if rates[0] > 0.0)
    run = 0
    while state["epoch"] < target and not state["stopped"]:
        model.train()
        order = draw_order(n, generator, X.device)
        for first, updates, size in update_blocks(n, batch, per_row):
            keeps = draw_keep_masks([generator], updates, size, sites, X.device)
            for u in range(updates):
                for group in optimizer.param_groups:
                    group["lr"] = _learning_rate(net, state["epoch"], state["updates"])
                start = (first + u) * batch
                rows = order[start : start + size]
                masks = [None if keep is None else keep[u, 0] for keep in keeps]
                loss = functional.cross_entropy(model(X[rows], masks), y[rows])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                state["updates"] += 1
        state["epoch"] += 1
        run += 1
        model.eval()
        error = _error(model, X_check, y_check)
        state.setdefault("errors", []).append(error)  # a checkpoint from before: from here
        if error < state["best_error"] - settings.min_delta:
            state.update(best_error=error, best_epoch=state["epoch"], wait=0)
            state["best_model"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            state["wait"] += 1
            state["stopped"] = state["wait"] >= settings.patience
    return run


def predict(net: FeedForwardNetwork, X: np.ndarray) -> np.ndarray:
    """The fitted network's labels for ``X`` (no dropout)."""
    model = net.model_
    if len(X) == 0:
        return net.classes_[:0]
    dtype = getattr(torch, net.dtype)
    inputs = torch.as_tensor(np.ascontiguousarray(X), dtype=dtype, device=net.device_)
    with torch.no_grad():
        indices = torch.cat(
            [
                model(inputs[i : i + PREDICT_CHUNK_ROWS]).argmax(1)
                for i in range(0, len(inputs), PREDICT_CHUNK_ROWS)
            ]
        )
    return net.classes_[indices.cpu().numpy()]
