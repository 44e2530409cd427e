"""The framework's tasks as objective functions (``experiments.objectives.ObjectiveFunction``):
a ConfigSpace and ``evaluate(configuration, seed, instance, budget)``, whose numbers are a run's
for the same configurations, driven here from another loop (Optuna's ``study.optimize`` where
Optuna is installed, and a plain loop over a run's own configurations)."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.configuration.compose import compose_run
from experiments.objectives import ObjectiveFunction
from experiments.run.runner import run

TASK = ["dataset=sklearn-wine", "space=svm_rbf"]


def _configurations(trace, space_names: list[str]) -> list[dict]:
    rows = trace[[f"param_{n}" for n in space_names]].to_dict("records")
    return [{k[6:]: v for k, v in row.items() if v is not None and v == v} for row in rows]


@pytest.mark.parametrize(
    "overrides",
    [
        ["optimizer=rs", "budget=6", *TASK],
        ["optimizer=cma_r", "budget=6", "protocol=cv5", *TASK],  # reshuffled: a split per batch
        ["optimizer=rs", "budget=6", "space=sklearn_cash", "dataset=sklearn-wine"],  # conditional
    ],
    ids=["holdout", "cv5-reshuffled", "conditional"],
)
def test_a_tasks_numbers_are_the_runs_for_the_same_configurations(overrides: list[str]) -> None:
    spec = compose_run(overrides)
    result = run(spec)
    task = ObjectiveFunction([o for o in overrides if not o.startswith("budget")])
    configs = _configurations(result.trace, task.space.names)
    for config, (_, row) in zip(configs, result.trace.iterrows(), strict=True):
        trial = task.evaluate(config, seed=spec.seed, instance=int(row["batch"]))
        assert trial.cost == row["valid_loss"]
        assert trial.info["selection_loss"] == row["selection_loss"] or np.isnan(
            row["selection_loss"]
        )
    final = result.outcomes.iloc[-1]
    chosen = configs[int(final["incumbent_iteration"]) - 1]
    chosen_batch = int(result.trace["batch"].iloc[int(final["incumbent_iteration"]) - 1])
    tested = task.evaluate(chosen, seed=spec.seed, instance=chosen_batch)
    assert tested.info["test_error"] == final["test_error"]


def test_another_seed_is_another_repetition_of_the_protocol() -> None:
    task = ObjectiveFunction(TASK)
    config = {"C": 10.0, "gamma": 0.01}
    assert task.evaluate(config, seed=0).cost == task.evaluate(dict(config), seed=0).cost
    costs = {task.evaluate(config, seed=s).cost for s in range(4)}
    assert len(costs) > 1


def test_the_configspace_is_the_tasks_space() -> None:
    task = ObjectiveFunction(["dataset=sklearn-wine", "space=sklearn_cash"])
    configspace = task.configspace
    assert sorted(configspace.keys()) == sorted(task.space.names)
    assert len(configspace.conditions) == sum(
        p.condition is not None for p in task.space.parameters
    )
    sampled = configspace.sample_configuration()
    assert 0.0 <= task.evaluate(sampled, seed=0).cost <= 1.0


def test_a_budget_trains_on_a_share_of_the_rows() -> None:
    task = ObjectiveFunction(TASK)
    config = {"C": 10.0, "gamma": 0.01}
    assert task.evaluate(config, budget=0.3).cost != task.evaluate(config).cost


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"C": 10.0, "sigma": 1.0}, "unknown parameter 'sigma'; the task's: C, gamma"),
        ({"C": 1e9, "gamma": 0.01}, "parameter 'C' = 1000000000.0 lies outside the task's space"),
    ],
)
def test_a_bad_configuration_is_one_line(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ObjectiveFunction(TASK).evaluate(config)


def test_the_cash_task_scores_folds_as_instances() -> None:
    task = ObjectiveFunction(
        ["dataset=sklearn-iris", "space=autoweka_classification", "protocol=autoweka",
         "protocol.n_folds=3"]
    )  # fmt: skip
    config = dict(task.configspace.get_default_configuration())
    folds = [task.evaluate(config, seed=0, instance=i).cost for i in range(3)]
    mean = task.evaluate(config, seed=0)
    assert mean.cost == pytest.approx(np.mean(folds)) and mean.info["n_instances"] == 3
    assert 0.0 <= mean.info["test_error"] <= 1.0


def test_optunas_own_loop_gets_the_runs_numbers() -> None:
    optuna = pytest.importorskip("optuna")
    task = ObjectiveFunction(TASK)
    seen: list[tuple[dict, float, float]] = []

    def objective(trial) -> float:
        config = {
            "C": trial.suggest_float("C", 1e-5, 1e5, log=True),
            "gamma": trial.suggest_float("gamma", 1e-5, 1e5, log=True),
        }
        value = task.evaluate(config, seed=0)
        seen.append((config, value.cost, value.info["test_error"]))
        return value.cost

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=5)
    fresh = ObjectiveFunction(TASK)  # nothing cached: each number computed again
    for config, cost, test_error in seen:
        again = fresh.evaluate(config, seed=0)
        assert (again.cost, again.info["test_error"]) == (cost, test_error)
    assert study.best_value == min(cost for _, cost, _ in seen)
