"""Seed 002's feed-forward network (Jůzlová 2018, §2.1.1.2, Table 2.1): learner ``ffnn``.

One to three fully connected hidden layers, each with its own number of units, activation (tanh
or sigmoid), weight initialisation (U(−1, 1) or N(0, 1)) and dropout rate, plus dropout on the
input; a softmax output layer trained by categorical cross-entropy; plain SGD whose learning rate
decays as ``lr_t = lr_0 / (1 + d·t)`` (§2.1.1.2); early stopping on the validation error; an
epoch cap (MNIST 1,000 epochs, MRBI 2,000). Training can **resume**: given a checkpoint file and
a number of epochs, the network continues from the epoch saved there, so training a
configuration to r epochs and later to r' > r costs r' − r epochs (Hyperband's partial
evaluations, §1.3.3; the seed saved and reloaded its Keras models).

Configuration (the space's parameters, ``conf/space/ffnn_mnist.yaml`` and ``ffnn_mrbi.yaml``):
``learning_rate``, ``decay``, ``units_1``, ``activation_1``, ``init_1``, and optionally
``input_dropout``, ``dropout_1``, ``layer_2`` ("True"/"False", the "next layer exists" flag),
``units_2`` … ``dropout_3``. A layer exists when every flag up to it is "True"; a missing dropout
is 0.

Settings (fixed for a run, not searched; a space file's ``settings:`` mapping, overridable as
``space.settings.<name>=...``): :class:`NetworkSettings`, every one of the seed's unstated
points (**[?]** in ``../shared/spec/seed002-approximation.md``) with its documented default
(``docs/seed002.md``).

This module imports no PyTorch (importing :mod:`hpo.learners` stays light, and the package
works without the ``nn`` extra); the network itself is :mod:`hpo.learners.torch_network`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.learners.guard import FitGuard
from hpo.learners.registry import Value, register_learner

ACTIVATIONS = ("tanh", "sigmoid")  # Table 2.1
INITS = ("uniform", "normal")  # Table 2.1: U(-1, 1) and N(0, 1)
DEVICES = ("auto", "cpu", "cuda")
DECAY_STEPS = ("epoch", "update")
MAX_HIDDEN_LAYERS = 3  # §2.1.1.2 (MRBI: "from one up to three hidden layers")
TORCH_INSTALL = "pip install torch==2.13.0 (the `nn` extra; README, 'Neural networks')"


@dataclass(frozen=True)
class NetworkSettings:
    """What the seed fixes or leaves unstated about training (defaults: ``docs/seed002.md``).

    * ``max_epochs`` — the epoch cap: 1,000 for MNIST, 2,000 for MRBI (§2.1.1.2).
    * ``patience`` — epochs without a lower validation error before training stops [?: the seed
      says only that early stopping "can be used"]; 20, one Hyperband unit.
    * ``min_delta`` — the decrease of the validation error that counts as one [?]; 0.
    * ``batch_size`` — [?]; 32, Keras's default.
    * ``decay_step`` — ``epoch`` (the seed's text: the rate "decreases … in each epoch") or
      ``update`` (Keras's ``SGD(decay=…)`` counts updates) [?].
    * ``restore_best`` — predict with the weights of the best validation epoch (True) or the
      last epoch (False, Keras's ``EarlyStopping`` default) [?]; True.
    * ``holdout_fraction`` — without a validation set (the final retraining on all non-test
      rows), this share of the training rows is held out, seeded, for early stopping [decide].
    * ``device`` — ``cpu`` (default, deterministic), ``cuda``, or ``auto`` (a GPU when present).
    * ``threads`` — PyTorch's intra-op threads during a fit (1: deterministic, and no contention
      with parallel runs).
    """

    max_epochs: int = 1000
    patience: int = 20
    min_delta: float = 0.0
    batch_size: int = 32
    decay_step: str = "epoch"
    restore_best: bool = True
    holdout_fraction: float = 0.2
    device: str = "cpu"
    threads: int = 1

    def __post_init__(self) -> None:
        _check_choice("decay_step", self.decay_step, DECAY_STEPS)
        _check_choice("device", self.device, DEVICES)
        for name in ("max_epochs", "batch_size", "threads"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"ffnn setting {name} must be >= 1, got {getattr(self, name)}")
        if self.patience < 1:
            raise ValueError(f"ffnn setting patience must be >= 1, got {self.patience}")
        if not 0.0 < self.holdout_fraction < 1.0:
            raise ValueError(
                f"ffnn setting holdout_fraction must be in (0, 1), got {self.holdout_fraction}"
            )
        if self.min_delta < 0:
            raise ValueError(f"ffnn setting min_delta must be >= 0, got {self.min_delta}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> NetworkSettings:
        """Settings from a mapping (a space file's ``settings:``); unknown names are refused in
        one line naming the valid ones."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ValueError(
                f"unknown ffnn setting(s) {', '.join(unknown)}; valid: {', '.join(fields)}"
            )
        converted: dict[str, Any] = {}
        for name, value in values.items():
            kind = type(getattr(cls(), name))
            if kind is bool:
                text = str(value).lower()
                if text not in ("true", "false"):
                    raise ValueError(f"ffnn setting {name} must be true or false, got {value!r}")
                converted[name] = text == "true"
            else:
                try:
                    converted[name] = kind(value)
                except (TypeError, ValueError):
                    raise ValueError(
                        f"ffnn setting {name} must be a {kind.__name__}, got {value!r}"
                    ) from None
        return cls(**converted)


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown ffnn {name} {value!r}; valid choices: {', '.join(choices)}")


def torch_available() -> bool:
    """Whether PyTorch is installed (the ``nn`` extra)."""
    return importlib.util.find_spec("torch") is not None


def resolve_device(device: str) -> str:
    """``cpu`` or ``cuda`` for a ``device`` setting; ``cuda`` without a GPU is a one-line
    ``ValueError``."""
    _check_choice("device", device, DEVICES)
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "auto":
        return "cpu"
    raise ValueError(
        "ffnn device 'cuda' but PyTorch sees no GPU (torch.cuda.is_available() is False); "
        "valid here: cpu, auto"
    )


def check_settings(settings: Mapping[str, Any]) -> None:
    """Refuse bad settings, a missing PyTorch or ``device=cuda`` without a GPU, in one line,
    before a run starts (a fit's own errors are recorded as failed evaluations instead)."""
    parsed = NetworkSettings.from_mapping(settings)
    if not torch_available():
        raise ValueError(f"learner 'ffnn' needs PyTorch, which is not installed: {TORCH_INSTALL}")
    resolve_device(parsed.device)


@dataclass(frozen=True)
class HiddenLayer:
    """One hidden layer: units, activation, weight initialisation, dropout on its output."""

    units: int
    activation: str
    init: str
    dropout: float = 0.0

    def __post_init__(self) -> None:
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_choice("init", self.init, INITS)
        if self.units < 1:
            raise ValueError(f"ffnn layer units must be >= 1, got {self.units}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"ffnn dropout must be in [0, 1), got {self.dropout}")


def hidden_layers(config: Mapping[str, Value]) -> tuple[HiddenLayer, ...]:
    """The hidden layers a configuration describes: layer 1, then layer k while ``layer_k`` is
    "True" (the "next layer exists" flags of Table 2.1)."""
    layers = []
    for k in range(1, MAX_HIDDEN_LAYERS + 1):
        if k > 1 and str(config.get(f"layer_{k}", "False")) != "True":
            break
        layers.append(
            HiddenLayer(
                units=int(config[f"units_{k}"]),
                activation=str(config[f"activation_{k}"]),
                init=str(config[f"init_{k}"]),
                dropout=float(config.get(f"dropout_{k}", 0.0)),
            )
        )
    return tuple(layers)


class FeedForwardNetwork:
    """The seed's network as an estimator: ``fit`` (optionally with a validation set, a target
    number of epochs and a checkpoint file to resume from and save to) and ``predict``.

    After ``fit``: ``epochs_trained_`` (total epochs of the model), ``epochs_run_`` (epochs this
    call trained: the resource it spent), ``stopped_early_``, ``best_epoch_``.
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
    ) -> None:
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
        from hpo.learners.torch_network import train

        train(self, np.asarray(X), np.asarray(y), validation, epochs, checkpoint)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        from hpo.learners.torch_network import predict

        return predict(self, np.asarray(X))


@register_learner("ffnn", settings_check=check_settings, resources=("epochs", "train_fraction"))
def ffnn(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> Any:
    """The network at a configuration of ``ffnn_mnist`` or ``ffnn_mrbi``; settings given in the
    configuration (the space's ``settings:``) override :class:`NetworkSettings`'s defaults."""
    names = {f.name for f in dataclasses.fields(NetworkSettings)}
    settings = NetworkSettings.from_mapping({k: v for k, v in config.items() if k in names})
    return FeedForwardNetwork(
        hidden_layers(config),
        learning_rate=float(config["learning_rate"]),
        decay=float(config["decay"]),
        input_dropout=float(config.get("input_dropout", 0.0)),
        settings=settings,
        random_state=seed,
    )
