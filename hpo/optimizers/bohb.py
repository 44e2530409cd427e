"""BOHB-style model-based Hyperband (Falkner, Klein and Hutter 2018, "BOHB: Robust and
Efficient Hyperparameter Optimization at Scale", ICML) through SMAC3's multi-fidelity facade,
driven ask/tell (beyond Jůzlová 2018; docs/surrogates-hyperband.md, "BOHB").

SMAC 2.x's ``MultiFidelityFacade`` is SMAC's BOHB-like method: its ``Hyperband`` intensifier
runs Hyperband's brackets, and new configurations come from a model of the results on the
largest budget that has enough of them (``ConfigSelector(min_trials=...)``), interleaved with
random ones. It differs from BOHB in its model: SMAC's random forest with expected improvement
on log-scaled costs where BOHB has a TPE-like pair of kernel density estimates
(docs/surrogates-hyperband.md).

The brackets are Hyperband's (:class:`~hpo.optimizers.hyperband.Fidelity`: the same ``R``,
``η``, ``unit``, ``resource``, ``rounding`` and ``iterations`` as ``optimizer=hyperband``, the
same checks): SMAC's budget is the resource in Hyperband's units, ``max_budget = R`` and
``min_budget = R·η^(−s_max)``, so that SMAC's stages are the plan's rungs. Every proposal
carries the plan's bracket ``s`` and ``Fidelity.amount(r)`` as its resource (epochs, or the
share ``r/R`` of the training rows), exactly as Hyperband's; ``ask`` checks that SMAC's budget
is the plan's ``r`` for that evaluation (a ``RuntimeError`` otherwise), and raises
``StopIteration`` after the last bracket of the plan (or at ``budget``).

BOHB's own values where SMAC's facade has another default (Falkner et al. 2018, §4; the
defaults of their HpBandSter): the model is built on a budget once it has ``d + 1`` results
(``min_points``, SMAC's default 1), and a third of the new configurations are random
(``random_probability`` 1/3, SMAC's 0.2). SMAC's initial design (random, at most a quarter
of the plan's evaluations) and every other component keep SMAC's defaults; the seeding and the
hash-seed fix are :class:`~hpo.optimizers.smac.SMACOptimizer`'s.

A rung's configurations are fixed before any of them is told (:meth:`BOHB.rung_left`), read
from SMAC 2.4's source: ``SuccessiveHalving.__iter__`` (``smac/intensifier/successive_halving.py``)
draws a bracket's first stage whole, ``n`` calls of ``next(self.config_generator)`` in one loop
before it yields any of that stage's trials, and only when no trial is left to yield; a
promoted stage is ``_get_best_configs`` of the stage before, which raises ``NotEvaluatedError``
until every trial of that stage is told. The configuration selector
(``ConfigSelector.__iter__``, ``smac/main/config_selector.py``), where the model is retrained
and every random configuration drawn, runs only inside that loop; between a stage's asks a
tell changes only the run history and the incumbents (``update_incumbents``, which reads no
running trial: ``RunHistory.get_instance_seed_budget_keys`` leaves them out). So once every
earlier trial is told, asking the rest of a rung before telling any of it gives the same
trials as asking one at a time (``tests/test_bohb.py``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from hpo.optimizers.base import MultiFidelity, Proposal
from hpo.optimizers.hyperband import Fidelity, PlannedByFidelity
from hpo.optimizers.smac import SMACOptimizer
from hpo.space.search_space import Space


class BOHB(PlannedByFidelity, SMACOptimizer, MultiFidelity):
    """SMAC3's multi-fidelity facade (BOHB-like) on Hyperband's plan (module docstring).

    Settings: Hyperband's (``max_resource``, ``eta``, ``unit``, ``resource``, ``rounding``,
    ``iterations``), SMAC's ``impute`` (as ``optimizer=smac``), ``min_points`` (results a budget
    needs before the model is fitted on it; None = d + 1, BOHB's) and ``random_probability``
    (the share of random configurations; BOHB's 1/3).
    """

    family = "bohb"  # the name its plan's errors give (PlannedByFidelity)

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        max_resource: float = 50.0,
        eta: int = 4,
        unit: float = 20.0,
        resource: str = "epochs",
        rounding: str = "round",
        iterations: int = 1,
        impute: str = "default",
        min_points: int | None = None,
        random_probability: float = 1 / 3,
    ) -> None:
        self.fidelity = Fidelity("bohb", max_resource, eta, unit, resource, rounding, iterations)
        if min_points is not None and min_points < 1:
            raise ValueError(f"bohb min_points must be >= 1 or null (d + 1), got {min_points}")
        if not 0.0 <= random_probability <= 1.0:
            raise ValueError(f"bohb random_probability must be in [0, 1], got {random_probability}")
        self.resource_kind = self.fidelity.resource
        self.min_points = space.dim + 1 if min_points is None else int(min_points)
        self.random_probability = float(random_probability)
        self._schedule = self.fidelity.schedule()[:budget]
        super().__init__(space, budget, rng, impute=impute)

    def _facade(self, output_directory: Path) -> Any:
        from smac import MultiFidelityFacade, Scenario
        from smac.main.config_selector import ConfigSelector

        fidelity = self.fidelity
        s_max = len(fidelity.plan) - 1
        scenario = Scenario(
            self.configspace,
            output_directory=output_directory,
            deterministic=True,
            n_trials=len(self._schedule),
            seed=self.seed,
            # SMAC takes s_max = floor(log(max/min) / log(eta)) in floating point: a hair below
            # R·η^(-s_max) keeps log's rounding from dropping a bracket (the budgets are
            # R·η^(-s), computed from max_budget alone)
            min_budget=fidelity.max_resource / fidelity.eta**s_max * (1 - 1e-9),
            max_budget=fidelity.max_resource,
        )
        facade = MultiFidelityFacade(
            scenario,
            target_function=None,
            intensifier=MultiFidelityFacade.get_intensifier(scenario, eta=fidelity.eta),
            random_design=MultiFidelityFacade.get_random_design(
                scenario, probability=self.random_probability
            ),
            config_selector=ConfigSelector(scenario, min_trials=self.min_points),
            logging_level=False,
            overwrite=True,
        )
        # SMAC's random initial design samples a copy of the configuration space, random state
        # included, and its config selector, with no result to fit yet, samples the space itself:
        # the same stream, so Hyperband's first rung (filled before any result) repeated
        # initial configurations and lost them (14 distinct of 16). The design is drawn by now;
        # a stream of its own for the rest, from the same seed.
        self.configspace.seed(int(np.random.default_rng(self.seed).integers(0, 2**31 - 1)))
        return facade

    def rung_left(self) -> int:
        """The evaluations of the plan's current rung still to ask: SMAC's stage, whose
        configurations are all known by its first ask (module docstring)."""
        return self.fidelity.rung_left(self._asked, len(self._schedule))

    def ask(self) -> Proposal:
        if self._asked >= len(self._schedule):
            raise StopIteration(f"bohb: the plan's {len(self._schedule)} evaluations are done")
        s, r = self._schedule[self._asked]
        info, config = self._next_trial()
        if info.budget is None or not math.isclose(info.budget, r, rel_tol=1e-9):
            raise RuntimeError(
                f"bohb: SMAC asked for budget {info.budget} at evaluation {self._asked} where "
                f"Hyperband's plan has r={r:g} (bracket s={s})"
            )
        return Proposal(
            u=None,
            batch=self._asked,
            config=config,
            resource=self.fidelity.amount(r),
            bracket=s,
        )
