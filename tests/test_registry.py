"""One registry mechanism serves every plug-in point (``hpo.registry``)."""

from __future__ import annotations

import sys

import pytest

from hpo.registry import Registry, UnknownChoice


def test_an_entry_by_module_path_is_imported_on_first_use() -> None:
    registry: Registry[object] = Registry("thing", {"json": "json:dumps"})
    assert registry.names() == ("json",)
    import json

    assert registry.get("json") is json.dumps
    assert "json" in registry and len(registry) == 1


def test_a_heavy_entry_costs_nothing_until_asked_for() -> None:
    sys.modules.pop("hpo.optimizers.tpe", None)
    from hpo.optimizers import CLASSES

    assert "tpe" in CLASSES and "hpo.optimizers.tpe" not in sys.modules
    assert CLASSES.get("tpe").__name__ == "TPEOptimizer"


def test_an_unknown_name_is_one_line_with_the_closest_and_every_valid_name() -> None:
    registry = Registry("kernel", {"matern52": 1, "se_ard": 2})
    with pytest.raises(UnknownChoice) as caught:
        registry.get("matern25")
    assert str(caught.value) == (
        "unknown kernel 'matern25' (did you mean 'matern52'?); valid choices: matern52, se_ard"
    )
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, ValueError)


def test_a_fallback_resolves_names_that_are_not_registered() -> None:
    registry = Registry("thing", {"a": 1}, fallback=lambda name: len(name) if "." in name else None)
    assert registry.get("x.y") == 3
    with pytest.raises(UnknownChoice):
        registry.get("xy")


def test_a_taken_name_is_refused_and_a_decorator_registers() -> None:
    registry: Registry[object] = Registry("rule")

    @registry.register("mine")
    def mine() -> None: ...

    assert registry.get("mine") is mine
    with pytest.raises(ValueError, match="rule 'mine' is already registered"):
        registry.register("mine", len)


def test_every_plug_in_point_is_a_registry() -> None:
    from analysis.plugins import REGISTRY
    from hpo.data.sources import SOURCES
    from hpo.evaluation.objective import OBJECTIVES
    from hpo.gp.kernels import KERNELS
    from hpo.learners.registry import LEARNERS
    from hpo.optimizers import CLASSES
    from hpo.rules.registry import RULE_BUILDERS
    from hpo.stages import POST_RUN_STAGES

    points = (CLASSES, KERNELS, RULE_BUILDERS, OBJECTIVES, POST_RUN_STAGES, LEARNERS, SOURCES,
              REGISTRY)  # fmt: skip
    assert all(isinstance(point, Registry) for point in points)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("json.JSONDecoder", "selection rule 'json.JSONDecoder' is not a rule: subclass"),
        ("no_such_pkg.Rule", "selection rule 'no_such_pkg.Rule' does not import"),
        ("best_validatoin", "unknown selection rule 'best_validatoin' .did you mean"),
    ],
)
def test_a_rule_by_a_path_that_is_no_rule_is_one_line(path: str, message: str) -> None:
    from hpo.rules.registry import RULE_BUILDERS

    with pytest.raises(ValueError, match=message):
        RULE_BUILDERS.get(path)
