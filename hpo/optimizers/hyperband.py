"""Hyperband (Li et al. 2017) as an ask/tell optimizer whose proposals carry a resource level
(seed 002, Jůzlová 2018, §1.3.3, Algorithm 2 in its corrected standard form; §2.1.2.1).

For a maximum resource ``R`` (in units) and an elimination factor ``η``::

    s_max = floor(log_η R);  B = (s_max + 1)·R
    for s = s_max, …, 0:                              # brackets, most exploratory first
        n = ceil(B/R · η^s / (s + 1));  r = R·η^(−s)
        T = n configurations drawn from the prior
        for i = 0..s:                                 # successive halving
            n_i = floor(n·η^(−i));  r_i = r·η^i
            evaluate every t in T with resource r_i  # resumed where the learner can
            T = the floor(n_i/η) best of T

The seed's settings: MNIST R = 50 units of 20 epochs, η = 4 (brackets of 16, 6 and 3
configurations); MRBI R = 100, η = 3 (81, 34, 15, 8, 5). ``brackets`` gives the plan;
``tests/test_hyperband.py`` checks it against SMAC 2's ``hyperband_utils`` (an independent
implementation).

A proposal's resource is ``r_i · unit`` epochs, rounded by ``rounding`` (the seed's 3.125 units
are 62.5 epochs) [decision: ``round``, half up], or with ``resource="train_fraction"`` the share
``r_i / R`` of the training rows. Configurations are drawn uniformly in the unit cube, as random
search draws them (the seed: "generated randomly from a given prior distribution"). Losses that
tie keep the order of evaluation; a NaN loss ranks last. After the last bracket (``iterations``
times the whole plan, default once as the seed ran it) ``ask`` raises ``StopIteration``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo.optimizers.base import RESOURCE_KINDS, MultiFidelity, Optimizer, Proposal
from hpo.space.search_space import Space

ROUNDINGS = ("round", "floor", "ceil")


@dataclass(frozen=True)
class Rung:
    """One successive-halving stage: ``n`` configurations trained with ``r`` resource units."""

    n: int
    r: float


def check_plan(max_resource: float, eta: float, method: str = "hyperband") -> int:
    """``η`` as an integer ≥ 2 and ``R ≥ η``; one ``ValueError`` line (naming ``method``)
    otherwise."""
    if not float(eta).is_integer() or eta < 2:
        raise ValueError(f"{method} eta must be an integer >= 2, got {eta}")
    if not max_resource >= eta:
        raise ValueError(
            f"{method} max_resource R={max_resource:g} must be >= eta={int(eta)} "
            f"(R is the largest resource, in units; eta the elimination factor)"
        )
    return int(eta)


def brackets(max_resource: float, eta: float) -> list[list[Rung]]:
    """The brackets s = s_max … 0, each a list of rungs (module docstring)."""
    eta = check_plan(max_resource, eta)
    s_max = 0
    while eta ** (s_max + 1) <= max_resource * (1 + 1e-12):  # floor(log_η R), without log's error
        s_max += 1
    plan = []
    for s in range(s_max, -1, -1):
        n = -(-((s_max + 1) * eta**s) // (s + 1))  # ceil(B/R · η^s / (s+1)), exactly
        r = max_resource / eta**s
        plan.append([Rung(n // eta**i, r * eta**i) for i in range(s + 1)])
    return plan


class Fidelity:
    """The resource settings of a Hyperband-style method (``hyperband``, ``bohb``), checked once:
    ``max_resource`` R and ``eta`` η; ``unit``: epochs per resource unit; ``resource``:
    ``epochs`` or ``train_fraction``; ``rounding``: how a fractional number of epochs becomes
    whole; ``iterations``: how many times the whole plan runs. Bad settings are one
    ``ValueError`` line naming ``method``."""

    def __init__(
        self,
        method: str,
        max_resource: float,
        eta: float,
        unit: float,
        resource: str,
        rounding: str,
        iterations: int,
    ) -> None:
        if resource not in RESOURCE_KINDS:
            raise ValueError(
                f"unknown {method} resource {resource!r}; valid: {', '.join(RESOURCE_KINDS)}"
            )
        if rounding not in ROUNDINGS:
            raise ValueError(
                f"unknown {method} rounding {rounding!r}; valid: {', '.join(ROUNDINGS)}"
            )
        if not unit > 0:
            raise ValueError(f"{method} unit must be > 0, got {unit}")
        if iterations < 1:
            raise ValueError(f"{method} iterations must be >= 1, got {iterations}")
        self.eta = check_plan(float(max_resource), eta, method)
        self.max_resource = float(max_resource)
        self.unit = float(unit)
        self.resource = resource
        self.rounding = rounding
        self.iterations = int(iterations)
        self.plan = brackets(self.max_resource, self.eta)

    def amount(self, r: float) -> float:
        """The resource of a proposal for ``r`` units: whole epochs, or a training share."""
        if self.resource == "train_fraction":
            return min(1.0, r / self.max_resource)
        epochs = r * self.unit
        if self.rounding == "floor":
            whole = math.floor(epochs + 1e-9)
        elif self.rounding == "ceil":
            whole = math.ceil(epochs - 1e-9)
        else:
            whole = math.floor(epochs + 0.5)
        return float(max(1, whole))

    def schedule(self) -> list[tuple[int, float]]:
        """(bracket s, units r) of every evaluation of the whole plan, in Hyperband's order."""
        return [(s, r) for s, r, n in self.rungs() for _ in range(n)]

    def rungs(self) -> list[tuple[int, float, int]]:
        """(bracket s, units r, configurations n) of every rung of the whole plan, in order."""
        return [
            (len(bracket) - 1, rung.r, rung.n)
            for _ in range(self.iterations)
            for bracket in self.plan
            for rung in bracket
        ]

    def rung_left(self, asked: int, planned: int) -> int:
        """How many evaluations of the rung of evaluation ``asked`` (1-based; 0 before the
        first) are still to come, of the plan's first ``planned`` evaluations."""
        end = 0
        for _, _, n in self.rungs():
            end += n
            if asked <= end:
                return 0 if asked == 0 else max(0, min(end, planned) - asked)
        return 0


class PlannedByFidelity:
    """Mixin of the Hyperband-style classes: their plan, and so their number of evaluations,
    follows from their settings alone (``FIDELITY_SETTINGS`` of the constructor, its defaults
    where a method file leaves one out)."""

    family: str = "hyperband"  # the name the settings' errors give

    @classmethod
    def fidelity_plan(cls, settings: Mapping[str, Any]) -> Fidelity:
        """The :class:`Fidelity` a run with ``settings`` follows (checked, one line)."""
        defaults = {
            name: p.default
            for name, p in inspect.signature(cls.__init__).parameters.items()  # type: ignore[misc]
            if p.default is not inspect.Parameter.empty
        }
        merged = {**defaults, **settings}
        return Fidelity(cls.family, **{key: merged[key] for key in FIDELITY_SETTINGS})

    @classmethod
    def planned_evaluations(cls, settings: Mapping[str, Any], budget: int = 0, dim: int = 0) -> int:
        """Every rung's evaluations over every bracket, ``iterations`` times: the plan's size
        (R = 16, η = 4: 16 + 4 + 1, 6 + 1 and 3, i.e. 31), whatever the budget and space."""
        plan = cls.fidelity_plan(settings)
        return plan.iterations * sum(rung.n for bracket in plan.plan for rung in bracket)


# The constructor arguments of a Hyperband-style method that fix its plan (:class:`Fidelity`).
FIDELITY_SETTINGS = ("max_resource", "eta", "unit", "resource", "rounding", "iterations")


class Hyperband(PlannedByFidelity, Optimizer, MultiFidelity):
    """Hyperband over the unit cube of ``space`` (settings: module docstring).

    ``max_resource`` R and ``eta`` η as the seed's §2.1.2.1; ``unit``: epochs per resource unit
    (20 in the seed); ``resource``: ``epochs`` or ``train_fraction``; ``rounding``: how a
    fractional number of epochs becomes whole; ``iterations``: how many times the whole plan runs.
    """

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
    ) -> None:
        fidelity = Fidelity("hyperband", max_resource, eta, unit, resource, rounding, iterations)
        super().__init__(space, budget, rng)
        self.fidelity = fidelity
        self.plan = fidelity.plan
        self.max_resource = fidelity.max_resource
        self.eta = fidelity.eta
        self.unit = fidelity.unit
        self.resource_kind = fidelity.resource
        self.rounding = fidelity.rounding
        self._stages = [
            (len(bracket) - 1, i, rung)
            for _ in range(iterations)
            for bracket in self.plan
            for i, rung in enumerate(bracket)
        ]
        self._stage = -1
        self._points: list[np.ndarray] = []  # the current rung's configurations
        self._asked: list[Proposal] = []
        self._losses: list[float] = []
        self._evaluations = 0

    def amount(self, r: float) -> float:
        """The resource of a proposal for ``r`` units (:meth:`Fidelity.amount`)."""
        return self.fidelity.amount(r)

    def _next_stage(self) -> None:
        """Start the next rung: fresh configurations at a bracket's first rung, else the best
        ``n`` of the rung just finished."""
        if len(self._losses) < len(self._asked):
            raise RuntimeError("hyperband: tell every proposal of a rung before asking for more")
        self._stage += 1
        if self._stage >= len(self._stages):
            raise StopIteration
        _, i, rung = self._stages[self._stage]
        if i == 0:
            self._points = [self.rng.uniform(size=self.space.dim) for _ in range(rung.n)]
        else:
            losses = np.nan_to_num(np.asarray(self._losses, dtype=float), nan=np.inf)
            order = np.argsort(losses, kind="stable")[: rung.n]
            self._points = [self._points[j] for j in order]
        self._asked, self._losses = [], []

    def rung_left(self) -> int:
        """How many proposals of the current rung ``ask`` has still to give: a rung's
        configurations are drawn (or promoted) at once, so all of them can be asked before any
        is told (0 before the first ask and after a rung's last)."""
        return 0 if self._stage < 0 else len(self._points) - len(self._asked)

    def ask(self) -> Proposal:
        if self._stage < 0 or len(self._asked) == len(self._points):
            self._next_stage()
        s, _, rung = self._stages[self._stage]
        self._evaluations += 1
        proposal = Proposal(
            u=self._points[len(self._asked)].copy(),
            batch=self._evaluations,
            resource=self.amount(rung.r),
            bracket=s,
        )
        self._asked.append(proposal)
        return proposal

    def tell(self, proposal: Proposal, loss: float) -> None:
        super().tell(proposal, loss)
        if len(self._losses) >= len(self._asked) or self._asked[len(self._losses)] is not proposal:
            raise ValueError("hyperband: tell the proposals of a rung in the order they were asked")
        self._losses.append(float(loss))
