"""The search spaces declared in ``conf/space/<name>.yaml``, read with PyYAML.

Hydra composes the same files as ``cfg.space``; code that has the composed mapping calls
:func:`hpo.space.space_from_config` directly. This module is for code without a composed
configuration (benchmarks, objectives, tests). Spaces with per-context priors (seed 003) are in
``conf/hierarchical/`` and read by :func:`load_prior_space`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hpo.cash_space import ComponentLibrary
from hpo.priors import PriorSpace, prior_space_from_config
from hpo.space import Space, SpaceError, space_from_config

SPACE_DIR = Path(__file__).resolve().parents[1] / "conf" / "space"
HIERARCHICAL_DIR = SPACE_DIR.parent / "hierarchical"  # spaces with priors (seed 003, §3.1)


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
    """The space declared in ``conf/space/<name>.yaml``."""
    space = space_from_config(space_config(name))
    if space.name != name:
        raise SpaceError(f"space file {name}.yaml declares name {space.name!r}; expected {name!r}")
    return space


def spaces_for_task(task: str) -> list[str]:
    """The declared spaces whose learners solve ``task`` (``classification`` or ``regression``)."""
    from hpo.learners import learner_names, learner_task

    names = []
    for name in space_choices():
        learners = space_from_config(space_config(name)).learners
        if all(x in learner_names() and learner_task(x) == task for x in learners):
            names.append(name)
    return names


def load_prior_space(name: str) -> PriorSpace:
    """The space with priors declared in ``conf/hierarchical/<name>.yaml`` (seed 003, §3.1;
    format in ``docs/seed003.md``)."""
    choices = sorted(path.stem for path in HIERARCHICAL_DIR.glob("*.yaml"))
    if name not in choices:
        raise SpaceError(f"unknown space with priors {name!r}; valid choices: {', '.join(choices)}")
    return prior_space_from_config(yaml.safe_load((HIERARCHICAL_DIR / f"{name}.yaml").read_text()))


AUTOWEKA_DIR = SPACE_DIR.parent / "autoweka"  # seed 004's component library (Thornton 2014, Ch. 3)


def load_cash_library() -> ComponentLibrary:
    """The Auto-WEKA components declared in ``conf/autoweka/components.yaml`` (seed 004,
    Tables 3.1-3.2; format in the file's header)."""
    return ComponentLibrary(yaml.safe_load((AUTOWEKA_DIR / "components.yaml").read_text()))
