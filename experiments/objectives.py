"""Black-box objectives made of Chapter 3's protocol, for benchmarking optimizers outside a run.

``svm_validation_objective(dataset, seed)`` is the loss the ``gp`` optimizer minimises in
Chapter 3: a point ``u`` of the unit square decodes to ``(C, gamma)`` of the RBF-SVM space
(log10-uniform in [1e-5, 1e5]), which is fitted on the hold-out training part of repetition
``seed``'s split and scored by its validation error (a fraction). Same split for every call, no
reshuffling, the run's fit guard and caches: a benchmark comparing optimizers on it compares them
on exactly the problem of the thesis's ``gp`` runs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from experiments.spaces import load_space
from hpo.data.catalog import load_dataset
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard


def svm_validation_objective(
    dataset: str, seed: int, data_dir: str | None = None, fit_guard: FitGuard | None = None
) -> Callable[[np.ndarray], float]:
    """``u -> validation error`` of the RBF-SVM on ``dataset``'s hold-out split for ``seed``."""
    data = load_dataset(dataset, data_dir)
    evaluator = Evaluator(
        data, ProtocolSettings(), lambda config: "svm_rbf", fit_guard or FitGuard(), seed, 0
    )
    space = load_space("svm_rbf")

    def objective(u: np.ndarray) -> float:
        return evaluator.validate(space.decode(np.asarray(u, dtype=float)), batch=0).valid_loss

    return objective
