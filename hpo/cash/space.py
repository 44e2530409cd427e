"""The Auto-WEKA CASH space (seed 004, Thornton 2014, Ch. 3 and Fig. 3.1) built from a component
library declared in ``conf/autoweka/components.yaml``.

This module owns the tree, not the estimators (``hpo/learners/autoweka.py`` builds those from a
configuration): :class:`ComponentLibrary` reads the declared base learners, meta-methods,
ensembles, feature-search methods and evaluators; :func:`build_cash_space` composes them into one
conditional :class:`~hpo.space.search_space.Space` that every optimizer of the framework can search:

* ``learner`` — one flat categorical over the applicable base learners, meta-methods and
  ensembles (the Auto-WEKA code's ``targetclass``, spec B1.7 [ext]);
* ``base.<learner>.<p>`` — each base learner's hyperparameters, active iff it is chosen;
* ``meta.<meta>.<p>`` and one slot ``meta_base`` (a base learner with its own subtree
  ``meta_base.<learner>.<p>``), active iff a meta-method is chosen;
* ``ens.<ensemble>.<p>``, ``ens_size`` in 1..``max_ensemble`` and slots ``ens_base_<i>``, each
  with its own full subtree ``ens_base_<i>.<learner>.<p>``, slot ``i`` active iff
  ``ens_size >= i``;
* ``fs_search`` in {none, search methods} with ``fs_search.<s>.<p>``, and the evaluator of the
  chosen search's kind (``fs_eval_single`` for Ranker, ``fs_eval_subset`` for Best First and
  Greedy Stepwise, WEKA's pairing, spec B2.2 [ext]) with ``fs_eval.<e>.<p>``.

Learners are filtered before the space is built: by task, by non-negative inputs
(``nonnegative: true``) and by an explicit ``include`` list. :func:`space_size_log10` counts the
space as the seed does (§3: every domain discretised to at most 10 values) so that our number of
hyperparameters and log10 size can be printed beside Auto-WEKA's 786 / 472 (§3, §4.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hpo.space.search_space import (
    Categorical,
    Integer,
    Parameter,
    Real,
    Space,
    SpaceError,
    space_from_config,
)
from hpo.tasks import CLASSIFICATION, REGRESSION

AUTOWEKA_COUNTS = {CLASSIFICATION: 786, REGRESSION: 472}  # seed §3, §4.1 (after filtering)
AUTOWEKA_LOG10_SIZE = 47  # seed §3: "> 10^47" settings, domains discretised to <= 10 values
GROUPS = ("base", "meta", "ensemble", "search", "evaluator")
COMPONENT_KEYS = (
    "weka",
    "tasks",
    "fidelity",
    "nonnegative",
    "evaluators",
    "kind",
    "default_base",
    "parameters",
)
EXTRA_PARAMETER_KEYS = ("default", "round")
MAX_ENSEMBLE = 5  # seed §3: ensembles take up to five base learners
NONE = "none"


@dataclass(frozen=True)
class Component:
    """One declared learner, meta-method, ensemble, search method or evaluator."""

    name: str
    group: str
    weka: str
    tasks: tuple[str, ...]
    fidelity: str
    parameters: Mapping[str, Mapping[str, Any]]  # conf/space parameter specs (without extras)
    defaults: Mapping[str, Any]
    rounded: tuple[str, ...] = ()
    nonnegative: bool = False
    kind: str = ""  # evaluators: single | subset; searches: the kind of evaluator they take
    default_base: str = ""  # meta-methods and ensembles: WEKA's default base learner (Ex-Def)

    def applies(self, task: str, nonnegative_inputs: bool) -> bool:
        """Whether the component can run on a dataset of ``task`` with such inputs."""
        return task in self.tasks and (nonnegative_inputs or not self.nonnegative)


class ComponentLibrary:
    """The components of ``conf/autoweka/components.yaml`` by group (see the module)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        unknown = sorted(set(config) - set(GROUPS))
        if unknown:
            raise SpaceError(
                f"components: unknown group {unknown[0]!r}; valid: {', '.join(GROUPS)}"
            )
        self.groups: dict[str, dict[str, Component]] = {
            group: {
                str(name): _component(str(name), group, spec)
                for name, spec in (config.get(group) or {}).items()
            }
            for group in GROUPS
        }

    def __getitem__(self, group: str) -> dict[str, Component]:
        return self.groups[group]

    def names(self, group: str) -> tuple[str, ...]:
        return tuple(self.groups[group])

    def component(self, name: str) -> Component:
        """The learner, meta-method or ensemble called ``name``."""
        for group in ("base", "meta", "ensemble"):
            if name in self.groups[group]:
                return self.groups[group][name]
        raise SpaceError(f"unknown learner {name!r}; valid choices: {', '.join(self.learners())}")

    def learners(self) -> tuple[str, ...]:
        return (*self.names("base"), *self.names("meta"), *self.names("ensemble"))


def _component(name: str, group: str, spec: Mapping[str, Any]) -> Component:
    unknown = sorted(set(spec) - set(COMPONENT_KEYS))
    if unknown:
        raise SpaceError(
            f"component {name!r}: unknown key {unknown[0]!r}; valid: {', '.join(COMPONENT_KEYS)}"
        )
    parameters, defaults, rounded = {}, {}, []
    for pname, pspec in (spec.get("parameters") or {}).items():
        pspec = dict(pspec)
        if "default" not in pspec:
            raise SpaceError(f"component {name!r}: parameter {pname!r} has no default")
        defaults[str(pname)] = pspec.pop("default")
        if pspec.pop("round", False):
            rounded.append(str(pname))
        parameters[str(pname)] = pspec
    tasks = tuple(spec.get("tasks") or (CLASSIFICATION, REGRESSION))
    kind = str(spec.get("kind") or spec.get("evaluators") or "")
    return Component(
        name,
        group,
        str(spec.get("weka", "")),
        tasks,
        str(spec.get("fidelity", "")),
        parameters,
        defaults,
        tuple(rounded),
        bool(spec.get("nonnegative", False)),
        kind,
        str(spec.get("default_base", "")),
    )


@dataclass(frozen=True)
class CashSpace:
    """A built CASH space and what went into it."""

    space: Space
    task: str
    base: tuple[str, ...]
    meta: tuple[str, ...]
    ensemble: tuple[str, ...]
    searches: tuple[str, ...]
    filtered: tuple[str, ...]  # components left out, each "name (reason)"
    library: ComponentLibrary

    @property
    def n_hyperparameters(self) -> int:
        return self.space.dim

    def summary(self) -> str:
        """Our hyperparameter count and log10 size beside Auto-WEKA's (seed §3, §4.1)."""
        return (
            f"{self.task} CASH space: {self.n_hyperparameters} hyperparameters "
            f"(Auto-WEKA: {AUTOWEKA_COUNTS[self.task]}), log10 size "
            f"{space_size_log10(self.space):.1f} (Auto-WEKA, both tasks: > {AUTOWEKA_LOG10_SIZE}); "
            f"{len(self.base)} base learners, {len(self.meta)} meta-methods, "
            f"{len(self.ensemble)} ensembles, {len(self.searches)} feature searches"
        )

    def default_config(self, learner: str) -> dict[str, Any]:
        """``learner`` at its WEKA defaults, no feature selection (Ex-Def, seed §4.1); a
        meta-method or ensemble gets its WEKA default base learner (``default_base``, else the
        first applicable one) at its defaults, an ensemble one member."""
        if learner not in self.space.parameters[0].choices:  # type: ignore[union-attr]
            raise SpaceError(
                f"unknown learner {learner!r}; valid choices: {', '.join(self.learners)}"
            )
        config: dict[str, Any] = {"learner": learner}
        if "fs_search" in self.space.names:
            config["fs_search"] = NONE
        component = self.library.component(learner)
        group = {"base": "base", "meta": "meta", "ensemble": "ens"}[component.group]
        config.update(_defaults(f"{group}.{learner}", component))
        base = component.default_base if component.default_base in self.base else self.base[0]
        slot = {"meta": "meta_base", "ensemble": "ens_base_1"}.get(component.group)
        if slot is not None:
            config[slot] = base
            config.update(_defaults(f"{slot}.{base}", self.library["base"][base]))
        if component.group == "ensemble":
            config["ens_size"] = "1"
        return config

    @property
    def learners(self) -> tuple[str, ...]:
        """Every learner of the space: base learners, meta-methods, ensembles."""
        return (*self.base, *self.meta, *self.ensemble)


def _defaults(prefix: str, component: Component) -> dict[str, Any]:
    values = {}
    for name, value in component.defaults.items():
        spec = component.parameters[name]
        condition = spec.get("condition")
        if condition:  # active only when its parent's default is among the listed values
            ((parent, allowed),) = dict(condition).items()
            if str(component.defaults[parent]) not in [str(v) for v in allowed]:
                continue
        values[f"{prefix}.{name}"] = str(value) if spec["type"] == "categorical" else value
    return values


def build_cash_space(
    library: ComponentLibrary,
    task: str,
    nonnegative_inputs: bool = False,
    include: Sequence[str] | None = None,
    max_ensemble: int = MAX_ENSEMBLE,
    feature_selection: bool = True,
    name: str | None = None,
) -> CashSpace:
    """The CASH space of ``library`` for ``task`` (see the module). ``include`` restricts the
    learners (base, meta or ensemble names; ``SpaceError`` for a name absent from the library);
    ``max_ensemble`` is the largest ensemble (1..5, seed §3)."""
    if task not in AUTOWEKA_COUNTS:
        raise SpaceError(f"unknown task {task!r}; valid choices: {', '.join(AUTOWEKA_COUNTS)}")
    if not 1 <= max_ensemble <= MAX_ENSEMBLE:
        raise SpaceError(f"max_ensemble must be in 1..{MAX_ENSEMBLE} (seed §3), got {max_ensemble}")
    if include is not None:
        for learner in include:
            library.component(learner)  # raises, naming the valid choices
    filtered: list[str] = []

    def keep(component: Component) -> bool:
        if include is not None and component.group != "search" and component.name not in include:
            return False
        if component.applies(task, nonnegative_inputs):
            return True
        reason = "task" if task not in component.tasks else "negative inputs"
        filtered.append(f"{component.name} ({reason})")
        return False

    base = [c for c in library["base"].values() if keep(c)]
    meta = [c for c in library["meta"].values() if keep(c)]
    ensemble = [c for c in library["ensemble"].values() if keep(c)]
    if include is not None and not base:  # meta-methods and ensembles need base learners
        base = [c for c in library["base"].values() if c.applies(task, nonnegative_inputs)]
    if not base:
        raise SpaceError(f"no base learner applies to a {task} dataset")
    base_names = [c.name for c in base]
    parameters: dict[str, Any] = {
        "learner": {
            "type": "categorical",
            "choices": [*base_names, *(c.name for c in meta), *(c.name for c in ensemble)],
        }
    }
    for component in base:
        parameters.update(_subtree("base", component, {"learner": [component.name]}))
    if meta:
        parameters.update(_meta_slots(meta, base, base_names))
    if ensemble:
        parameters.update(_ensemble_slots(ensemble, base, base_names, max_ensemble))
    searches = _searches(library, task) if feature_selection else []
    if searches:
        parameters.update(_feature_selection(library, searches, task))
    mapping = {
        "name": name or f"autoweka_{task}",
        "learner": f"autoweka_{task}",
        "impute": "default",
        "parameters": parameters,
    }
    return CashSpace(
        space_from_config(mapping),
        task,
        tuple(base_names),
        tuple(c.name for c in meta),
        tuple(c.name for c in ensemble),
        tuple(c.name for c in searches),
        tuple(filtered),
        library,
    )


def _subtree(prefix: str, component: Component, gate: Mapping[str, list[str]]) -> dict[str, Any]:
    """``component``'s parameters as ``<prefix>.<name>.<p>``: its own conditions prefixed,
    unconditional ones gated on ``gate`` (the choice that selects the component)."""
    out = {}
    for pname, spec in component.parameters.items():
        spec = dict(spec)
        if "condition" in spec:
            ((parent, values),) = dict(spec["condition"]).items()
            spec["condition"] = {f"{prefix}.{component.name}.{parent}": [str(v) for v in values]}
        else:
            spec["condition"] = dict(gate)
        out[f"{prefix}.{component.name}.{pname}"] = spec
    return out


def _base_slot(slot: str, base: list[Component], names: list[str], gate: dict) -> dict[str, Any]:
    out: dict[str, Any] = {slot: {"type": "categorical", "choices": names, "condition": gate}}
    for component in base:
        out.update(_subtree(slot, component, {slot: [component.name]}))
    return out


def _meta_slots(meta: list[Component], base: list[Component], names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for component in meta:
        out.update(_subtree("meta", component, {"learner": [component.name]}))
    out.update(_base_slot("meta_base", base, names, {"learner": [c.name for c in meta]}))
    return out


def _ensemble_slots(
    ensemble: list[Component], base: list[Component], names: list[str], max_ensemble: int
) -> dict[str, Any]:
    gate = {"learner": [c.name for c in ensemble]}
    out: dict[str, Any] = {}
    for component in ensemble:
        out.update(_subtree("ens", component, {"learner": [component.name]}))
    sizes = [str(k) for k in range(1, max_ensemble + 1)]
    out["ens_size"] = {"type": "categorical", "choices": sizes, "condition": gate}
    for i in range(1, max_ensemble + 1):
        slot_gate = gate if i == 1 else {"ens_size": sizes[i - 1 :]}
        out.update(_base_slot(f"ens_base_{i}", base, names, slot_gate))
    return out


def _searches(library: ComponentLibrary, task: str) -> list[Component]:
    kinds = {c.kind for c in library["evaluator"].values() if task in c.tasks}
    return [c for c in library["search"].values() if c.kind in kinds]


def _feature_selection(
    library: ComponentLibrary, searches: list[Component], task: str
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "fs_search": {"type": "categorical", "choices": [NONE, *(c.name for c in searches)]}
    }
    for component in searches:
        out.update(_subtree("fs_search", component, {"fs_search": [component.name]}))
    for kind in ("single", "subset"):
        users = [c.name for c in searches if c.kind == kind]
        evaluators = [
            c for c in library["evaluator"].values() if c.kind == kind and task in c.tasks
        ]
        if not users or not evaluators:
            continue
        slot = f"fs_eval_{kind}"
        out[slot] = {
            "type": "categorical",
            "choices": [c.name for c in evaluators],
            "condition": {"fs_search": users},
        }
        for component in evaluators:
            out.update(_subtree("fs_eval", component, {slot: [component.name]}))
    return out


def parameter_size(parameter: Parameter, levels: int = 10) -> int:
    """Values of one parameter when every domain is discretised to at most ``levels`` values."""
    if isinstance(parameter, Categorical):
        return len(parameter.choices)
    if isinstance(parameter, Integer):
        return min(levels, parameter.high - parameter.low + 1)
    assert isinstance(parameter, Real)
    return levels


def space_size_log10(space: Space, levels: int = 10) -> float:
    """log10 of the number of distinct configurations of ``space`` with every domain
    discretised to at most ``levels`` values (seed §3's count): a categorical contributes the
    sum over its values of the product of the sizes of the subtrees that value activates."""
    children: dict[str, list[Parameter]] = {}
    roots = []
    for p in space.parameters:
        if p.condition is None:
            roots.append(p)
        else:
            children.setdefault(p.condition.parent, []).append(p)

    def log_size(p: Parameter) -> float:
        if not isinstance(p, Categorical) or p.name not in children:
            return math.log10(parameter_size(p, levels))
        terms = []
        for value in p.choices:
            active = [c for c in children[p.name] if value in c.condition.values]  # type: ignore[union-attr]
            terms.append(sum(log_size(c) for c in active))
        top = max(terms)
        return top + math.log10(sum(10 ** (t - top) for t in terms))

    return sum(log_size(p) for p in roots)
