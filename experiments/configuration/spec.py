"""The run description: a :class:`RunSpec` made of parts, each of which validates itself once,
contributes its own share of the run's identity and names what it is.

* :class:`Task` — what is learned and how it is scored: the dataset (by its content when it is a
  user's file), the search space (parsed once, here), the protocol, the objective, the fit guard.
* :class:`Method` — what searches and what reports: the optimizer (a family or an outside class)
  and its settings, the final-selection rules by reported label, the rules' settings and the
  post-run stages.
* :class:`Budget` — how much: evaluations, seconds on a clock, per-evaluation limits.
* :class:`Execution` — how it is run where that changes results (networks trained as one batched
  model); what never changes results (workers, the journal) is the sweep's, not the run's.
* :class:`Outputs` — what is kept (curves, predictions, probabilities) and the sweep the run is
  filed under.

A run's identity (hashed into ``config_hash``, which names its results file) is the union of its
parts' identities, the seed and repetition, and the outside code it names
(:mod:`experiments.configuration.outside_code`). Each part computes its share from its fields
(:meth:`Part.identity`): a field enters under its own name, or the key its
:func:`known_as` metadata gives (the name results were first written under), and is left out
only where its metadata says so — ``neutral`` (never part of the identity: the sweep's name) or
``omitted_at`` (a setting added after results were first published, left out while it holds the
value that reproduces the earlier behaviour, so those results keep their file names). No key is
kept by hand elsewhere: a new field is part of the identity unless its declaration says why not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from experiments.configuration.outside_code import outside_code
from experiments.configuration.spaces import is_cash, parsed, space_config
from hpo.data.catalog import (
    dataset_fingerprint,
    is_data_file,
    source_code,
    unknown_choice_message,
)
from hpo.ensembles import TIE_RULES
from hpo.evaluation.clock import TIME_BUDGET_KINDS
from hpo.evaluation.isolation import EvaluationLimits
from hpo.evaluation.objective import ZERO_ONE, make_objective
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard, check_learner_parameters, learner_parameters
from hpo.rules.registry import RULE_BUILDERS
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Space
from hpo.stages import check_stages

# batch_size's default: how many random-search proposals are asked ahead and trained together
# (16 networks of one width: the CPU's best measured ratio, docs/surrogates-hyperband.md)
BATCH_NETWORKS_SIZE = 16
BATCH_NETWORKS = ("off", "on", "auto")
# The post_hoc rule's settings (conf/config.yaml ``post_hoc``; hpo.rules.ensemble.PostHocRule).
POST_HOC_DEFAULTS = {"loss": "zero_one", "n_init": 3, "size": 100, "tie_loss": "sqm"}
# Protocol settings added after results were first published, with the value that reproduces the
# earlier behaviour: left out of a run's identity while they hold it.
PROTOCOL_FIELDS_ADDED_LATER = {"standardize": False}
_UNSET = object()


def known_as(
    key: str | None = None, *, omitted_at: Any = _UNSET, neutral: bool = False
) -> dict[str, Any]:
    """A part field's identity metadata: the identity ``key`` it enters under (its own name when
    None), the value at which it is ``omitted_at`` (added after results were first written,
    left out while it reproduces them), or ``neutral`` (never part of the identity)."""
    meta: dict[str, Any] = {"neutral": neutral}
    if key is not None:
        meta["key"] = key
    if omitted_at is not _UNSET:
        meta["omitted_at"] = omitted_at
    return {"identity": meta}


def identity_key(f: dataclasses.Field) -> str:
    """The name part field ``f`` is known by: in the identity and as a setting (``of``)."""
    return f.metadata.get("identity", {}).get("key", f.name)


def plain(value: Any) -> Any:
    """A field's value as the identity holds it: dataclasses and mappings as dicts, tuples as
    lists (what JSON gives back, so a hash never depends on a container's type)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class Part:
    """One part of a run's description (a frozen dataclass): its :meth:`identity` is computed
    from its fields' :func:`known_as` metadata, and :meth:`encode` may give a field's value a
    part's own form (a mapping sorted, a file by its content)."""

    def identity(self) -> dict[str, Any]:
        """{identity key: plain value} of every field that enters the run's identity."""
        found: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            meta = f.metadata.get("identity", {})
            value = getattr(self, f.name)
            if meta.get("neutral") or ("omitted_at" in meta and value == meta["omitted_at"]):
                continue
            found.update(self.encode(identity_key(f), value))
        return found

    def encode(self, key: str, value: Any) -> dict[str, Any]:
        """The identity entries of one field (default: ``{key: plain(value)}``)."""
        return {key: plain(value)}

    @classmethod
    def identity_keys(cls) -> set[str]:
        """The keys this part's fields may enter the identity under."""
        return {identity_key(f) for f in fields(cls)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class Task(Part):
    """What is learned and how a configuration is scored. ``space`` is the search space's
    declaration (``conf/space/<name>.yaml``, which also names the learner or the parameter
    that chooses it), parsed once into :attr:`search_space` (and :attr:`prior_space`).
    ``objective`` is ``{"name": <hpo.evaluation.objective.OBJECTIVES>, **settings}``."""

    dataset: str
    space: Mapping[str, Any] = field(default_factory=lambda: space_config("svm_rbf"))
    protocol: ProtocolSettings = field(default_factory=ProtocolSettings)
    protocol_name: str = "holdout"
    objective: Mapping[str, Any] = field(default_factory=lambda: dict(ZERO_ONE))
    fit_guard: FitGuard = field(default_factory=FitGuard)

    def __post_init__(self) -> None:
        space = self.search_space  # a malformed space is refused here, before any work
        names = dict.fromkeys(n for n in space.names if n != space.learner_parameter)
        for learner in space.learners:  # an estimator class that lacks a space's parameter
            check_learner_parameters(learner, learner_parameters(learner, names))
        make_objective(self.objective)  # bad weights: one line, before any work

    @property
    def dataset_identity(self) -> str:
        """The dataset as the identity names it: a user's data file by its content (one file
        under two paths is one dataset), any other by its name."""
        if is_data_file(self.dataset):
            return str(dataset_fingerprint(self.dataset))
        return self.dataset

    @property
    def space_name(self) -> str:
        return str(self.space["name"])

    @property
    def cash(self) -> bool:
        """Whether the space is seed 004's CASH space
        (:func:`experiments.configuration.spaces.cash_space`)."""
        return is_cash(self.space)

    @property
    def prior_space(self) -> PriorSpace:
        """The declaration's space with its priors and virtual parameters (:func:`parsed`)."""
        parsed_space = parsed(self.space)
        if not isinstance(parsed_space, PriorSpace):
            raise ValueError(f"space {self.space_name!r} is a CASH space: it has no priors")
        return parsed_space

    @property
    def search_space(self) -> Space:
        """The declaration's :class:`Space` (a CASH space's, or :attr:`prior_space`'s)."""
        return parsed(self.space).space

    def encode(self, key: str, value: Any) -> dict[str, Any]:
        if key == "dataset":
            return {key: self.dataset_identity}
        if key == "protocol":
            protocol = plain(value)
            for name, neutral in PROTOCOL_FIELDS_ADDED_LATER.items():
                if protocol[name] == neutral:
                    del protocol[name]
            return {key: protocol}
        if key == "objective":  # the zero-one error (the default) adds nothing
            settings = plain(value)
            name = settings.pop("name")
            return {} if name == ZERO_ONE["name"] else {name: settings}
        return super().encode(key, value)


@dataclass(frozen=True)
class Method(Part):
    """What searches and what reports. ``optimizer`` is a family of ``hpo.optimizers.CLASSES``
    or an outside class's dotted path; ``settings`` its keyword arguments. ``rules`` maps each
    label the run reports (e.g. ``gp-r`` and ``gp-pm-r``) to its selection rule; ``pm_domain``,
    ``vote_ties`` and ``post_hoc`` are the rules' settings; ``stages`` the post-run stages run on
    the finished trace (``{<hpo.stages.POST_RUN_STAGES name>: settings}``)."""

    optimizer: str
    rules: Mapping[str, str]
    settings: Mapping[str, Any] = field(
        default_factory=dict, metadata=known_as("optimizer_settings")
    )
    pm_domain: str = "space"
    vote_ties: str = "lowest"
    post_hoc: Mapping[str, Any] = field(
        default_factory=lambda: dict(POST_HOC_DEFAULTS),
        metadata=known_as(omitted_at=POST_HOC_DEFAULTS),
    )
    stages: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.rules:
            raise ValueError("a run needs at least one (method, rule) to report")
        for rule in self.rules.values():  # a built-in name, or a rule class's dotted path
            RULE_BUILDERS.get(rule)
        check_stages(self.stages)
        if self.vote_ties not in TIE_RULES:
            raise ValueError(unknown_choice_message("vote_ties", self.vote_ties, TIE_RULES))

    @property
    def name(self) -> str:
        """The label the run is known by: its first reported method."""
        return next(iter(self.rules))

    def encode(self, key: str, value: Any) -> dict[str, Any]:
        if key in ("rules", "post_hoc"):  # order-free mappings
            return {key: dict(sorted(plain(value).items()))}
        if key == "stages":  # each stage under its own name (``model_selection``)
            return plain(value)
        return super().encode(key, value)


@dataclass(frozen=True)
class Budget(Part):
    """How much a run may spend: ``evaluations``, and ``seconds`` of a ``clock`` (wall, or CPU
    of the run and its fit children; seed 004 budgets CPU hours) beside them; ``limits`` puts
    every fit in a child under time and memory limits (None: off)."""

    evaluations: int = field(default=100, metadata=known_as("budget"))
    seconds: float | None = field(default=None, metadata=known_as("time_budget", omitted_at=None))
    clock: str = field(default="wall", metadata=known_as("time_budget_kind", omitted_at="wall"))
    limits: EvaluationLimits | None = field(default=None, metadata=known_as(omitted_at=None))

    def __post_init__(self) -> None:
        if self.evaluations < 1:
            raise ValueError(f"budget must be a positive integer, got {self.evaluations}")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"time_budget must be > 0 seconds (or null), got {self.seconds}")
        if self.clock not in TIME_BUDGET_KINDS:
            raise ValueError(
                unknown_choice_message("time_budget_kind", self.clock, TIME_BUDGET_KINDS)
            )


@dataclass(frozen=True)
class Execution(Part):
    """How the run is executed where that changes its results: ``batch_networks`` trains
    networks as one batched model (:mod:`hpo.learners.batched_network`; a Hyperband or BOHB
    rung's, or the next ``batch_size`` proposals of random search), which changes the numbers
    within float tolerance, so it is part of the identity."""

    batch_networks: str = field(default="off", metadata=known_as(omitted_at="off"))
    batch_size: int = field(
        default=BATCH_NETWORKS_SIZE,
        metadata=known_as("batch_networks_size", omitted_at=BATCH_NETWORKS_SIZE),
    )

    def __post_init__(self) -> None:
        if self.batch_networks not in BATCH_NETWORKS:
            raise ValueError(
                unknown_choice_message("batch_networks", str(self.batch_networks), BATCH_NETWORKS)
            )
        if isinstance(self.batch_size, bool) or not (
            isinstance(self.batch_size, int) and self.batch_size >= 1
        ):
            raise ValueError(
                f"batch_networks_size must be an integer >= 1, got {self.batch_size!r}"
            )

    def identity(self) -> dict[str, Any]:
        if self.batch_networks == "off":  # no batch, so no batch size
            return {}
        return super().identity()


@dataclass(frozen=True)
class Outputs(Part):
    """What the run keeps: the test-error curve at every iteration (``curves``; else the last
    only), every model's predictions (the predictions sidecar) and class probabilities; and
    ``experiment``, the sweep the run is filed under (metadata, not identity)."""

    curves: bool = True
    predictions: bool = False
    probabilities: bool = field(default=False, metadata=known_as(omitted_at=False))
    experiment: str | None = field(default=None, metadata=known_as(neutral=True))


# The parts of a run, by the RunSpec field that holds each.
PARTS: dict[str, type[Part]] = {
    "task": Task,
    "method": Method,
    "budget": Budget,
    "execution": Execution,
    "outputs": Outputs,
}


@dataclass(frozen=True)
class RunSpec:
    """Everything one run depends on, as parts (:data:`PARTS`), plus the ``seed`` and the
    ``repetition``. Built from composed Hydra configs by
    :func:`experiments.configuration.config.spec_from_config`, or from keywords by :meth:`of`."""

    task: Task
    method: Method
    budget: Budget = field(default_factory=Budget)
    execution: Execution = field(default_factory=Execution)
    outputs: Outputs = field(default_factory=Outputs)
    seed: int = 0
    repetition: int = 0

    KEYS: ClassVar[tuple[str, ...]] = ("seed", "repetition")

    def __post_init__(self) -> None:
        if self.repetition < 0:
            raise ValueError(f"repetition must be >= 0, got {self.repetition}")
        named = {self.task.objective["name"], *self.method.stages}
        fixed = set(self.KEYS).union(*(part.identity_keys() for part in PARTS.values()))
        taken = sorted(named & fixed)
        if taken:
            raise ValueError(f"objective or stage name {taken[0]!r} is a run setting's name")

    @classmethod
    def of(cls, dataset: str, optimizer: str, rules: Mapping[str, str], **settings: Any) -> RunSpec:
        """A run from keywords named as in ``conf/`` and in the identity (``budget``,
        ``time_budget``, ``optimizer_settings``, ``fit_guard``…), each given to the part whose
        field is known by that name (``RunSpec.of("sklearn-iris", "rs", {"rs":
        "best_validation"}, budget=8)``)."""
        parts = {
            "task": Task(dataset),
            "method": Method(optimizer, rules),
            **{name: part() for name, part in PARTS.items() if name not in ("task", "method")},
        }
        return cls(**parts).with_settings(**settings)  # type: ignore[arg-type]

    def with_settings(self, **settings: Any) -> RunSpec:
        """This run with ``settings`` changed, named as in :meth:`of`; each part that changes is
        built (and checked) anew."""
        changes: dict[str, dict[str, Any]] = {}
        top = {key: settings.pop(key) for key in self.KEYS if key in settings}
        owners = _settings_owners()
        for key, value in settings.items():
            if key not in owners:
                raise TypeError(f"no run part has a setting {key!r}; valid: {', '.join(owners)}")
            name, field_name = owners[key]
            changes.setdefault(name, {})[field_name] = value
        parts = {name: dataclasses.replace(getattr(self, name), **c) for name, c in changes.items()}
        return dataclasses.replace(self, **parts, **top)

    def outside_code(self) -> dict[str, Any]:
        """The classes of other packages the run names (its optimizer, its settings'
        ``_target_`` classes, a learner or a selection rule by dotted path), each with its
        distribution, version and source fingerprint
        (:mod:`experiments.configuration.outside_code`); a registered source's dataset names its
        loading function (:func:`source_code`)."""
        classes = [*self.task.search_space.learners, *self.method.rules.values()]
        loader = source_code(self.task.dataset)
        if loader is not None:
            classes.append(loader)
        return outside_code(self.method.optimizer, self.method.settings, classes)

    def identity(self) -> dict[str, Any]:
        """The values that determine the run's results (hashed into ``config_hash``): every
        part's :meth:`Part.identity`, the seed and repetition, and the outside code (only runs
        that name other packages' classes have it, so earlier file names are kept)."""
        identity: dict[str, Any] = {"seed": self.seed, "repetition": self.repetition}
        for name in PARTS:
            share = getattr(self, name).identity()
            clash = sorted(set(share) & set(identity))
            if clash:
                raise ValueError(f"run part {name!r} gives identity key {clash[0]!r} twice")
            identity.update(share)
        outside = self.outside_code()
        if outside:
            identity["outside_code"] = outside
        return identity

    def with_labels(self, rules: Mapping[str, str]) -> RunSpec:
        """The same run reporting under other labels
        (:func:`experiments.configuration.command_line.relabelled`)."""
        return self.with_settings(rules=dict(rules))


def _settings_owners() -> dict[str, tuple[str, str]]:
    """{setting's name: (part, field)}: every part field by the name it is known as."""
    return {identity_key(f): (name, f.name) for name, part in PARTS.items() for f in fields(part)}
