"""The optimizer conformance checker: :func:`check_optimizer`, in the spirit of scikit-learn's
``check_estimator``.

It drives an :class:`~hpo.optimizers.base.Optimizer` class through short ask/tell loops on two
toy spaces (one plain, one conditional; or, for an optimizer that races over instances, the
CASH space it is given) with a deterministic toy loss, and checks the protocol of
``docs/optimizers.md``: the same seed gives the same proposals, another seed other proposals,
every proposal lies in the space (conditions respected), a failed evaluation (told as loss 1.0)
is accepted, and the capabilities the class declares hold; a class that says its proposals can
be asked ahead (``asks_ahead``, or a :class:`~hpo.optimizers.base.MultiFidelity` rung's
``rung_left``) gives the same proposals asked so as asked one at a time. A violation raises one
:class:`ConformanceError` whose message names the check, the space and what was seen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hpo.optimizers.base import (
    RESOURCE_KINDS,
    EnsembleProvider,
    MultiFidelity,
    Optimizer,
    PredictionsConsumer,
    PriorConsumer,
    Proposal,
    SurrogateOptimizer,
)
from hpo.records import FoldPredictions
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Categorical, Condition, Integer, Real, Space

if TYPE_CHECKING:
    from hpo.cash.space import CashSpace

FAILED_LOSS = 1.0  # what the framework tells for a failed evaluation (docs/optimizers.md)
SEEDS = (11, 12)
N_INSTANCES = 3
AHEAD = 3  # proposals an asks_ahead optimizer is asked beyond each fresh one

TOY_SPACE = Space(
    "toy",
    (
        Real("c", 1e-3, 1e3, log=True),
        Integer("depth", 1, 8),
        Categorical("criterion", ("gini", "entropy")),
    ),
    learner="toy",
)
TOY_CONDITIONAL_SPACE = Space(
    "toy_conditional",
    (
        Categorical("kernel", ("rbf", "poly", "linear")),
        Real("gamma", 1e-4, 1e1, log=True, condition=Condition("kernel", ("rbf", "poly"))),
        Integer("degree", 2, 5, condition=Condition("kernel", ("poly",))),
        Real("c", 0.0, 1.0),
    ),
    learner="toy",
)


class ConformanceError(AssertionError):
    """An optimizer broke the protocol: the message names the check that failed."""


@dataclass(frozen=True)
class ConformanceReport:
    """What :func:`check_optimizer` checked and saw pass: the class, the spaces and the checks,
    in the order they first ran. ``str()`` says it in one line."""

    name: str
    spaces: tuple[str, ...]
    checks: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"{self.name} passed {len(self.checks)} checks on spaces {', '.join(self.spaces)}: "
            + "; ".join(self.checks)
        )


def check_optimizer(
    cls: type[Optimizer],
    budget: int = 8,
    cash_space: CashSpace | None = None,
    **settings: Any,
) -> ConformanceReport:
    """Raise :class:`ConformanceError` unless ``cls`` (built with ``settings``) follows the
    optimizer protocol on the toy spaces (or on ``cash_space``, which an optimizer that
    ``races_instances`` needs), ``budget`` evaluations per loop; else the
    :class:`ConformanceReport` of the checks that passed (``print`` it)."""
    _expect(isinstance(cls, type) and issubclass(cls, Optimizer), "protocol", _not_optimizer(cls))
    _check_declarations(cls)
    if cls.races_instances:
        if cash_space is None:
            raise ValueError(f"{cls.__name__} races over instances: pass cash_space=<CashSpace>")
        spaces = [cash_space.space]
    else:
        spaces = [TOY_SPACE, TOY_CONDITIONAL_SPACE]
    passed: dict[str, None] = {"protocol": None, "declared capabilities": None}
    for space in spaces:
        checker = _Checker(cls, space, budget, cash_space, settings)
        checker.check()
        passed.update(dict.fromkeys(checker.passed))
    return ConformanceReport(cls.__name__, tuple(s.name for s in spaces), tuple(passed))


def plain(value: Any) -> str:
    """``value`` as a reader writes it: NumPy scalars and arrays as plain numbers and lists
    (``0.25``, not ``np.float64(0.25)``), anything else as its ``repr``."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, list | tuple):
        inner = ", ".join(plain(v) for v in value)
        return (
            f"[{inner}]"
            if isinstance(value, list)
            else f"({inner}{',' if len(value) == 1 else ''})"
        )
    return repr(value)


def _not_optimizer(cls: object) -> str:
    return f"{cls!r} is not a subclass of hpo.optimizers.base.Optimizer"


def _expect(condition: bool, check: str, message: str) -> None:
    if not condition:
        raise ConformanceError(f"check {check!r} failed: {message}")


def _check_declarations(cls: type[Optimizer]) -> None:
    name = cls.__name__
    _expect(
        isinstance(cls.races_instances, bool),
        "declared capabilities",
        f"{name}.races_instances is {cls.races_instances!r}; valid: True, False",
    )
    if issubclass(cls, MultiFidelity):
        _expect(
            cls.resource_kind in RESOURCE_KINDS,
            "declared capabilities",
            f"{name}.resource_kind is {cls.resource_kind!r}; valid: {', '.join(RESOURCE_KINDS)}",
        )


def toy_loss(space: Space, config: Mapping[str, Any]) -> float:
    """A deterministic loss in (0, 1) of a configuration: smooth in its unit-cube point."""
    u = space.encode(config)
    return float(0.05 + 0.9 * np.mean((u - 0.3) ** 2))


def _predictions(loss: float, iteration: int) -> tuple[FoldPredictions, ...]:
    """Synthetic validation predictions of one model (20 rows, 2 classes) for a
    :class:`PredictionsConsumer`: the first ``round(20 * loss)`` rows wrong."""
    rows = np.arange(20)
    labels = rows % 2
    wrong = rows < round(20 * loss) + iteration % 2
    predicted = np.where(wrong, 1 - labels, labels)
    return (FoldPredictions(rows, labels, predicted, predicted[:5].copy()),)


class _Checker:
    """The checks of one class on one space."""

    def __init__(
        self,
        cls: type[Optimizer],
        space: Space,
        budget: int,
        cash: CashSpace | None,
        settings: Mapping[str, Any],
    ) -> None:
        self.cls, self.space, self.budget = cls, space, budget
        self.cash, self.settings = cash, dict(settings)
        self.passed: dict[str, None] = {}  # the checks seen to hold, in order

    def fail(self, check: str, message: str) -> ConformanceError:
        return ConformanceError(
            f"check {check!r} failed for {self.cls.__name__} on space {self.space.name!r}: "
            f"{message}"
        )

    def expect(self, condition: bool, check: str, message: str) -> None:
        if not condition:
            raise self.fail(check, message)
        self.passed[check] = None

    def build(self, seed: int) -> Optimizer:
        optimizer = self.cls(self.space, self.budget, np.random.default_rng(seed), **self.settings)
        if self.cash is not None:
            optimizer.start(self.cash, N_INSTANCES)  # type: ignore[attr-defined]
        if isinstance(optimizer, PriorConsumer):
            optimizer.use_priors(PriorSpace(self.space))
        return optimizer

    def check(self) -> None:
        first, optimizer = self.loop(SEEDS[0])
        again, _ = self.loop(SEEDS[0])
        self.expect(
            _same(first, again),
            "same seed, same proposals",
            f"two runs with seed {SEEDS[0]} differ at proposal {_first_difference(first, again)}",
        )
        other, _ = self.loop(SEEDS[1])
        if getattr(self.cls, "uses_rng", True):
            self.expect(
                not _same(first, other),
                "another seed, other proposals",
                f"seeds {SEEDS[0]} and {SEEDS[1]} give the same {len(first)} proposals "
                "(a class whose proposals do not depend on its rng declares uses_rng = False)",
            )
        if getattr(self.cls, "asks_ahead", False) or issubclass(self.cls, MultiFidelity):
            ahead, _ = self.loop(SEEDS[0], ahead=True)
            self.expect(
                _same(first, ahead),
                "asked ahead, same proposals",
                f"asking ahead (asks_ahead, rung_left) changes proposal "
                f"{_first_difference(first, ahead)}",
            )
        self.check_final_capabilities(optimizer, len(first))

    def loop(self, seed: int, ahead: bool = False) -> tuple[list[Proposal], Optimizer]:
        """``budget`` asks and tells; every third evaluation fails (told :data:`FAILED_LOSS`).
        With ``ahead`` each fresh ask is followed by the asks the optimizer says are fixed
        already (:data:`AHEAD` for ``asks_ahead``, ``rung_left`` for a rung), told after."""
        optimizer = self.build(seed)
        proposals: list[Proposal] = []
        pending: list[Proposal] = []
        for iteration in range(1, self.budget + 1):
            try:
                if pending:
                    proposal = pending.pop(0)
                else:
                    proposal = optimizer.ask()
                    more = min(_fixed_ahead(optimizer), self.budget - iteration) if ahead else 0
                    pending = [optimizer.ask() for _ in range(more)]
            except StopIteration:
                break
            self.check_proposal(optimizer, proposal, proposals)
            config = self.config_of(proposal)
            failed = iteration % 3 == 0
            loss = FAILED_LOSS if failed else toy_loss(self.space, config)
            if isinstance(optimizer, PredictionsConsumer):
                optimizer.observe_predictions(proposal, _predictions(loss, iteration))
            try:
                optimizer.tell(proposal, loss)
            except Exception as error:
                what = "a failed evaluation (loss 1.0)" if failed else f"loss {loss:.4g}"
                raise self.fail(
                    "failed evaluations accepted" if failed else "tell accepts losses",
                    f"tell raised {type(error).__name__}: {error} when told {what}",
                ) from error
            self.passed["failed evaluations accepted" if failed else "tell accepts losses"] = None
            if self.cash is None:  # a race over instances keeps its own per-instance record
                self.check_history(optimizer, loss)
            proposals.append(proposal)
            self.check_running_capabilities(optimizer, iteration)
        self.expect(
            bool(proposals), "proposes", "the first ask raised StopIteration (nothing proposed)"
        )
        return proposals, optimizer

    def check_history(self, optimizer: Optimizer, loss: float) -> None:
        """``tell`` keeps the told point and loss in ``X`` and ``y`` (the selection rules read
        them): one point of the space's dimension and its loss per tell. Not for the optimizers
        that race over instances: the run's incumbent is their own (``incumbent()``)."""
        check = "tell keeps the history"
        self.expect(
            len(optimizer.X) == len(optimizer.y) and bool(optimizer.y) and optimizer.y[-1] == loss,
            check,
            f"after telling loss {loss:.4g}: {len(optimizer.X)} points, y ends "
            f"{plain(optimizer.y[-1:])}",
        )
        try:
            point = np.asarray(optimizer.X[-1], dtype=float)
        except (TypeError, ValueError):  # not numbers, or ragged: no point at all
            point = np.full((), np.nan)
        self.expect(
            point.shape == (self.space.dim,) and bool(np.all(np.isfinite(point))),
            check,
            f"the last point kept is {plain(optimizer.X[-1])}, not a finite point of shape "
            f"({self.space.dim},)",
        )

    def config_of(self, proposal: Proposal) -> dict[str, Any]:
        if proposal.config is not None:
            return dict(proposal.config)
        return self.space.decode(np.asarray(proposal.u, dtype=float))

    def check_proposal(
        self, optimizer: Optimizer, proposal: Proposal, earlier: list[Proposal]
    ) -> None:
        check = "proposals lie in the space"
        self.expect(
            isinstance(proposal, Proposal), check, f"ask returned {type(proposal).__name__}"
        )
        if proposal.u is not None:
            u = np.asarray(proposal.u, dtype=float)
            self.expect(
                u.shape == (self.space.dim,),
                check,
                f"point of shape {u.shape}, expected ({self.space.dim},)",
            )
            self.expect(
                bool(np.all(np.isfinite(u)) and np.all((u >= 0) & (u <= 1))),
                check,
                f"point {np.round(u, 4).tolist()} is outside the unit cube [0, 1]^{self.space.dim}",
            )
        else:
            self.check_config(dict(proposal.config or {}))
        previous = earlier[-1].batch if earlier else 1
        self.expect(
            isinstance(proposal.batch, int | np.integer) and proposal.batch >= previous,
            "batches",
            f"batch {plain(proposal.batch)} after batch {previous} (batches are integers >= 1 that "
            "never decrease)",
        )
        if isinstance(optimizer, MultiFidelity) and proposal.resource is not None:
            ok = proposal.resource > 0
            if optimizer.resource_kind == "train_fraction":
                ok = ok and proposal.resource <= 1
            self.expect(
                ok,
                "declared capabilities",
                f"resource {proposal.resource} is not a valid {optimizer.resource_kind} level",
            )
        elif not isinstance(optimizer, MultiFidelity):
            self.expect(
                proposal.resource is None,
                "declared capabilities",
                f"proposal carries resource {proposal.resource} but the class is not MultiFidelity",
            )
        if proposal.instance is not None:
            self.expect(
                self.cash is not None and 0 <= proposal.instance < N_INSTANCES,
                "proposals lie in the space",
                f"instance {proposal.instance} outside 0..{N_INSTANCES - 1}",
            )

    def check_config(self, config: dict[str, Any]) -> None:
        check = "proposals lie in the space"
        unknown = sorted(set(config) - set(self.space.names))
        self.expect(not unknown, check, f"unknown parameters {unknown}")
        for p in self.space.parameters:
            if not self.space.is_active(p, config):
                self.expect(
                    p.name not in config,
                    check,
                    f"inactive parameter {p.name!r} = {plain(config.get(p.name))} given (its "
                    f"condition: {p.condition})",
                )
                continue
            self.expect(p.name in config, check, f"active parameter {p.name!r} missing")
            self.expect(
                _valid_value(p, config[p.name]),
                check,
                f"{p.name} = {plain(config[p.name])} is not a value of {p}",
            )

    def check_running_capabilities(self, optimizer: Optimizer, told: int) -> None:
        if isinstance(optimizer, EnsembleProvider):
            members = optimizer.current_ensemble()
            self.expect(
                len(set(members)) == len(members) and all(1 <= m <= told for m in members),
                "declared capabilities",
                f"current_ensemble() = {members} after {told} evaluations (1-based iterations "
                "told so far, no duplicates)",
            )

    def check_final_capabilities(self, optimizer: Optimizer, told: int) -> None:
        if isinstance(optimizer, SurrogateOptimizer):
            for domain in ("space", "observed"):
                u = np.asarray(optimizer.posterior_mean_argmin(domain), dtype=float)
                self.expect(
                    u.shape == (self.space.dim,) and bool(np.all((u >= 0) & (u <= 1))),
                    "declared capabilities",
                    f"posterior_mean_argmin({domain!r}) = {u.tolist()} is not a unit-cube point",
                )
        incumbent: Callable[[], Any] | None = getattr(optimizer, "incumbent", None)
        if self.cash is not None and incumbent is not None:
            config = incumbent()
            if config is not None:
                self.check_config(dict(config))


def _valid_value(p: Real | Integer | Categorical, value: Any) -> bool:
    if isinstance(p, Categorical):
        return str(value) in p.choices
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return False
    if isinstance(p, Integer) and float(value) != int(value):
        return False
    return math.isfinite(float(value)) and p.low - 1e-9 <= float(value) <= p.high * (1 + 1e-9)


def _fixed_ahead(optimizer: Optimizer) -> int:
    """How many more proposals ``optimizer`` says can be asked before the last is told."""
    if isinstance(optimizer, MultiFidelity):
        return optimizer.rung_left()
    return AHEAD if optimizer.asks_ahead else 0


def _key(proposal: Proposal) -> tuple:
    u = None if proposal.u is None else tuple(np.round(np.asarray(proposal.u, float), 12))
    config = None if proposal.config is None else tuple(sorted(dict(proposal.config).items()))
    return (u, config, proposal.batch, proposal.resource, proposal.bracket, proposal.instance)


def _same(a: list[Proposal], b: list[Proposal]) -> bool:
    return [_key(p) for p in a] == [_key(p) for p in b]


def _first_difference(a: list[Proposal], b: list[Proposal]) -> str:
    for i, (p, q) in enumerate(zip(a, b, strict=False), start=1):
        if _key(p) != _key(q):
            return f"{i}: {plain(_key(p))} vs {plain(_key(q))}"
    return f"{min(len(a), len(b)) + 1} (one run proposed {len(a)}, the other {len(b)})"


__all__ = [
    "FAILED_LOSS",
    "TOY_CONDITIONAL_SPACE",
    "TOY_SPACE",
    "ConformanceError",
    "ConformanceReport",
    "check_optimizer",
    "plain",
]
