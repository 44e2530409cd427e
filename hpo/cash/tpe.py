"""TPE (seed 004 §2.2.2; Bergstra et al. 2011) through hyperopt, the seed's own implementation.

hyperopt is the library Auto-WEKA ran (its ``tperunner.py`` calls ``tpe.suggest`` with its
defaults, spec B1.5 [ext]) and is maintained, so it is used rather than rewritten. The space is
converted to hyperopt's tree (:func:`to_hyperopt`): a categorical with children is an
``hp.choice`` over one dictionary per value holding the subtrees that value activates; numeric
parameters are ``hp.uniform`` / ``hp.loguniform`` / integer ``hp.quniform``. A parameter active
under several values of its parent (``meta_base`` under every meta-method, ensemble slot ``i``
under every size >= i) is one node referenced from each of those branches, so TPE fits one
Parzen estimator to every configuration in which it was active, as the space means it (one
node per path would multiply the labels fourfold and TPE's time with them).

TPE cannot evaluate one fold at a time (§2.2.2): :class:`TPE` scores each configuration on
every instance and tells hyperopt the mean. ``gamma`` is hyperopt's default 0.25 (what the
Auto-WEKA code ran); the thesis text states 0.15 (the NIPS paper's), available as a setting
(docs/seed004.md). ``n_startup_jobs`` and ``n_ei_candidates`` are hyperopt's defaults (20, 24).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from hpo.cash.base import FullEvaluation
from hpo.cash_space import CashSpace
from hpo.space import Categorical, Integer, Parameter, Real, Space

VALUE_KEY = "__value__"


def to_hyperopt(space: Space) -> dict[str, Any]:
    """hyperopt's search space for ``space`` (see the module); keys are parameter names."""
    from hyperopt import hp
    from hyperopt.pyll import scope

    children: dict[str, list[Parameter]] = {}
    for p in space.parameters:
        if p.condition is not None:
            children.setdefault(p.condition.parent, []).append(p)

    made: dict[str, Any] = {}

    def node(p: Parameter) -> Any:
        if p.name not in made:
            made[p.name] = build(p, p.name)
        return made[p.name]

    def build(p: Parameter, label: str) -> Any:
        if isinstance(p, Categorical):
            if p.name not in children:
                return hp.choice(label, list(p.choices))
            options = []
            for value in p.choices:
                sub = {
                    c.name: node(c)
                    for c in children[p.name]
                    if value in c.condition.values  # type: ignore[union-attr]
                }
                options.append({VALUE_KEY: value, **sub})
            return hp.choice(label, options)
        if isinstance(p, Integer):
            return scope.int(hp.quniform(label, p.low - 0.499, p.high + 0.499, 1))
        assert isinstance(p, Real)
        if p.log:
            return hp.loguniform(label, math.log(p.low), math.log(p.high))
        return hp.uniform(label, p.low, p.high)

    return {p.name: node(p) for p in space.parameters if p.condition is None}


def flatten(sample: Mapping[str, Any]) -> dict[str, Any]:
    """A sample of :func:`to_hyperopt`'s space as a flat configuration."""
    out: dict[str, Any] = {}
    for name, value in sample.items():
        if isinstance(value, Mapping):
            out[name] = str(value[VALUE_KEY])
            out.update(flatten({k: v for k, v in value.items() if k != VALUE_KEY}))
        elif isinstance(value, str):
            out[name] = value
        else:
            out[name] = int(value) if isinstance(value, int | np.integer) else float(value)
    return out


class TPE(FullEvaluation):
    """hyperopt's ``tpe.suggest`` asked and told one configuration at a time."""

    def __init__(
        self,
        cash: CashSpace,
        n_instances: int,
        rng: np.random.Generator,
        gamma: float = 0.25,
        n_startup_jobs: int = 20,
        n_ei_candidates: int = 24,
    ) -> None:
        super().__init__(cash, n_instances, rng)
        if not 0 < gamma < 1:
            raise ValueError(f"gamma must be in (0, 1), got {gamma}")
        if n_startup_jobs < 1 or n_ei_candidates < 1:
            raise ValueError("n_startup_jobs and n_ei_candidates must be >= 1")
        from hyperopt import Domain, Trials, tpe

        self.hp_space = to_hyperopt(cash.space)
        self.domain = Domain(lambda _: 0.0, self.hp_space)
        self.trials = Trials()
        self.suggest = partial(
            tpe.suggest, gamma=gamma, n_startup_jobs=n_startup_jobs, n_EI_candidates=n_ei_candidates
        )
        self._doc: Any = None

    def propose(self) -> Mapping[str, Any] | None:
        from hyperopt import space_eval

        ids = self.trials.new_trial_ids(1)
        seed = int(self.rng.integers(0, 2**31 - 1))
        docs = self.suggest(ids, self.domain, self.trials, seed)
        self.trials.insert_trial_docs(docs)
        self.trials.refresh()
        self._doc = self.trials._dynamic_trials[-1]
        values = {k: v[0] for k, v in self._doc["misc"]["vals"].items() if v}
        return flatten(space_eval(self.hp_space, values))

    def observe(self, config: Mapping[str, Any], loss: float) -> None:
        from hyperopt import JOB_STATE_DONE, STATUS_OK

        self._doc["state"] = JOB_STATE_DONE
        self._doc["result"] = {"loss": float(loss), "status": STATUS_OK}
        self.trials.refresh()
