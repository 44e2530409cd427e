"""The search spaces declared in ``conf/space/<name>.yaml``, read with PyYAML.

Hydra composes the same files as ``cfg.space``; code that has the composed mapping calls
:func:`parsed` (or :func:`plain_space` for the space without priors), which parses each
declaration once per process. This module also reads the files for code without a composed
configuration (benchmarks, objectives, tests). A space
file may carry per-context priors and virtual parameters (seed 003, ``conf/space/seed003.yaml``):
:func:`load_prior_space` reads them, :func:`load_space` the plain space underneath.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hpo.cash.space import MAX_ENSEMBLE, CashSpace, ComponentLibrary, build_cash_space
from hpo.learners.registry import PREFIX_SEPARATOR, learner_task
from hpo.space.prior_files import prior_space_from_config
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Space, SpaceError

SPACE_DIR = Path(__file__).resolve().parents[2] / "conf" / "space"


def space_choices() -> list[str]:
    """The names of the declared spaces, sorted."""
    return sorted(path.stem for path in SPACE_DIR.glob("*.yaml"))


def space_config(name: str) -> dict[str, Any]:
    """The mapping declared in ``conf/space/<name>.yaml`` (what Hydra composes as ``space``)."""
    choices = space_choices()
    if name not in choices:
        raise SpaceError(f"unknown space {name!r}; valid choices: {', '.join(choices)}")
    return yaml.safe_load((SPACE_DIR / f"{name}.yaml").read_text())


def load_space(name: str) -> Space:
    """The space declared in ``conf/space/<name>.yaml`` (its priors, if any, left out)."""
    space = plain_space(space_config(name))
    if space.name != name:
        raise SpaceError(f"space file {name}.yaml declares name {space.name!r}; expected {name!r}")
    return space


def spaces_for_task(task: str) -> list[str]:
    """The declared spaces whose learners solve ``task`` (``classification`` or ``regression``)."""
    from hpo.learners import learner_names, learner_task

    names = []
    for name in space_choices():
        learners = plain_space(space_config(name)).learners
        if all(x in learner_names() and learner_task(x) == task for x in learners):
            names.append(name)
    return names


def load_prior_space(name: str) -> PriorSpace:
    """The space declared in ``conf/space/<name>.yaml`` with its priors and virtual parameters
    (seed 003, §3.1; format in ``docs/hierarchical.md``)."""
    space = parsed(space_config(name))
    if not isinstance(space, PriorSpace):
        raise SpaceError(f"space {name!r} is a CASH space: it has no priors")
    return space


def plain_space(declaration: Mapping[str, Any]) -> Space:
    """The :class:`Space` of a space declaration, with or without priors (a space file with
    priors is refused by :func:`hpo.space.search_space.space_from_config`, which knows no priors),
    or a CASH
    space's (:func:`cash_space`)."""
    return parsed(declaration).space


def parsed(declaration: Mapping[str, Any]) -> PriorSpace | CashSpace:
    """A space declaration parsed: a :class:`PriorSpace`, or seed 004's :class:`CashSpace`.
    Parsed once per process and declaration (parsed spaces are immutable), however many parts of
    a run, runs of a sweep and checks read it; a malformed declaration raises ``SpaceError``
    each time it is read."""
    try:
        text = json.dumps(declaration)  # in order: a parameter follows its condition
    except TypeError:  # not plain data (an OmegaConf node): parsed as it is
        return _parse(declaration)
    return _parsed(text)


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> PriorSpace | CashSpace:
    return _parse(json.loads(text))


def _parse(declaration: Mapping[str, Any]) -> PriorSpace | CashSpace:
    if is_cash(declaration):
        return cash_space(declaration)
    return prior_space_from_config(declaration)


CASH_KEY = "cash"  # a space file with ``cash: <task>`` declares seed 004's CASH space
CASH_KEYS = ("name", CASH_KEY, "learners", "max_ensemble")


def is_cash(declaration: Mapping[str, Any]) -> bool:
    """Whether a space declaration is a CASH space (``conf/space/autoweka_*.yaml``)."""
    return CASH_KEY in declaration


def cash_space(declaration: Mapping[str, Any]) -> CashSpace:
    """The CASH space a ``conf/space/autoweka_*.yaml`` declares (seed 004, Ch. 3): ``cash`` the
    task, ``learners`` the learners kept (null: every applicable one), ``max_ensemble`` the
    largest ensemble (1..5). Inputs are min-max scaled, so non-negative
    (hpo/learners/autoweka.py). ``SpaceError`` (one line) for an unknown key or learner."""
    unknown = sorted(set(declaration) - set(CASH_KEYS))
    if unknown:
        raise SpaceError(
            f"space {declaration.get('name')!r}: unknown key {unknown[0]!r}; "
            f"valid: {', '.join(CASH_KEYS)}"
        )
    learners = declaration.get("learners")
    if isinstance(learners, str):
        learners = [learners]
    return _cash_space(
        str(declaration[CASH_KEY]),
        None if learners is None else tuple(str(x) for x in learners),
        int(declaration.get("max_ensemble", MAX_ENSEMBLE)),
        str(declaration["name"]),
    )


@functools.lru_cache(maxsize=16)
def _cash_space(
    task: str, learners: tuple[str, ...] | None, max_ensemble: int, name: str
) -> CashSpace:
    return build_cash_space(
        load_cash_library(),
        task,
        nonnegative_inputs=True,
        include=learners,
        max_ensemble=max_ensemble,
        name=name,
    )


AUTOWEKA_DIR = SPACE_DIR.parent / "autoweka"  # seed 004's component library (Thornton 2014, Ch. 3)


@functools.cache
def load_cash_library() -> ComponentLibrary:
    """The Auto-WEKA components declared in ``conf/autoweka/components.yaml`` (seed 004,
    Tables 3.1-3.2; format in the file's header)."""
    return ComponentLibrary(yaml.safe_load((AUTOWEKA_DIR / "components.yaml").read_text()))


def unread_parameters(declaration: Mapping[str, Any]) -> list[tuple[str, str, set[str]]]:
    """The space's parameters that a learner they belong to never reads, as (parameter, learner,
    what that learner read): a misspelt name, or a condition that hands a parameter to a learner
    that ignores it, would otherwise be searched over with no effect on any model.

    A parameter belongs to a learner when it carries its prefix (``<learner>__<name>``), when its
    chain of conditions reaches the learner choice with that learner among the values, or, in a
    space with one learner, always; unprefixed parameters shared by every learner of a choice
    space, virtual parameters (seed 003) and the choice itself are not checked. Each parameter is
    tried in a configuration where it is active (its ancestors set to values that activate it,
    the others at the middle of their range). A configuration the factory refuses to build is not
    judged.
    """
    from hpo.learners import parameters_read

    prior_space = parsed(declaration)
    if not isinstance(prior_space, PriorSpace):  # CASH: the component library's learner reads all
        return []
    space = prior_space.space
    skipped = set(prior_space.virtual) | {space.learner_parameter}
    by_name = {p.name: p for p in space.parameters}
    middle = {p.name: p.from_unit(0.5) for p in space.parameters}
    found = []
    for parameter in space.parameters:
        if parameter.name in skipped:
            continue
        own_name = parameter.name.partition(PREFIX_SEPARATOR)[2] or parameter.name
        for learner, chain in _owners(space, parameter, by_name):
            config = {**middle, **chain}
            active = {
                name: value
                for name, value in config.items()
                if name not in prior_space.virtual and space.is_active(by_name[name], config)
            }
            try:
                read = parameters_read(learner, active)
            except Exception:  # noqa: BLE001  (a configuration the factory refuses: not judged)
                continue
            if own_name not in read:
                found.append((parameter.name, learner, read))
    return found


def _owners(space: Space, parameter: Any, by_name: Mapping[str, Any]) -> list[tuple[str, dict]]:
    """The learners ``parameter`` belongs to, each with the ancestor values that activate it."""
    owner, separator, _ = parameter.name.partition(PREFIX_SEPARATOR)
    chain: dict[str, Any] = {}
    reached: tuple[str, ...] = ()
    condition = parameter.condition
    while condition is not None:
        if condition.parent == space.learner_parameter:
            reached = condition.values
            break
        chain[condition.parent] = condition.values[0]
        condition = by_name[condition.parent].condition
    if space.learner_parameter is None:
        learners: tuple[str, ...] = (space.learner,)
    elif separator and owner in space.learners:
        learners = (owner,) if not reached or owner in reached else ()
    else:
        learners = reached
    return [
        (
            learner,
            {**chain, **({space.learner_parameter: learner} if space.learner_parameter else {})},
        )
        for learner in learners
    ]


def space_task(space: Space) -> str:
    """The task the learners of ``space`` solve (``ValueError`` when they mix tasks)."""
    tasks = sorted({learner_task(learner) for learner in space.learners})
    if len(tasks) != 1:
        raise ValueError(f"space {space.name!r} mixes {' and '.join(tasks)} learners")
    return tasks[0]


def check_space_task(space: Space, task: str, dataset: str) -> None:
    """Refuse, in one line, a space whose learners solve another task than ``dataset``'s (the
    run's own check; a composed configuration is refused earlier, naming the spaces that fit)."""
    learners_task = space_task(space)
    if learners_task != task:
        raise ValueError(
            f"space {space.name!r} is a {learners_task} space and dataset {dataset!r} a {task} "
            f"dataset; a {task} dataset needs a {task} space"
        )
