"""Many of seed 002's networks trained as one batched model: :func:`fit_together`.

Each member is a :class:`~hpo.learners.torch_network.FeedForwardNetwork` and ends as
:meth:`FeedForwardNetwork.fit` would leave it, to rounding (the same fitted attributes, a
``model_`` of its own shapes, a checkpoint either trainer resumes), but its epochs run in
lockstep with the other members'. A run's Hyperband and BOHB rungs, and random search's
batches, are trained so with the setting ``batch_networks``
(:meth:`hpo.evaluation.evaluator.Evaluator.pretrain`; ``docs/surrogates-hyperband.md``, "Many
networks as one batched model").

* **Groups.** Members that cannot share one chain of batched matmuls train in separate groups:
  the key is the depth, each hidden layer's activation, the classes and number of training rows,
  the batch size, the decay step, the device, the threads and the dtype. Within a group each
  layer's weights are stacked ``[M, in, out]`` and applied by ``torch.baddbmm``; a narrower
  member is padded to the group's widest layer. With ``width_buckets`` (the default) the key
  also holds each hidden layer's width bucket, ``ceil(log2(units))``, so that no layer is padded
  to twice its width or more: the prior's widths, log U(18, 1024), would otherwise pad a rung's
  mean network (249 units) to its widest (about 1,000), four times the work of each.
* **Padding** starts at 0 and stays exactly 0: a padded unit's activation is multiplied by 0
  (so no gradient reaches its weights, nor the next layer's weights from it) and every update
  is masked to the member's true entries.
* **Each member as if alone.** Its weights are initialised by the single-network code with its
  own CPU ``torch.Generator`` (its seed, its true fan-in and fan-out); the same generator then
  draws its batch order (``randperm``) each epoch and its dropout masks (at its true widths), in
  the order the single network draws them. As there, every number is drawn on the CPU, whatever
  the device, and moved (:mod:`hpo.learners.torch_network`, "Random streams on any device"):
  the masks of a block of updates, every member's, drawn at once
  (:func:`~hpo.learners.torch_network.draw_keep_masks`) and moved in one copy per dropout site,
  so a member draws the same numbers on a GPU as on the CPU. Its learning rate
  ``lr_0 / (1 + d·t)`` (§2.1.1.2) is a per-member tensor; its loss is its own mean
  cross-entropy, summed over members (so each member's gradient is its own). Plain SGD without
  momentum, as the single network.
* **Early stopping per member.** After each epoch each member's validation error (zero-one, on
  its own early-stopping rows) updates its own early-stopping state; a member that stops or
  reaches its target leaves the batch (the group is compacted, its weights written back), its
  best-epoch snapshot kept.

So a member's results depend on which other networks shared its batch only through rounding:
on the CPU in float64 they equal training it alone to rounding
(``tests/test_batched_network.py``, tolerance ``1e-10``); in float32, or with other members,
the batched kernels sum in another order, so the last bits can differ from the single
network's. At high learning rates (above about 1) training can be chaotic and such last bits
grow into other weights and losses: a batched run is a run of its own (``batch_networks`` is
part of the run's identity when on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from hpo.learners.network_settings import resolve_device
from hpo.learners.torch_network import (
    PREDICT_CHUNK_ROWS,
    FeedForwardNetwork,
    Network,
    _deterministic,
    _fingerprint,
    _holdout,
    _learning_rate,
    draw_keep_masks,
    draw_order,
    finish_training,
    set_fitted,
    start_training,
    target_epochs,
    update_blocks,
)

ROWS_PER_STEP = 2 * PREDICT_CHUNK_ROWS  # validation rows gathered at once, over all members


@dataclass
class _Member:
    """One network of a group: its estimator, rows of the pool, target and training state."""

    net: FeedForwardNetwork
    train_rows: np.ndarray
    valid_rows: np.ndarray
    classes: np.ndarray
    target: int
    checkpoint: Path | None
    fingerprint: str
    generator: torch.Generator
    model: Network
    state: dict[str, Any]
    run: int = 0
    widths: list[int] = field(default_factory=list)

    def active(self) -> bool:
        return self.state["epoch"] < self.target and not self.state["stopped"]


@dataclass
class _Batch:
    """The members training now, compacted: their stacked weights and biases (with gradients),
    masks of their true entries and units, rates, decays, dropout rates and true widths per
    layer (the input first)."""

    members: list[_Member]
    weights: list[torch.Tensor]
    biases: list[torch.Tensor]
    weight_masks: list[torch.Tensor]
    unit_masks: list[torch.Tensor]
    lr0: torch.Tensor
    decay: torch.Tensor
    rates: list[list[float]]
    widths: list[list[int]]


def fit_together(
    nets: Sequence[FeedForwardNetwork],
    X: np.ndarray,
    y: np.ndarray,
    validation: tuple[np.ndarray, np.ndarray] | None = None,
    epochs: float | None | Sequence[float | None] = None,
    checkpoints: Sequence[str | Path | None] | None = None,
    width_buckets: bool = True,
) -> list[NetworkGroup]:
    """Fit every network of ``nets`` on ``(X, y)`` as :meth:`FeedForwardNetwork.fit` would
    (same ``validation``; ``epochs`` one value or one per network; ``checkpoints`` one file or
    None per network), training them in batched groups (module docstring; ``width_buckets``
    splits them by width too); returns the groups,
    whose stacked weights (``weights``, ``biases``, padding where ``weight_masks`` is False)
    are the members' last-epoch weights."""
    count = len(nets)
    if epochs is None or np.ndim(epochs) == 0:
        epochs = [epochs] * count
    epochs = list(epochs)
    checkpoints = [None] * count if checkpoints is None else list(checkpoints)
    if len(epochs) != count or len(checkpoints) != count:
        raise ValueError(
            f"fit_together needs one epochs and one checkpoint per network ({count}), "
            f"got {len(epochs)} and {len(checkpoints)}"
        )
    X, y = np.asarray(X), np.asarray(y)
    if validation is None:
        pool_X, pool_y, valid = X, y, None
    else:
        pool_X = np.concatenate([X, np.asarray(validation[0])])
        pool_y = np.concatenate([y, np.asarray(validation[1])])
        valid = np.arange(len(y), len(pool_y))
    groups: dict[tuple, list[tuple[FeedForwardNetwork, np.ndarray, np.ndarray, Any, Any]]] = {}
    for net, e, path in zip(nets, epochs, checkpoints, strict=True):
        if valid is None:
            rows, held = _holdout(len(y), net.settings.holdout_fraction, net.random_state)
        else:
            rows, held = np.arange(len(y)), valid
        classes = np.unique(y)  # as the single network: every training label, held out or not
        s = net.settings
        key = (
            tuple(layer.activation for layer in net.layers),
            tuple(classes.tolist()),
            len(rows),
            s.batch_size,
            s.decay_step,
            resolve_device(s.device),
            s.threads,
            net.dtype,
            tuple(math.ceil(math.log2(layer.units)) for layer in net.layers)
            if width_buckets
            else (),
        )
        groups.setdefault(key, []).append((net, rows, held, e, path))
    trained = []
    for key, members in groups.items():
        device, threads, dtype = torch.device(key[5]), key[6], getattr(torch, key[7])
        with _deterministic(threads):
            group = NetworkGroup(members, pool_X, pool_y, device, dtype, np.unique(y))
            group.train()
        trained.append(group)
    return trained


def _dropout(
    x: torch.Tensor, keep: torch.Tensor | None, divisor: torch.Tensor | None
) -> torch.Tensor:
    """Inverted dropout at one site of every member (``x`` ``[members, rows, width]``) with the
    masks ``keep`` (each member's drawn from its own generator at its true width, as the single
    network draws it, its padded units dropped) and ``1 − rate`` per member, ``divisor``; the
    identity where no member drops out (None)."""
    if keep is None or divisor is None:
        return x
    return x * keep / divisor


class NetworkGroup:
    """Members of one group key, their stacked padded weights and their lockstep epochs."""

    def __init__(
        self,
        members: list[tuple[FeedForwardNetwork, np.ndarray, np.ndarray, Any, Any]],
        pool_X: np.ndarray,
        pool_y: np.ndarray,
        device: torch.device,
        dtype: torch.dtype,
        classes: np.ndarray | None = None,
    ) -> None:
        self.device, self.dtype = device, dtype
        self.X = torch.as_tensor(np.ascontiguousarray(pool_X), dtype=dtype, device=device)
        first = members[0][0]
        self.classes = np.unique(pool_y[members[0][1]]) if classes is None else classes
        known = np.isin(pool_y, self.classes)
        labels = np.where(known, np.searchsorted(self.classes, pool_y), -1)
        self.y = torch.as_tensor(labels, dtype=torch.int64, device=device)
        self.activations = [
            torch.tanh if layer.activation == "tanh" else torch.sigmoid for layer in first.layers
        ]
        self.batch = first.settings.batch_size
        self.by_update = first.settings.decay_step == "update"
        self.members = [self._member(*m, pool_X, pool_y) for m in members]
        depth = len(first.layers)
        sizes = [pool_X.shape[1]]
        sizes += [max(m.widths[k] for m in self.members) for k in range(depth)]
        sizes += [len(self.classes)]
        self.sizes = sizes
        count = len(self.members)
        self.weights = [
            torch.zeros(count, sizes[k], sizes[k + 1], dtype=dtype, device=device)
            for k in range(depth + 1)
        ]
        self.biases = [torch.zeros(count, sizes[k + 1], dtype=dtype, device=device)
                       for k in range(depth + 1)]  # fmt: skip
        for i, member in enumerate(self.members):
            self._scatter(i, member.model)
        self.padded = any(m.widths != sizes[1:-1] for m in self.members)
        self.weight_masks = [torch.zeros_like(w, dtype=torch.bool) for w in self.weights]
        self.unit_masks = [torch.zeros_like(b, dtype=torch.bool) for b in self.biases]
        for i, member in enumerate(self.members):
            true = [sizes[0], *member.widths, sizes[-1]]
            for k in range(depth + 1):
                self.weight_masks[k][i, : true[k], : true[k + 1]] = True
                self.unit_masks[k][i, : true[k + 1]] = True

    def _member(
        self,
        net: FeedForwardNetwork,
        rows: np.ndarray,
        held: np.ndarray,
        epochs: float | None,
        checkpoint: str | Path | None,
        pool_X: np.ndarray,
        pool_y: np.ndarray,
    ) -> _Member:
        """A member initialised as :func:`~hpo.learners.torch_network.train` initialises it,
        resumed from its checkpoint when that holds this model."""
        target = target_epochs(net, epochs)
        path = None if checkpoint is None else Path(checkpoint)
        fingerprint = "" if path is None else _fingerprint(net, pool_X[rows], pool_y[rows])
        n_inputs, n_outputs = pool_X.shape[1], len(self.classes)
        model, generator, state = start_training(
            net, n_inputs, n_outputs, self.device, path, fingerprint, target
        )
        widths = [layer.units for layer in net.layers]
        return _Member(
            net, rows, held, self.classes, target, path, fingerprint, generator, model, state,
            widths=widths,
        )  # fmt: skip

    def _scatter(self, i: int, model: Network) -> None:
        """Member ``i``'s weights (of ``model``, its true shapes) into the stacked tensors."""
        linears = [*model.hidden, model.output]
        with torch.no_grad():
            for k, linear in enumerate(linears):
                out, inp = linear.weight.shape
                self.weights[k][i, :inp, :out] = linear.weight.T
                self.biases[k][i, :out] = linear.bias

    def _gather(
        self, member: _Member, i: int, weights: list[torch.Tensor], biases: list[torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """``member``'s state dict (its true shapes) from row ``i`` of stacked tensors."""
        true = [self.sizes[0], *member.widths, self.sizes[-1]]
        names = [f"hidden.{k}" for k in range(len(member.widths))] + ["output"]
        state = {}
        for k, name in enumerate(names):
            w = weights[k][i, : true[k], : true[k + 1]]
            state[f"{name}.weight"] = w.T.detach().clone().contiguous()
            state[f"{name}.bias"] = biases[k][i, : true[k + 1]].detach().clone()
        return state

    def train(self) -> None:
        """Lockstep epochs of the active members until none is left; then each member's
        checkpoint, best weights and fitted attributes as the single network sets them."""
        active = [i for i, m in enumerate(self.members) if m.active()]
        while active:
            self._epochs(active)
            active = [i for i in active if self.members[i].active()]
        for i, member in enumerate(self.members):
            self._finish(i, member)

    def _epochs(self, active: list[int]) -> None:
        """Epochs of the members ``active`` (compacted into their own tensors) until one of
        them leaves; their weights are written back."""
        index = torch.as_tensor(active, device=self.device)
        members = [self.members[i] for i in active]
        depth = len(self.sizes) - 2
        batch = _Batch(
            members=members,
            weights=[w.index_select(0, index).requires_grad_(True) for w in self.weights],
            biases=[b.index_select(0, index).requires_grad_(True) for b in self.biases],
            weight_masks=[m.index_select(0, index) for m in self.weight_masks],
            unit_masks=[m.index_select(0, index).unsqueeze(1).to(self.dtype)
                        for m in self.unit_masks[:-1]],
            lr0=torch.tensor([m.net.learning_rate for m in members], dtype=torch.float64),
            decay=torch.tensor([m.net.decay for m in members], dtype=torch.float64),
            rates=[[m.net.input_dropout for m in members]]
            + [[m.net.layers[k].dropout for m in members] for k in range(depth)],
            widths=[[self.sizes[0]] * len(members)]
            + [[m.widths[k] for m in members] for k in range(depth)],
        )  # fmt: skip
        while all(m.active() for m in members):
            self._epoch(batch)
            self._validate(batch)
        with torch.no_grad():
            for k in range(len(batch.weights)):
                self.weights[k][index] = batch.weights[k].detach()
                self.biases[k][index] = batch.biases[k].detach()

    def _layer(self, batch: _Batch, x: torch.Tensor, k: int) -> torch.Tensor:
        """Hidden layer ``k`` of every member of ``batch`` on ``x`` ``[M, rows, in]``, its
        padded units 0."""
        x = self.activations[k](torch.baddbmm(batch.biases[k].unsqueeze(1), x, batch.weights[k]))
        return x * batch.unit_masks[k] if self.padded else x

    def _epoch(self, batch: _Batch) -> None:
        """One epoch of SGD for every member of ``batch``, each on its own batch order."""
        members, weights, biases = batch.members, batch.weights, batch.biases
        n = len(members[0].train_rows)
        orders = torch.stack(
            [
                torch.as_tensor(m.train_rows, device=self.device)[
                    draw_order(n, m.generator, self.device)
                ]
                for m in members
            ]
        )
        epoch = torch.tensor([float(m.state["epoch"]) for m in members], dtype=torch.float64)
        updates = torch.tensor([float(m.state["updates"]) for m in members], dtype=torch.float64)
        divisors = [
            torch.tensor([1.0 - r for r in layer], dtype=self.dtype, device=self.device)
            .view(-1, 1, 1) if any(r > 0 for r in layer) else None
            for layer in batch.rates
        ]  # fmt: skip
        parameters = [*weights, *biases]
        # a bias entry is true where its unit is (every member has its true first input)
        masks = [*batch.weight_masks, *(m[:, 0, :] for m in batch.weight_masks)]
        generators = [m.generator for m in members]
        sites = [
            (widths, rates, self.sizes[k])
            for k, (widths, rates) in enumerate(zip(batch.widths, batch.rates, strict=True))
        ]
        per_row = len(members) * sum(
            self.sizes[k] for k, divisor in enumerate(divisors) if divisor is not None
        )
        for first, count, size in update_blocks(n, self.batch, per_row):
            keeps = draw_keep_masks(generators, count, size, sites, self.device)
            for u in range(count):
                step = first + u
                t = updates + step if self.by_update else epoch
                lr = (batch.lr0 / (1.0 + batch.decay * t)).to(self.dtype).to(self.device)
                rows = orders[:, step * self.batch : step * self.batch + size]
                keep = [None if k is None else k[u] for k in keeps]
                self._update(batch, parameters, masks, rows, keep, divisors, lr)
        steps = -(-n // self.batch)
        for m in members:
            m.state["updates"] += steps
            m.state["epoch"] += 1
            m.run += 1

    def _update(
        self,
        batch: _Batch,
        parameters: list[torch.Tensor],
        masks: list[torch.Tensor],
        rows: torch.Tensor,
        keeps: list[torch.Tensor | None],
        divisors: list[torch.Tensor | None],
        lr: torch.Tensor,
    ) -> None:
        """One SGD update of every member of ``batch`` (``parameters``, their true entries
        ``masks``) on its ``rows`` of the pool, with dropout masks ``keeps`` (one per site,
        ``[members, rows, width]``, or None) and learning rates ``lr``."""
        weights, biases = batch.weights, batch.biases
        x = _dropout(self.X[rows], keeps[0], divisors[0])
        for k in range(len(self.activations)):
            x = _dropout(self._layer(batch, x, k), keeps[k + 1], divisors[k + 1])
        logits = torch.baddbmm(biases[-1].unsqueeze(1), x, weights[-1])
        losses = functional.cross_entropy(
            logits.transpose(1, 2), self.y[rows], reduction="none"
        ).mean(dim=1)
        gradients = torch.autograd.grad(losses.sum(), parameters)
        with torch.no_grad():
            for p, g, mask in zip(parameters, gradients, masks, strict=True):
                scale = lr.view(-1, *([1] * (g.dim() - 1)))
                if self.padded:
                    g = torch.where(mask, g, torch.zeros((), dtype=g.dtype))
                p.addcmul_(g, scale, value=-1.0)

    def _validate(self, batch: _Batch) -> None:
        """Each member's validation error after an epoch, and its early-stopping state."""
        members = batch.members
        valid = torch.as_tensor(np.stack([m.valid_rows for m in members]), device=self.device)
        chunk = max(1, ROWS_PER_STEP // len(members))
        predicted = []
        with torch.no_grad():
            for first in range(0, valid.shape[1], chunk):
                x = self.X[valid[:, first : first + chunk]]
                for k in range(len(self.activations)):
                    x = self._layer(batch, x, k)
                logits = torch.baddbmm(batch.biases[-1].unsqueeze(1), x, batch.weights[-1])
                predicted.append(logits.argmax(2))
        labels = self.y[valid]
        for j, (member, guess) in enumerate(zip(members, torch.cat(predicted, 1), strict=True)):
            error = float((guess != labels[j]).float().mean())
            state, settings = member.state, member.net.settings
            state.setdefault("errors", []).append(error)
            if error < state["best_error"] - settings.min_delta:
                state.update(best_error=error, best_epoch=state["epoch"], wait=0)
                state["best_model"] = self._gather(member, j, batch.weights, batch.biases)
            else:
                state["wait"] += 1
                state["stopped"] = state["wait"] >= settings.patience

    def _finish(self, i: int, member: _Member) -> None:
        """Member ``i``'s model, checkpoint and fitted attributes, as the single network's."""
        net, state, model = member.net, member.state, member.model
        model.load_state_dict(self._gather(member, i, self.weights, self.biases))
        # the rate the single network's optimizer holds after its last update (it sets the rate
        # before every update, so a resumed fit reads none of it)
        last = _learning_rate(net, state["epoch"] - 1, state["updates"] - 1)
        optimizer = torch.optim.SGD(
            model.parameters(), lr=last if member.run else net.learning_rate
        )
        finish_training(
            net, model, optimizer, member.generator, state, member.checkpoint, member.fingerprint
        )
        set_fitted(net, model, member.classes, self.device, state, member.run)
