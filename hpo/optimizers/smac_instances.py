"""SMAC (seed 004 §2.2.1) through SMAC3 2.x, with the instances of the run as SMAC's instances.

:class:`SMACInstances` is the seed's SMAC: SMAC3's hyperparameter-optimisation facade (random
forest on the configurations with inactive dimensions at their defaults, expected improvement,
local and random search) whose intensifier races a challenger against the incumbent instance by
instance, so a poor challenger is rejected after one fold and the incumbent gains a fold each
time it survives, up to every instance (``max_config_calls`` = the number of instances; SMAC3's
own default is 3). Interleaved random configurations: every other one (``random_probability``
0.5, seed §2.2.1; SMAC3's default is 0.2). With CV folds as instances this is "SMAC"; with the
Multi-Level or RRSV instances of :mod:`hpo.evaluation.instances` it is those variants (§4.4).

:class:`SMACBatch` is SMAC-10-Batch (§4.4): SMAC without instances, each configuration scored
on every fold before SMAC hears its mean (no racing).

The conversion of the space and the determinism fixes are those of the Chapter-5 adapter
(:mod:`hpo.optimizers.smac`); SMAC writes nothing (its output folder is a temporary directory).
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hpo.cash.space import CashSpace
from hpo.optimizers.backends.configspace_shortcuts import configspace_shortcuts
from hpo.optimizers.base import Proposal
from hpo.optimizers.instances import CashOptimizer, FullEvaluation
from hpo.optimizers.smac import (
    config_of,
    impute_defaults,
    impute_in_one_pass,
    order_local_search_starts,
    predict_best_in_one_batch,
    to_configspace,
)
from hpo.space.search_space import Space

UNBOUNDED_TRIALS = 10**9  # the run's time budget stops SMAC


def _check(random_probability: float, initial_configs: int) -> None:
    if not 0 <= random_probability <= 1:
        raise ValueError(f"random_probability must be in [0, 1], got {random_probability}")
    if initial_configs < 1:
        raise ValueError(f"initial_configs must be >= 1, got {initial_configs}")


def _facade(
    cash: CashSpace,
    rng: np.random.Generator,
    instances: list[str] | None,
    random_probability: float,
    initial_configs: int,
) -> Any:
    from smac import HyperparameterOptimizationFacade as Facade
    from smac import Scenario

    logging.getLogger("smac").setLevel(logging.WARNING)
    # the folds have no features; SMAC's model then sees each configuration's per-fold costs as
    # repeated observations (as the seed's SMAC without instance features), which it warns about
    logging.getLogger("smac.runhistory.encoder.abstract_encoder").setLevel(logging.ERROR)
    seed = int(rng.integers(0, 2**31 - 1))
    configspace = to_configspace(cash.space, seed)
    # the facade draws its Sobol initial design on construction: ConfigSpace's shortcuts too
    with tempfile.TemporaryDirectory(prefix="hpo-smac-") as directory, configspace_shortcuts():
        scenario = Scenario(
            configspace,
            output_directory=Path(directory),
            deterministic=True,
            n_trials=UNBOUNDED_TRIALS,
            seed=seed,
            instances=instances,  # no instance features (the folds have none; spec B1.4)
        )
        facade = Facade(
            scenario,
            target_function=None,
            intensifier=Facade.get_intensifier(
                scenario, max_config_calls=len(instances) if instances else 1
            ),
            random_design=Facade.get_random_design(scenario, probability=random_probability),
            initial_design=Facade.get_initial_design(scenario, n_configs=initial_configs),
            logging_level=False,
            overwrite=True,
        )
    impute_defaults(facade, configspace)
    impute_in_one_pass(facade)
    order_local_search_starts(facade)
    predict_best_in_one_batch(facade)
    # [decision] SMAC 2.4's forest uses every core (n_jobs=-1) through joblib threads; on shared
    # cores that costs more than it saves (measured: half of SMAC's time in joblib's waits)
    facade._model._rf_opts["n_jobs"] = 1
    # [decision] SMAC 2.4 caps its trees at 2^20 leaves, which makes scikit-learn preallocate
    # 2^21 nodes per tree (0.1 s per tree on 10 rows); no tree of ours comes near the cap, so
    # it is lifted: the same unpruned trees, grown depth-first instead of best-first
    facade._model._rf_opts["max_leaf_nodes"] = None
    return facade


def _ask(facade: Any) -> Any:
    with warnings.catch_warnings(), configspace_shortcuts():
        # SMAC's local search averages an empty list for a log
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        return facade.ask()


def _tell(facade: Any, info: Any, loss: float) -> None:
    from smac.runhistory import TrialValue

    with configspace_shortcuts():
        facade.tell(info, TrialValue(cost=float(loss)), save=False)


class _SMACSettings(CashOptimizer):
    """The settings both SMAC families take (seed §2.2.1: every other configuration random)."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        instances: str = "cv",
        budget_factor: float = 1.0,
        random_probability: float = 0.5,
        initial_configs: int = 10,
    ) -> None:
        super().__init__(space, budget, rng, instances, budget_factor)
        _check(random_probability, initial_configs)
        self.random_probability = random_probability
        self.initial_configs = initial_configs


class SMACInstances(_SMACSettings):
    """SMAC racing configurations over the instances (see the module)."""

    def _begin(self) -> None:
        assert self.cash is not None
        self.instance_names = [f"instance-{i}" for i in range(self.n_instances)]
        self._index = {name: i for i, name in enumerate(self.instance_names)}
        self.facade = _facade(
            self.cash, self.rng, self.instance_names, self.random_probability, self.initial_configs
        )
        self._pending: dict[int, Any] = {}

    def ask(self) -> Proposal:
        info = _ask(self.facade)
        proposal = self._proposal(config_of(self.space, info.config), self._index[info.instance])
        self._pending[proposal.batch] = info
        return proposal

    def tell(self, proposal: Proposal, loss: float) -> None:
        _tell(self.facade, self._pending.pop(proposal.batch), loss)

    def incumbent(self) -> Mapping[str, Any] | None:
        incumbent = self.facade.intensifier.get_incumbent()
        if incumbent is None:
            return None
        return config_of(self.space, incumbent)


class SMACBatch(FullEvaluation, _SMACSettings):
    """SMAC-10-Batch (seed §4.4): every configuration on all instances, SMAC told the mean."""

    def _begin(self) -> None:
        super()._begin()
        assert self.cash is not None
        self.facade = _facade(
            self.cash, self.rng, None, self.random_probability, self.initial_configs
        )
        self._info: Any = None

    def propose(self) -> Mapping[str, Any] | None:
        self._info = _ask(self.facade)
        return config_of(self.space, self._info.config)

    def observe(self, config: Mapping[str, Any], loss: float) -> None:
        _tell(self.facade, self._info, loss)
