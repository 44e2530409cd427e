"""TPE (seed 004 §2.2.2; Bergstra et al. 2011) through hyperopt, the seed's own implementation.

hyperopt is the library Auto-WEKA ran (its ``tperunner.py`` calls ``tpe.suggest`` with its
defaults, spec B1.5 [ext]) and is maintained, so it is used rather than rewritten. The conversion
to hyperopt's tree and the ask/tell around ``tpe.suggest`` are seed 002's
(:class:`hpo.optimizers.tpe.TPEOptimizer`, one implementation for both seeds, at the ``tpe``
extra's pinned hyperopt), with shared nodes (:class:`SharedNodeTPE`): a parameter active under
several values of its parent (``meta_base`` under every meta-method, ensemble slot ``i`` under
every size >= i) is one node referenced from each of those branches, so TPE fits one Parzen
estimator to every configuration in which it was active, as the space means it (one node per
path would multiply the labels fourfold and TPE's time with them).

TPE cannot evaluate one fold at a time (§2.2.2): :class:`TPE` scores each configuration on
every instance and tells hyperopt the mean. ``gamma`` is hyperopt's default 0.25 (what the
Auto-WEKA code ran); the thesis text states 0.15 (the NIPS paper's), available as a setting
(docs/autoweka.md). ``n_startup_jobs`` and ``n_ei_candidates`` are hyperopt's defaults (20, 24),
not seed 002's one start point.
"""

from __future__ import annotations

import numpy as np

from hpo.optimizers.base import Optimizer
from hpo.optimizers.instances import OnEveryInstance
from hpo.optimizers.tpe import TPEOptimizer
from hpo.space.search_space import Space

NO_BUDGET = 2**31 - 1  # the run's budget (seconds or evaluations) stops TPE, not the optimizer


class SharedNodeTPE(TPEOptimizer):
    """Seed 002's adapter on the CASH tree: a parameter under several parent values is one node."""

    shared_nodes = True


class TPE(OnEveryInstance):
    """hyperopt's ``tpe.suggest`` asked and told one configuration at a time."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        instances: str = "cv",
        budget_factor: float = 1.0,
        gamma: float = 0.25,
        n_startup_jobs: int = 20,
        n_ei_candidates: int = 24,
    ) -> None:
        super().__init__(space, budget, rng, instances, budget_factor)
        if n_ei_candidates < 1:
            raise ValueError("n_ei_candidates must be >= 1")
        self.tpe_settings = {
            "n_startup_jobs": n_startup_jobs,
            "gamma": gamma,
            "n_EI_candidates": n_ei_candidates,
        }

    def _inner(self) -> Optimizer:
        return SharedNodeTPE(self.space, NO_BUDGET, self.rng, **self.tpe_settings)
