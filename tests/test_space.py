"""Unit-cube encoding of search spaces."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from omegaconf import OmegaConf

from experiments.configuration.spaces import load_space, space_choices
from hpo.learners import learner_names
from hpo.space.search_space import (
    Categorical,
    Condition,
    Integer,
    Real,
    Space,
    SpaceError,
    space_from_config,
)


def test_svm_space_is_log_uniform_over_ten_decades() -> None:
    space = load_space("svm_rbf")
    assert space.decode([0.0, 1.0]) == {"C": pytest.approx(1e-5), "gamma": pytest.approx(1e5)}
    assert space.decode([0.5, 0.6])["gamma"] == pytest.approx(10.0)
    np.testing.assert_allclose(space.encode({"C": 1.0, "gamma": 1e-3}), [0.5, 0.2])


def test_integer_and_categorical_use_equal_width_bins() -> None:
    space = load_space("random_forest")
    low = space.decode(np.zeros(5))
    high = space.decode(np.ones(5))
    assert low == {
        "n_estimators": 2,
        "criterion": "gini",
        "max_depth": 2,
        "min_samples_split": 2,
        "min_samples_leaf": 1,
    }
    assert high == {
        "n_estimators": 50,
        "criterion": "entropy",
        "max_depth": 150,
        "min_samples_split": 30,
        "min_samples_leaf": 30,
    }
    counts = np.bincount([Integer("k", 0, 3).from_unit(u) for u in np.linspace(0, 1, 4000)])
    assert counts.min() >= 999  # four equal bins
    for config in (low, high):
        assert space.decode(space.encode(config)) == config


def test_conditional_parameters_are_imputed_when_inactive() -> None:
    space = Space(
        "toy",
        (
            Categorical("model", ("svm", "tree")),
            Real("C", 1e-3, 1e3, log=True, condition=Condition("model", ("svm",))),
            Integer("depth", 1, 10, condition=Condition("model", ("tree",))),
        ),
    )
    config = space.decode([0.1, 0.5, 0.9])
    assert config == {"model": "svm", "C": pytest.approx(1.0)}
    np.testing.assert_allclose(space.encode(config), [0.25, 0.5, 0.5])
    assert space.active_mask(np.array([0.9, 0.1, 0.1])).tolist() == [True, False, True]


def test_bad_spaces_are_rejected() -> None:
    with pytest.raises(ValueError, match="log scale needs low > 0"):
        Real("C", 0.0, 1.0, log=True)
    with pytest.raises(
        SpaceError,
        match="'svm'; valid choices: autoweka_classification, .*, esmbo_gbc, .*, random_forest, "
        "seed003, sklearn_cash, svm_k",
    ):
        load_space("svm")


# --- Spaces declared in conf/space/*.yaml ----------------------------------------------------

SPACE_DIR = Path(__file__).resolve().parents[1] / "conf" / "space"


def test_chapter3_space_encodes_exactly_as_the_python_definition_did() -> None:
    space = load_space("svm_rbf")
    reference = Space(
        "svm_rbf", (Real("C", 1e-5, 1e5, log=True), Real("gamma", 1e-5, 1e5, log=True))
    )
    assert space.parameters == reference.parameters and space.learner == "svm_rbf"
    points = np.random.default_rng(0).uniform(size=(200, 2))
    for u in points:
        assert space.decode(u) == reference.decode(u)
        config = reference.decode(u)
        assert np.array_equal(space.encode(config), reference.encode(config))


@pytest.mark.parametrize("name", ["svm_rbf", "random_forest", "svm_kernels", "sklearn_cash"])
def test_yaml_spaces_load_alike_with_pyyaml_and_omegaconf(name: str) -> None:
    text = (SPACE_DIR / f"{name}.yaml").read_text()
    from_pyyaml = space_from_config(yaml.safe_load(text))
    from_omegaconf = space_from_config(OmegaConf.create(text))
    assert from_pyyaml == from_omegaconf == load_space(name)
    assert name in space_choices()


@pytest.mark.parametrize("name", ["svm_rbf", "random_forest", "svm_kernels", "sklearn_cash"])
def test_hydra_composes_the_same_space(name: str) -> None:
    from experiments.configuration.compose import compose_config

    assert space_from_config(compose_config([f"space={name}"])["space"]) == load_space(name)


def test_table_5_1_space_has_one_choice_and_13_conditional_parameters() -> None:
    space = load_space("sklearn_cash")
    assert space.dim == 14 and space.impute == "default"
    assert [p.condition is None for p in space.parameters].count(True) == 1
    classifier = space.parameters[0]
    assert isinstance(classifier, Categorical) and len(classifier.choices) == 9
    assert set(classifier.choices) <= set(learner_names())
    reg = space.parameters[space.names.index("qda__reg_param")]
    assert (reg.low, reg.high, reg.log) == (1e-3, 1e3, True)


def test_chapter4_svm_space_follows_section_4_4_1() -> None:
    space = load_space("svm_kernels")
    assert space.impute == "none" and space.learner == "svm"
    assert space.names == ["kernel", "C", "gamma", "degree", "coef0"]
    assert space.decode([0.0, 0.5, 0.5, 0.5, 0.5]) == {"kernel": "linear", "C": 1.0}
    assert space.decode([0.9, 0.5, 0.5, 0.0, 0.5]) == {
        "kernel": "sigmoid",
        "C": 1.0,
        "gamma": 1.0,
        "coef0": 1.0,
    }
    assert space.decode([0.6, 0.5, 0.5, 1.0, 0.0]) == {
        "kernel": "poly",
        "C": 1.0,
        "degree": 10,
        "coef0": pytest.approx(1e-2),
    }


@pytest.mark.parametrize("name", ["svm_kernels", "sklearn_cash"])
def test_samples_are_valid_configurations(name: str) -> None:
    space = load_space(name)
    rng = np.random.default_rng(3)
    learners = set()
    for _ in range(300):
        config = space.sample(rng)
        for p in space.parameters:
            assert (p.name in config) == space.is_active(p, config), (p.name, config)
        assert space.decode(space.encode(config)) == config
        learners.add(space.learner_of(config))
    assert len(learners) == (1 if name == "svm_kernels" else 9)


def _toy(impute: str = "default") -> Space:
    return Space(
        "toy",
        (
            Categorical("model", ("svm", "tree", "nb")),
            Real("C", 1e-3, 1e3, log=True, condition=Condition("model", ("svm",))),
            Integer("depth", 1, 10, condition=Condition("model", ("tree",))),
            Categorical("split", ("gini", "entropy"), condition=Condition("model", ("tree",))),
        ),
        learner_parameter="model",
        impute=impute,
    )


def test_neighbours_follow_eq_5_8() -> None:
    space = _toy()
    svm = {"model": "svm", "C": 1.0}
    assert space.neighbours(svm, 0.1) == [
        {"model": "tree", "depth": 5, "split": "gini"},  # newly active: decoded at 0.5
        {"model": "nb"},  # C dropped
        {"model": "svm", "C": pytest.approx(10**-0.6)},  # C +- 0.1 of the unit interval
        {"model": "svm", "C": pytest.approx(10**0.6)},
    ]
    tree = {"model": "tree", "depth": 10, "split": "gini"}
    assert space.neighbours(tree, 0.1) == [
        {"model": "svm", "C": pytest.approx(1.0)},
        {"model": "nb"},
        {"model": "tree", "depth": 9, "split": "gini"},  # depth 11 is out of bounds
        {"model": "tree", "depth": 10, "split": "entropy"},
    ]
    top = {"model": "svm", "C": 1e3}  # clipped at the bound: one move, no duplicate of itself
    assert [n for n in space.neighbours(top, 0.3) if n["model"] == "svm"] == [
        {"model": "svm", "C": pytest.approx(10**1.2)}
    ]


def test_neighbours_of_every_sampled_configuration_are_valid_and_distinct() -> None:
    space = load_space("sklearn_cash")
    rng = np.random.default_rng(5)
    for _ in range(50):
        config = space.sample(rng)
        neighbours = space.neighbours(config, 0.05)
        keys = [tuple(sorted(n.items())) for n in neighbours]
        assert len(set(keys)) == len(keys) and tuple(sorted(config.items())) not in keys
        assert sum(n["classifier"] != config["classifier"] for n in neighbours) == 8
        for n in neighbours:
            assert space.decode(space.encode(n)) == pytest.approx(n)


def test_imputation_default_centres_inactive_dimensions_and_none_keeps_them() -> None:
    u = np.array([0.1, 0.2, 0.8, 0.9])  # model svm: depth and split inactive
    np.testing.assert_array_equal(_toy("default").impute_point(u), [0.1, 0.2, 0.5, 0.5])
    np.testing.assert_array_equal(_toy("none").impute_point(u), u)
    tree = np.array([0.5, 0.2, 0.8, 0.9])
    np.testing.assert_array_equal(_toy("default").impute_point(tree), [0.5, 0.5, 0.8, 0.9])
    chapter3 = load_space("svm_rbf")
    np.testing.assert_array_equal(chapter3.impute_point(u[:2]), u[:2])


GOOD = {
    "name": "bad",
    "learner": {"choice": "model"},
    "impute": "default",
    "parameters": {
        "model": {"type": "categorical", "choices": ["a", "b"]},
        "x": {
            "type": "real",
            "low": "1e-5",
            "high": 1.0,
            "log": True,
            "condition": {"model": ["a"]},
        },
    },
}


def _with(change: dict, parameter: str | None = None) -> dict:
    config = copy.deepcopy(GOOD)
    target = config["parameters"][parameter] if parameter else config
    target.update(change)
    return config


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (_with({"type": "float"}, "x"), "'x': unknown type 'float'; valid choices: real, integer"),
        (_with({"lo": 0.1}, "x"), "'x': unknown key 'lo'; valid keys: type, low, high, log"),
        (_with({"low": 2.0}, "x"), "x: low=2.0 must be < high=1.0"),
        (_with({"condition": {"y": ["a"]}}, "x"), "condition parent 'y' is not a categorical"),
        (_with({"condition": {"model": ["c"]}}, "x"), "value 'c' is not a choice of 'model'"),
        (_with({"extra": 1}), "the space: unknown key 'extra'; valid keys: name, learner"),
        (_with({"impute": "mean"}), "unknown impute 'mean'; valid choices: none, default"),
        (_with({"learner": {"choice": "x"}}), "learner choice 'x' is not an unconditional"),
        (_with({"low": "small"}, "x"), "low must be a number, got 'small'"),
    ],
)
def test_malformed_spaces_raise_one_line_space_errors(config: dict, message: str) -> None:
    with pytest.raises(SpaceError, match=re.escape(message)) as caught:
        space_from_config(config)
    assert str(caught.value).startswith("space 'bad': ") and "\n" not in str(caught.value)


def test_condition_on_a_non_categorical_parent_is_rejected() -> None:
    config = copy.deepcopy(GOOD)
    config["parameters"]["z"] = {"type": "integer", "low": 1, "high": 3, "condition": {"x": ["a"]}}
    with pytest.raises(SpaceError, match="'z': condition parent 'x' is not a categorical"):
        space_from_config(config)


def test_missing_keys_are_named() -> None:
    config = _with({}, "x")
    del config["parameters"]["x"]["high"]
    with pytest.raises(SpaceError, match="space 'bad': parameter 'x': missing key 'high'"):
        space_from_config(config)
    config = copy.deepcopy(GOOD)
    del config["learner"]
    with pytest.raises(SpaceError, match="space 'bad': the space: missing key 'learner'"):
        space_from_config(config)
