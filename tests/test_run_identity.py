"""A run's identity (its results file's name and stored specification) does not drift.

The run description is built from parts a configuration picks (the objective, post-run stages,
limits); a run's identity keeps the names under which the first results that had them were
written. The hashes below were computed from the code before the parts existed: a change to the
run description that renames a run fails here, and a commit that means to rename runs must say so
and update them.
"""

from __future__ import annotations

import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.spaces import space_config
from experiments.configuration.spec import RunSpec
from experiments.run.results import config_hash
from hpo.evaluation.objective import OBJECTIVES
from hpo.optimizers import CLASSES
from hpo.optimizers.instances import CashOptimizer
from hpo.stages import POST_RUN_STAGES

pytestmark = pytest.mark.reference
PINNED = {
    "chapter3-gp-r": (["optimizer=gp_r", "dataset=sklearn-iris"], "d1efb84480a0a253"),
    "chapter5-gp-cond": (["optimizer=gp_cond", "dataset=adult", "budget=5"], "92d3d0ca6caf03af"),
    "hierarchical-hrs": (
        ["optimizer=hrs", "dataset=sklearn-iris", "probabilities=true"],
        "cfdf079a616d2673",
    ),
    "hierarchical-hrs-no-stage": (
        ["optimizer=hrs", "dataset=sklearn-iris", "optimizer.model_selection=null"],
        "9ebe77a8e57137f0",
    ),
    "surrogates-hyperband": (["optimizer=hyperband", "dataset=sklearn-digits"], "e736757a7641bc27"),
    "surrogates-hyperband-batched": (
        ["optimizer=hyperband", "dataset=sklearn-digits", "batch_networks=on"],
        "3cb04e21e59fd6c0",
    ),
    "autoweka-smac": (
        [
            "optimizer=aw_smac",
            "space=autoweka_classification",
            "dataset=car",
            "time_budget=30",
            "time_budget_kind=cpu",
            "limits.enabled=true",
            "limits.time_s=5",
        ],
        "fcd0b90b0962acd7",
    ),
}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_runs_hash_is_the_one_its_results_were_first_written_under(case: str) -> None:
    overrides, expected = PINNED[case]
    assert config_hash(compose_run(overrides)) == expected


def test_the_parts_enter_the_identity_under_their_own_names() -> None:
    spec = compose_run(["optimizer=hrs", "dataset=sklearn-iris"])
    identity = spec.identity()
    assert identity["performance_index"] == {
        k: v for k, v in spec.task.objective.items() if k != "name"
    }
    assert identity["model_selection"] == dict(spec.method.stages["model_selection"])
    assert "objective" not in identity and "stages" not in identity
    plain = compose_run(["optimizer=gp_r", "dataset=sklearn-iris"]).identity()
    assert not {"performance_index", "model_selection", "objective", "stages"} & set(plain)


def _spec(**parts: object) -> RunSpec:
    return RunSpec.of(
        "sklearn-iris", "rs", {"rs": "best_validation"}, space=space_config("svm_rbf"), **parts
    )


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"objective": {"name": "auc"}}, "unknown objective 'auc'; valid choices: "),
        ({"stages": {"cascade": {}}}, "unknown post-run stage 'cascade'; valid choices: model"),
        ({"stages": {"model_selection": {"alpha": 2.0}}}, "alpha"),
    ],
)
def test_an_unknown_part_or_bad_settings_are_refused_in_one_line(
    parts: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _spec(**parts)


def test_a_part_named_as_a_field_is_refused() -> None:
    OBJECTIVES["budget"] = OBJECTIVES["zero_one"]
    try:
        with pytest.raises(ValueError, match="'budget' is a run setting's name"):
            _spec(objective={"name": "budget"})
    finally:
        del OBJECTIVES["budget"]


def test_only_seed_004s_optimizers_race_over_instances() -> None:
    racing = {family for family, cls in CLASSES.items() if cls.races_instances}
    assert racing == {family for family in CLASSES if family.startswith("cash_")}
    assert all(issubclass(CLASSES[family], CashOptimizer) for family in racing)


def test_the_registries_are_the_documented_ones() -> None:
    assert set(OBJECTIVES) == {"zero_one", "performance_index"}
    assert set(POST_RUN_STAGES) == {"model_selection"}
