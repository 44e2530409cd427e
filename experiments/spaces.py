"""The search spaces declared in ``conf/space/<name>.yaml``, read with PyYAML.

Hydra composes the same files as ``cfg.space``; code that has the composed mapping calls
:func:`plain_space` (or :func:`hpo.priors.prior_space_from_config` for the priors). This
module is for code without a composed configuration (benchmarks, objectives, tests). A space
file may carry per-context priors and virtual parameters (seed 003, ``conf/space/seed003.yaml``):
:func:`load_prior_space` reads them, :func:`load_space` the plain space underneath.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hpo.cash_space import ComponentLibrary
from hpo.priors import PriorSpace, prior_space_from_config
from hpo.space import Space, SpaceError

SPACE_DIR = Path(__file__).resolve().parents[1] / "conf" / "space"


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
    (seed 003, §3.1; format in ``docs/seed003.md``)."""
    return prior_space_from_config(space_config(name))


def plain_space(declaration: Mapping[str, Any]) -> Space:
    """The :class:`Space` of a space declaration, with or without priors (a space file with
    priors is refused by :func:`hpo.space.space_from_config`, which knows no priors)."""
    return prior_space_from_config(declaration).space


AUTOWEKA_DIR = SPACE_DIR.parent / "autoweka"  # seed 004's component library (Thornton 2014, Ch. 3)


def load_cash_library() -> ComponentLibrary:
    """The Auto-WEKA components declared in ``conf/autoweka/components.yaml`` (seed 004,
    Tables 3.1-3.2; format in the file's header)."""
    return ComponentLibrary(yaml.safe_load((AUTOWEKA_DIR / "components.yaml").read_text()))
