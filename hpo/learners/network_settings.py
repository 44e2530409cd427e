"""What seed 002's network is told, without PyTorch: its settings (:class:`NetworkSettings`, every
unstated point of the seed with its documented default, ``docs/surrogates-hyperband.md``), its
hidden layers (:class:`HiddenLayer`, read from a configuration by :func:`hidden_layers`), the
device and the checks a run makes before it starts (Jůzlová 2018, §2.1.1.2, Table 2.1).

Shared by the learner entry (:mod:`hpo.learners.ffnn`) and the network itself
(:mod:`hpo.learners.torch_network`), so that neither imports the other back.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hpo.learners.registry import Value

ACTIVATIONS = ("tanh", "sigmoid")  # Table 2.1
CUBLAS_WORKSPACE = ":4096:8"  # cuBLAS's deterministic workspace (CUBLAS_WORKSPACE_CONFIG)
INITS = ("uniform", "normal")  # Table 2.1: U(-1, 1) and N(0, 1)
DEVICES = ("auto", "cpu", "cuda")
DECAY_STEPS = ("epoch", "update")
MAX_HIDDEN_LAYERS = 3  # §2.1.1.2 (MRBI: "from one up to three hidden layers")
TORCH_INSTALL = "pip install torch==2.13.0 (the `nn` extra; README, 'Neural networks')"


@dataclass(frozen=True)
class NetworkSettings:
    """What the seed fixes or leaves unstated about training.

    Defaults: ``docs/surrogates-hyperband.md``.

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
        # the fits run with deterministic algorithms on, which cuBLAS allows only with a fixed
        # workspace (PyTorch's "Reproducibility" notes); set before the process's first cuBLAS call
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
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
