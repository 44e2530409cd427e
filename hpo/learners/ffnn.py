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
``space.settings.<name>=...``): :class:`NetworkSettings`, every one of the points Jůzlová 2018
leaves unstated, with its documented default (``docs/surrogates-hyperband.md``).

This module imports no PyTorch (importing :mod:`hpo.learners` stays light, and the package
works without the ``nn`` extra): the settings and layers are :mod:`hpo.learners.network_settings`,
the network itself :class:`hpo.learners.torch_network.FeedForwardNetwork`, imported when one is
built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hpo.learners.guard import FitGuard
from hpo.learners.network_settings import NetworkSettings, check_settings, hidden_layers
from hpo.learners.registry import Value, register_learner


@register_learner(
    "ffnn",
    settings_check=check_settings,
    resources=("epochs", "train_fraction"),
    batch_trainer="hpo.learners.batched_network:fit_together",
)
def ffnn(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> Any:
    """The network at a configuration of ``ffnn_mnist`` or ``ffnn_mrbi``; settings given in the
    configuration (the space's ``settings:``) override :class:`NetworkSettings`'s defaults."""
    names = {f.name for f in dataclasses.fields(NetworkSettings)}
    settings = NetworkSettings.from_mapping({k: v for k, v in config.items() if k in names})
    from hpo.learners.torch_network import FeedForwardNetwork

    return FeedForwardNetwork(
        hidden_layers(config),
        learning_rate=float(config["learning_rate"]),
        decay=float(config["decay"]),
        input_dropout=float(config.get("input_dropout", 0.0)),
        settings=settings,
        random_state=seed,
    )
