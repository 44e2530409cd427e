"""The run description is made of parts, and the run's identity is computed from them.

Every field of every part changes the run's hash unless its declaration says it must not (the
sweep's name); a part that stops contributing is caught. A run parses its space once and builds
its optimizer once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from experiments.configuration import spaces
from experiments.configuration.compose import compose_run
from experiments.configuration.config import check_method
from experiments.configuration.spaces import space_config
from experiments.configuration.spec import PARTS, Execution, RunSpec, identity_key
from experiments.run.results import config_hash
from experiments.run.single import run_and_save
from hpo.evaluation.isolation import EvaluationLimits
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard
from hpo.optimizers import CLASSES
from hpo.optimizers.random_search import RandomSearch
from hpo.space import search_space

BASE = RunSpec.of("sklearn-iris", "rs", {"rs": "best_validation"}, budget=4)
# Another value of every part field (the setting's name as in conf/): each must change the hash.
OTHER: dict[str, Any] = {
    "dataset": "sklearn-wine",
    "space": space_config("trees"),
    "protocol": ProtocolSettings(n_folds=3, validation="cv"),
    "protocol_name": "cv3",
    "objective": {
        "name": "performance_index",
        "weights": {"accuracy": 1.0},
    },
    "fit_guard": FitGuard(max_iter=50),
    "optimizer": "tpe",
    "rules": {"rs": "best_selection"},
    "optimizer_settings": {"n_initial": 2},
    "pm_domain": "trace",
    "vote_ties": "random",
    "post_hoc": {"loss": "zero_one", "n_init": 5, "size": 100, "tie_loss": "sqm"},
    "stages": {"model_selection": {}},
    "budget": 5,
    "time_budget": 60.0,
    "time_budget_kind": "cpu",
    "limits": EvaluationLimits(time_s=10),
    "batch_networks": "on",
    "batch_networks_size": 8,
    "curves": False,
    "predictions": True,
    "probabilities": True,
    "experiment": "another-sweep",
    "seed": 1,
    "repetition": 1,
}
NEUTRAL = {"experiment"}  # the sweep a run is filed under: metadata, never identity


def settings_of(spec: RunSpec) -> Iterator[str]:
    """The name of every setting of ``spec``'s parts (as in conf/), and the seed and repetition."""
    for part in PARTS.values():
        for f in dataclasses.fields(part):
            yield identity_key(f)
    yield from RunSpec.KEYS


def unchanged_by(spec: RunSpec, context: dict[str, dict[str, Any]]) -> set[str]:
    """The settings whose other value (:data:`OTHER`, in ``context`` where one needs another
    setting to have an effect) leaves the run's hash unchanged."""
    unchanged = set()
    for name in settings_of(spec):
        base = spec.with_settings(**context.get(name, {}))
        other = base.with_settings(**{name: OTHER[name]})
        if config_hash(other) == config_hash(base):
            unchanged.add(name)
    return unchanged


# a batch size only matters with batching on
CONTEXT = {"batch_networks_size": {"batch_networks": "on"}}


def test_every_setting_of_every_part_has_another_value_here() -> None:
    assert set(settings_of(BASE)) == set(OTHER)


def test_every_setting_but_the_neutral_ones_enters_the_identity() -> None:
    assert unchanged_by(BASE, CONTEXT) == NEUTRAL


def test_a_part_that_drops_its_contribution_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: the execution part gives nothing to the identity."""
    monkeypatch.setattr(Execution, "identity", lambda self: {})
    assert unchanged_by(BASE, CONTEXT) == NEUTRAL | {"batch_networks", "batch_networks_size"}


def test_an_unknown_setting_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(TypeError, match="no run part has a setting 'budgett'; valid: dataset"):
        BASE.with_settings(budgett=3)


def test_each_part_refuses_its_own_bad_values() -> None:
    for name, value, message in [
        ("budget", 0, "budget must be a positive integer"),
        ("time_budget_kind", "moon", "unknown time_budget_kind 'moon'"),
        ("batch_networks", "maybe", "unknown batch_networks 'maybe'"),
        ("vote_ties", "coin", "unknown vote_ties 'coin'"),
        ("rules", {"rs": "best_guess"}, "unknown selection rule .best_guess."),
        ("repetition", -1, "repetition must be >= 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            BASE.with_settings(**{name: value})


def test_a_run_parses_its_space_once_and_builds_its_optimizer_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaces._parsed.cache_clear()  # nothing parsed before in this process
    parsed, built = [], []
    reader = search_space._SpaceReader  # what reads a declaration's mapping, once per parse

    class CountedReader(reader):
        def space(self, config: Any) -> Any:
            parsed.append(self.name)
            return super().space(config)

    monkeypatch.setattr(search_space, "_SpaceReader", CountedReader)

    class Counted(RandomSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setitem(CLASSES, "rs", Counted)
    spec = compose_run(["optimizer=rs", "dataset=sklearn-iris", "budget=3"])
    run_and_save(spec, tmp_path / "run.parquet")  # what run.py does with the composed run
    assert parsed == ["svm_rbf"]
    assert len(built) == 1
    check_method(spec)  # a sweep's check of a method, once before its runs: one more
    assert len(built) == 2 and parsed == ["svm_rbf"]
