"""The framework's tasks as CARP-S tasks, so that CARP-S's own runner puts its optimizers on them:

    python -m carps.run +task/HPOThesis=chapter3_svm +optimizer/randomsearch=config seed=1 \\
        'hydra.searchpath=[pkg://experiments.carps_tasks]'

:class:`CarpsObjectiveFunction` is a ``carps.objective_functions.objective_function.
ObjectiveFunction`` around :class:`experiments.objectives.ObjectiveFunction`: the cost CARP-S's
optimizers minimise is the validation loss a run of ``run.py`` would record for the same
configuration, and each trial's ``additional_info`` carries the test error of that configuration
(and its selection-split loss, fit time, learner), what CARP-S's own benchmarks do not measure.
:func:`make_task` builds the CARP-S ``Task`` a task file (``task/HPOThesis/*.yaml`` here)
instantiates: Chapter 3's SVM on a hold-out split, Chapter 5's conditional scikit-learn space and
the CASH space ship; any ``run.py`` overrides make another (``task.overrides=[...]``).

The task's ``seed`` is the protocol's seed (the outer test split and the validation split, as
``run.py``'s ``seed=``); CARP-S passes its global ``seed`` there and to the optimizer. A trial's
``instance`` is a reshuffled protocol's batch or a CASH fold, as in
:meth:`experiments.objectives.ObjectiveFunction.evaluate`. Needs the carps extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from carps.objective_functions.objective_function import ObjectiveFunction as _CarpsObjective
from carps.utils.task import Task
from carps.utils.trials import StatusType, TrialInfo, TrialValue

from experiments.objectives import ObjectiveFunction
from hpo.optimizers.carps_optimizer import carps_task


class CarpsObjectiveFunction(_CarpsObjective):
    """One task of this framework (``run.py`` overrides less the optimizer) for CARP-S."""

    def __init__(self, overrides: Sequence[str], seed: int = 0, loggers: Any = None) -> None:
        super().__init__(loggers)
        self.task = ObjectiveFunction(list(overrides))
        self.seed = int(seed)
        self._configspace = self.task.configspace

    @property
    def configspace(self) -> Any:
        return self._configspace

    def _evaluate(self, trial_info: TrialInfo) -> TrialValue:
        value = self.task.evaluate(
            trial_info.config, seed=self.seed, instance=trial_info.instance, budget=None
        )
        info = {k: v for k, v in value.info.items() if v is not None and v == v}  # no None, NaN
        failed = value.info.get("failure") is not None
        return TrialValue(
            cost=value.cost,
            time=float(value.info.get("fit_seconds") or 0.0),
            status=StatusType.CRASHED if failed else StatusType.SUCCESS,
            additional_info=info,
        )


def make_task(
    overrides: Sequence[str],
    n_trials: int,
    seed: int = 0,
    name: str | None = None,
    objective_function: Mapping[str, Any] | None = None,
    dataset: str | None = None,
) -> Task:
    """The CARP-S ``Task`` of ``overrides`` with ``n_trials`` evaluations on seed ``seed``;
    ``objective_function`` is what CARP-S's runner adds (``{"loggers": [...]}``). ``dataset``
    (a task file's ``task.dataset``, which also names its ``task_id`` and so CARP-S's output
    folder) comes first; a ``dataset=`` in ``overrides`` beside it is refused in one line."""
    overrides = list(overrides)
    if dataset is not None:
        if any(o.split("=", 1)[0].lstrip("+~") == "dataset" for o in overrides):
            raise ValueError(
                "name the dataset with task.dataset=<name>, not in task.overrides (the task's "
                "id, and so CARP-S's output folder, is named by task.dataset)"
            )
        overrides = [f"dataset={dataset}", *overrides]
    function = CarpsObjectiveFunction(overrides, seed, **dict(objective_function or {}))
    return carps_task(
        function,
        n_trials,
        seed,
        name or "hpo-thesis:" + ",".join(overrides),
        has_constraints=False,
        domain="ML",
        objective_function_approximation="real",
        has_virtual_time=False,
        deterministic=True,
    )
