"""Optimizer families behind one ask/tell interface, and the registry the runner uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal, SurrogateOptimizer
from hpo.optimizers.grid import GridSearch
from hpo.optimizers.random_search import RandomSearch
from hpo.space import Space

OptimizerFactory = Callable[..., Optimizer]


def _gp_factory(*args: Any, **kwargs: Any) -> Optimizer:
    from hpo.optimizers.bayes import GPEIOptimizer  # heavy imports only when used

    return GPEIOptimizer(*args, **kwargs)


def _cma_factory(*args: Any, **kwargs: Any) -> Optimizer:
    from hpo.optimizers.cmaes import CMAESOptimizer

    return CMAESOptimizer(*args, **kwargs)


FAMILIES: dict[str, OptimizerFactory] = {
    "grid": GridSearch,
    "rs": RandomSearch,
    "gp": _gp_factory,
    "cma": _cma_factory,
}


def make_optimizer(
    family: str, space: Space, budget: int, rng: np.random.Generator, **settings: Any
) -> Optimizer:
    """Build optimizer ``family`` with its ``settings`` (keyword arguments of its class)."""
    if family not in FAMILIES:
        raise KeyError(f"unknown optimizer family {family!r}; valid: {', '.join(FAMILIES)}")
    return FAMILIES[family](space, budget, rng, **settings)


__all__ = [
    "FAMILIES",
    "GridSearch",
    "Optimizer",
    "Proposal",
    "RandomSearch",
    "SurrogateOptimizer",
    "make_optimizer",
]
