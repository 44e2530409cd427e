"""The framework's tasks as objective functions, for any optimizer loop (Optuna's, SMAC's, a
benchmark suite's), in the shape HPOBench, YAHPO Gym and CARP-S give theirs: a ConfigSpace and
``evaluate(configuration, seed, instance=None, budget=None) -> cost``.

A task is what ``python run.py <overrides>`` would run, less the optimizer: its dataset, space and
protocol (``ObjectiveFunction(["dataset=adult", "space=sklearn_cash", "protocol=chapter5"])``).
``evaluate`` scores a configuration exactly as a run scores it (the same split, fit guard, seeds
and objective; the thesis's Chapter 3, Chapter 5 and the CASH spaces alike) and returns its
validation loss as the cost, and in ``info`` what the benchmark suites do not measure: the test
error of that configuration (retrained on all non-test data and scored once on the test split,
as a run tests the configuration a rule chooses), beside its loss on the selection split::

    from experiments.objectives import ObjectiveFunction
    task = ObjectiveFunction(["dataset=sklearn-wine", "space=svm_rbf"])
    trial = task.evaluate({"C": 10.0, "gamma": 0.01}, seed=0)
    trial.cost, trial.info["test_error"]

``seed`` is a run's seed: it draws the outer test split and the validation split (and a
stochastic learner's seed), so two seeds are two repetitions of the protocol. ``instance`` is, for
a protocol that reshuffles (``optimizer.reshuffle=true``, or a ``-r`` method's name among the
overrides: only its protocol settings are read), the batch whose split is used (a run's batch
``b``; default 0), and
for the CASH space the fold (seed 004's instances; default: the mean over every fold, as the
seed's final choice is scored). ``budget`` is a share of the training rows (``train_fraction``,
in (0, 1]; the CASH task takes none).

``svm_validation_objective(dataset, seed)`` is the loss the ``gp`` optimizer minimises in
Chapter 3 on the unit square, for the benchmarks that compare optimizer engines on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from experiments.configuration.compose import compose_run
from experiments.configuration.spaces import cash_space, is_cash, load_space
from hpo.data.catalog import Dataset, load_dataset
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.instances import InstanceObjective, make_instances
from hpo.evaluation.objective import make_objective
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard
from hpo.space.prior_files import prior_space_from_config
from hpo.space.search_space import Categorical, Space


@dataclass(frozen=True)
class TrialValue:
    """What one evaluation gives: the cost an optimizer minimises (the validation loss) and
    the rest (``test_error``, ``selection_loss``, ``fit_seconds``, ``learner``, ``failure``)."""

    cost: float
    info: Mapping[str, Any] = field(default_factory=dict)


class ObjectiveFunction:
    """One task: ``configspace`` and :meth:`evaluate` (see the module)."""

    def __init__(self, overrides: Sequence[str] = (), data_dir: str | None = None) -> None:
        self.spec = compose_run(list(overrides))
        self.cash = cash_space(self.spec.task.space) if is_cash(self.spec.task.space) else None
        self.prior_space = None if self.cash else prior_space_from_config(self.spec.task.space)
        self.space: Space = self.cash.space if self.cash else self.prior_space.space
        self._data: Dataset | None = None
        self._data_dir = data_dir
        self._evaluators: dict[int, Evaluator] = {}
        self._instances: dict[int, InstanceObjective] = {}

    @property
    def configspace(self) -> Any:
        """The task's space as a ``ConfigSpace.ConfigurationSpace`` (names, bounds, log scales,
        conditions)."""
        from hpo.optimizers.smac import to_configspace

        return to_configspace(self.space)

    @property
    def data(self) -> Dataset:
        if self._data is None:
            self._data = load_dataset(self.spec.task.dataset, self._data_dir)
        return self._data

    def evaluator(self, seed: int) -> Evaluator:
        """The evaluator a run of seed ``seed`` uses (built once per seed)."""
        if seed not in self._evaluators:
            spec = self.spec
            evaluator = Evaluator(
                self.data,
                spec.task.protocol,
                self.space.learner_of,
                spec.task.fit_guard,
                seed,
                spec.repetition,
                learner_settings=self.space.learner_settings,
                limits=spec.budget.limits,
                objective=make_objective(spec.task.objective),
            )
            evaluator.splits.check_sizes(self.data.name)
            self._evaluators[seed] = evaluator
        return self._evaluators[seed]

    def evaluate(
        self,
        configuration: Mapping[str, Any],
        seed: int = 0,
        instance: int | None = None,
        budget: float | None = None,
    ) -> TrialValue:
        """Score ``configuration`` (a mapping, e.g. a ConfigSpace ``Configuration``; its
        active parameters) on seed ``seed``'s split (see the module)."""
        config = self._config(configuration)
        evaluator = self.evaluator(seed)
        if self.cash is not None:
            return self._evaluate_on_instances(config, seed, instance, budget)
        learner_config = self.prior_space.learner_config(config)
        resource = {} if budget is None else {"resource": budget, "resource_kind": "train_fraction"}
        scored = evaluator.validate(learner_config, batch=instance or 0, **resource)
        tested = evaluator.test(learner_config)
        return TrialValue(
            scored.valid_loss,
            {
                "test_error": tested.error,
                "selection_loss": scored.selection_loss,
                "fit_seconds": scored.fit_seconds,
                "learner": self.space.learner_of(learner_config),
                "failure": scored.failure,
            },
        )

    def _evaluate_on_instances(
        self, config: dict[str, Any], seed: int, instance: int | None, budget: float | None
    ) -> TrialValue:
        if budget is not None:
            raise ValueError("the CASH task takes no budget; its instances are the folds")
        if seed not in self._instances:
            evaluator = self.evaluator(seed)
            folds = make_instances(
                evaluator, "cv", seed, self.data.stream_name, self.spec.repetition
            )
            self._instances[seed] = InstanceObjective(evaluator, folds)
        objective = self._instances[seed]
        if instance is None:
            cost = objective.mean_loss(config)
        else:
            if not 0 <= instance < objective.n_instances:
                raise ValueError(
                    f"instance {instance} out of range; the task has {objective.n_instances} folds"
                )
            cost = objective.evaluate(config, instance).loss
        info = {
            "test_error": objective.test_loss(config),
            "learner": self.space.learner_of(config),
            "n_instances": objective.n_instances,
        }
        return TrialValue(cost, info)

    def _config(self, configuration: Mapping[str, Any]) -> dict[str, Any]:
        """The active parameters of ``configuration`` as the space's Python values."""
        from hpo.optimizers.smac import config_of

        unknown = sorted(set(configuration) - set(self.space.names))
        if unknown:
            raise ValueError(
                f"unknown parameter {unknown[0]!r}; the task's: {', '.join(self.space.names)}"
            )
        config = config_of(self.space, configuration)
        for p in self.space.parameters:
            if p.name in config and not self.space.is_active(p, config):
                del config[p.name]  # an inactive parameter's value is not the learner's
        for p in self.space.parameters:
            value = config.get(p.name)
            if value is None:
                continue
            inside = value in p.choices if isinstance(p, Categorical) else p.low <= value <= p.high
            if not inside:
                raise ValueError(f"parameter {p.name!r} = {value!r} lies outside the task's space")
        return config

    def close(self) -> None:
        """Stop the child processes of the limits, if any."""
        for evaluator in self._evaluators.values():
            evaluator.close()


def svm_validation_objective(
    dataset: str, seed: int, data_dir: str | None = None, fit_guard: FitGuard | None = None
) -> Callable[[np.ndarray], float]:
    """``u -> validation error`` of the RBF-SVM on ``dataset``'s hold-out split for ``seed``
    (Chapter 3's ``gp`` problem on the unit square: same split for every call, no reshuffling,
    the run's fit guard and caches)."""
    data = load_dataset(dataset, data_dir)
    evaluator = Evaluator(
        data, ProtocolSettings(), lambda config: "svm_rbf", fit_guard or FitGuard(), seed, 0
    )
    space = load_space("svm_rbf")

    def objective(u: np.ndarray) -> float:
        return evaluator.validate(space.decode(np.asarray(u, dtype=float)), batch=0).valid_loss

    return objective
