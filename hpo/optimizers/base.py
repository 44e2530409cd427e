"""The ask/tell protocol every optimizer implements, and the optional capabilities.

An optimizer sees only points of the unit cube ``[0, 1]^d`` (or configurations, for optimizers
that work on them, such as SMAC) and the losses told back to it: never the data, the splits, the
selection-split scores or the test error. Reshuffling, k-fold and selection splits live in
:mod:`hpo.evaluation.protocol`, so every optimizer gets them for free.

Capabilities are explicit base classes the runner tests for, never branches on family names:

* :class:`SurrogateOptimizer` — has a surrogate whose posterior mean can be minimised (read by
  the ``-pm`` selection rules);
* :class:`PredictionsConsumer` — reads the validation predictions of every evaluated model
  (ensemble optimization re-scores the pool against the current ensemble, thesis Alg. 4.1);
* :class:`EnsembleProvider` — keeps an ensemble of evaluated models as it goes (EO's slots,
  thesis Alg. 4.1), read by the ``eo`` selection rule;
* :class:`MultiFidelity` — proposes partial evaluations: each :class:`Proposal` carries a
  resource level (epochs, or a share of the training rows) that the evaluator trains up to
  (Hyperband, seed 002 §1.3.3), in rungs whose configurations are fixed before any of them is
  told (:meth:`MultiFidelity.rung_left`);
* ``asks_ahead`` — an optimizer whose proposals never depend on the losses told (random
  search): the runner may ask several before telling any (``batch_networks``);
* :class:`PriorConsumer` — samples from the space's per-context priors (seed 003, §3.1): the
  runner hands it the :class:`~hpo.space.priors.PriorSpace` the space file declares;
* ``reports_at_batch_ends`` — a generational optimizer (CMA-ES) whose incumbents exist only at the
  end of each generation (thesis §3.3; [decide], docs/deviations.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hpo.space.search_space import Space

if TYPE_CHECKING:
    from hpo.records import FoldPredictions
    from hpo.space.priors import PriorSpace


@dataclass(frozen=True)
class Proposal:
    """One point to evaluate.

    ``u``: shape ``(d,)``, inside the unit cube; or ``config``, a configuration, for optimizers
    that propose configurations (the runner then encodes it for the trace). ``batch``: the group
    of evaluations that share one training/validation split when the protocol reshuffles (the
    iteration for sequential optimizers, the generation for CMA-ES; thesis §3.2.1).
    ``resource``: train up to this level, in the unit of the optimizer's ``resource_kind``
    (:class:`MultiFidelity`); None is a full evaluation. ``bracket``: Hyperband's bracket s.
    ``instance``: the one instance (a fold, a subsample) to evaluate on, for an optimizer that
    races configurations instance by instance (:class:`hpo.optimizers.instances.CashOptimizer`;
    SMAC3's
    ``TrialInfo`` carries the same: configuration, instance, budget); None: every fold.
    """

    u: np.ndarray | None
    batch: int
    config: Mapping[str, Any] | None = None
    resource: float | None = None
    bracket: int | None = None
    instance: int | None = None

    def __post_init__(self) -> None:
        if (self.u is None) == (self.config is None):
            raise ValueError("a proposal carries exactly one of a unit-cube point or a config")


class Optimizer(ABC):
    """Ask/tell optimizer over the unit cube of ``space``, for at most ``budget`` evaluations.

    Subclasses store their settings in ``__init__`` and draw every random number from ``rng``
    (a ``numpy.random.Generator`` derived by :mod:`hpo.seeding`).
    """

    reports_at_batch_ends: bool = False  # incumbents only at the end of each batch (generation)
    # True for an optimizer that races configurations over instances (seed 004's
    # hpo.optimizers.instances.CashOptimizer): each proposal names the one instance it is
    # evaluated on (experiments.run.instances.InstanceTrials); else every proposal is scored on its
    # batch's folds (experiments.run.runner.FoldTrials). One trial loop runs both.
    races_instances: bool = False
    # False for a method whose proposals do not depend on its rng (Ex-Def: every learner at its
    # defaults); the conformance checker (hpo.testing) then expects the same proposals from
    # every seed instead of other ones
    uses_rng: bool = True
    # libraries whose versions a run records in its provenance (an adapter's library)
    provenance_packages: tuple[str, ...] = ()
    # True for a method whose proposals never depend on the losses told (random search): asking
    # several before telling any gives the same proposals (the runner's batch_networks)
    asks_ahead: bool = False

    @classmethod
    def provenance_libraries(cls, settings: Mapping[str, Any]) -> tuple[str, ...]:
        """The libraries whose versions a run with ``settings`` records (``provenance_packages``;
        an adapter whose library depends on its settings says which)."""
        return cls.provenance_packages

    @classmethod
    def planned_evaluations(cls, settings: Mapping[str, Any], budget: int, dim: int) -> int | None:
        """How many evaluations a run with ``settings``, ``budget`` and a space of ``dim``
        dimensions makes, for a class whose plan fixes it below the budget (Hyperband's
        brackets, a grid's size); None for one that runs until the budget ends (a run's progress
        line then counts to the budget)."""
        return None

    @classmethod
    def plan_note(cls, settings: Mapping[str, Any], budget: int, dim: int) -> str | None:
        """Why a finished run made :meth:`planned_evaluations` evaluations, not its budget, in
        words for the run's summary (None: nothing to say)."""
        return None

    def __init__(self, space: Space, budget: int, rng: np.random.Generator) -> None:
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.space = space
        self.budget = budget
        self.rng = rng
        self.X: list[np.ndarray] = []
        self.y: list[float] = []

    @abstractmethod
    def ask(self) -> Proposal:
        """The next point to evaluate."""

    def tell(self, proposal: Proposal, loss: float) -> None:
        """Record the validation loss of ``proposal`` (what the optimizer is allowed to see)."""
        self.X.append(np.asarray(proposal.u, dtype=float))
        self.y.append(float(loss))


class SurrogateOptimizer(Optimizer):
    """An optimizer with a surrogate model whose posterior mean can be minimised (``-pm`` rules)."""

    @abstractmethod
    def posterior_mean_argmin(self, domain: str = "space") -> np.ndarray:
        """The unit-cube minimiser of the integrated posterior mean given everything told so far.

        ``domain="space"`` searches the whole cube; ``"observed"`` only the evaluated points.
        """


class PredictionsConsumer(ABC):
    """Capability: the optimizer reads every evaluated model's validation predictions.

    The runner calls :meth:`observe_predictions` before ``tell`` for each evaluation, with one
    :class:`~hpo.records.FoldPredictions` per fold (validation rows, their labels, predicted
    labels); the run keeps predictions for such optimizers whatever its ``predictions`` setting.
    """

    @abstractmethod
    def observe_predictions(self, proposal: Proposal, folds: tuple[FoldPredictions, ...]) -> None:
        """Record the validation predictions of the model evaluated at ``proposal``."""


class EnsembleProvider(ABC):
    """Capability: the optimizer maintains an ensemble of the models it evaluated (thesis
    Alg. 4.1), which the ``eo`` selection rule reports after every iteration."""

    @abstractmethod
    def current_ensemble(self) -> tuple[int, ...]:
        """The members of the current ensemble as 1-based trace iterations (no duplicates)."""


RESOURCE_KINDS = ("epochs", "train_fraction")


class MultiFidelity:
    """Capability: the optimizer's proposals carry a resource level (``Proposal.resource``), in
    units of ``resource_kind``: ``epochs`` (a learner that can continue training resumes from
    its checkpoint, seed 002's network) or ``train_fraction`` (the share of the training rows a
    fit uses, in (0, 1]; any learner). The runner refuses, before any work, a learner of the
    space that cannot serve the kind (:func:`hpo.learners.learner_resources`).

    A method whose proposals come in rungs (Hyperband's stages), every configuration of a rung
    fixed before any of them is told (drawn at once, or promoted from the previous rung,
    complete by then), says so through :meth:`rung_left`: the rest of a rung can then be asked
    before its first is told and gives the same proposals (the runner's ``batch_networks``)."""

    resource_kind: str = "epochs"

    @classmethod
    def fidelity_plan(cls, settings: Mapping[str, Any]) -> Any:
        """The plan of resources a run with ``settings`` follows, when the settings alone fix
        it (Hyperband's brackets: :class:`hpo.optimizers.hyperband.Fidelity`), for sizing a
        sweep before it runs; None when they do not."""
        return None

    def rung_left(self) -> int:
        """How many proposals of the current rung ``ask`` has still to give, each fixed already
        whatever is told meanwhile (0 before the first ask and after a rung's last). This
        default, 0, asks nothing ahead: for a method that does not say where its rungs end."""
        return 0


class PriorConsumer(ABC):
    """Capability: the optimizer draws from the per-context priors of a space file (seed 003,
    §3.1); the runner calls :meth:`use_priors` once, before the first ``ask``."""

    @abstractmethod
    def use_priors(self, prior_space: PriorSpace) -> None:
        """Sample from ``prior_space`` (whose ``space`` is the optimizer's space)."""
