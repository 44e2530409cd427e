"""Seed 002's spaces (Jůzlová 2018, Table 2.1; conf/space/ffnn_mnist.yaml and ffnn_mrbi.yaml):
their dimensions, priors and conditions; log-uniform integers; a space's learner settings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from omegaconf import OmegaConf

from experiments.configuration.spaces import SPACE_DIR, load_space
from hpo.space.search_space import Categorical, Integer, Real, SpaceError, space_from_config


def test_mnist_space_is_table_2_1s_five_hyperparameters() -> None:
    space = load_space("ffnn_mnist")
    assert space.names == ["learning_rate", "decay", "units_1", "activation_1", "init_1"]
    lr, decay, units, activation, init = space.parameters
    assert isinstance(lr, Real) and (lr.low, lr.high, lr.log) == (1e-3, 10.0, True)
    assert isinstance(decay, Real) and (decay.low, decay.high, decay.log) == (1e-5, 1e-3, True)
    assert isinstance(units, Integer) and (units.low, units.high, units.log) == (18, 1024, True)
    assert isinstance(activation, Categorical) and activation.choices == ("tanh", "sigmoid")
    assert isinstance(init, Categorical) and init.choices == ("uniform", "normal")
    assert not space.is_conditional and space.learners == ("ffnn",)


def test_mrbi_space_has_17_hyperparameters_and_the_layer_prior_50_25_25() -> None:
    space = load_space("ffnn_mrbi")
    assert space.dim == 17 and space.is_conditional
    rng = np.random.default_rng(0)
    layers = [
        1 + ("units_2" in c) + ("units_3" in c) for c in (space.sample(rng) for _ in range(8000))
    ]
    shares = np.bincount(layers, minlength=4)[1:] / len(layers)
    np.testing.assert_allclose(shares, [0.5, 0.25, 0.25], atol=0.02)  # §2.1.1.2, Table 2.5
    for name in ("input_dropout", "dropout_1", "dropout_2", "dropout_3"):
        p = space.parameters[space.names.index(name)]
        assert isinstance(p, Real) and (p.low, p.high, p.log) == (0.0, 0.6, False)


def test_layer_3_needs_layer_2() -> None:
    space = load_space("ffnn_mrbi")
    u = np.full(17, 0.2)  # every flag "True" (first choice)
    assert {"units_2", "units_3"} <= set(space.decode(u))
    u[space.names.index("layer_2")] = 0.9  # "False": layer 3's flag and parameters go too
    config = space.decode(u)
    assert "layer_3" not in config and "units_3" not in config and "units_2" not in config


def test_log_integers_are_log_uniform_and_rounded() -> None:
    units = Integer("units", 18, 1024, log=True)
    u = np.random.default_rng(1).uniform(size=20_000)
    values = np.array([units.from_unit(x) for x in u])
    assert values.min() == 18 and values.max() <= 1024
    assert (units.from_unit(0.0), units.from_unit(1.0)) == (18, 1024)
    median = math.sqrt(18 * 1024)  # the log-uniform's median
    assert np.mean(values <= median) == pytest.approx(0.5, abs=0.01)
    assert units.from_unit(0.5) == round(median)
    for value in (18, 19, 100, 777, 1024):
        assert units.from_unit(units.to_unit(value)) == value
    with pytest.raises(SpaceError, match="log scale needs low > 0"):
        Integer("units", 0, 10, log=True)


def test_plain_integers_are_unchanged_by_the_log_option() -> None:
    assert [Integer("n", 1, 4).from_unit(u) for u in (0.0, 0.3, 0.6, 1.0)] == [1, 2, 3, 4]


@pytest.mark.parametrize("name", ["ffnn_mnist", "ffnn_mrbi"])
def test_seed002_spaces_load_alike_with_pyyaml_omegaconf_and_hydra(name: str) -> None:
    from experiments.configuration.compose import compose_config

    text = (SPACE_DIR / f"{name}.yaml").read_text()
    expected = load_space(name)
    assert space_from_config(yaml.safe_load(text)) == expected
    assert space_from_config(OmegaConf.create(text)) == expected
    assert space_from_config(compose_config([f"space={name}"])["space"]) == expected


def test_settings_are_read_and_overridable() -> None:
    from experiments.configuration.compose import compose_config

    config = compose_config(["space=ffnn_mnist", "space.settings.device=auto"])
    assert space_from_config(config["space"]).learner_settings["device"] == "auto"
    bad = {**yaml.safe_load((SPACE_DIR / "ffnn_mnist.yaml").read_text()), "settings": {"x": [1]}}
    with pytest.raises(SpaceError, match="settings: 'x' must be a number or a string"):
        space_from_config(bad)
    assert load_space("svm_rbf").learner_settings == {}


def test_the_prior_mass_of_log_integers_sums_to_one_and_matches_sampling() -> None:
    from hpo.space.priors import _log_prior

    units = Integer("units", 18, 1024, log=True)
    masses = np.exp([_log_prior(units, None, k) for k in range(18, 1025)])
    assert masses.sum() == pytest.approx(1.0)
    draws = np.array([units.from_unit(x) for x in np.random.default_rng(2).uniform(size=20_000)])
    assert np.mean(draws == 18) == pytest.approx(masses[0], abs=0.003)  # half a bin
    assert np.mean(draws == 30) == pytest.approx(masses[12], abs=0.004)
    plain = Integer("depth", 1, 3)  # equal-width bins: each of the 3 values has mass 1/3
    masses = [_log_prior(plain, None, k) for k in (1, 2, 3)]
    assert masses == pytest.approx([-np.log(3)] * 3, rel=1e-12)  # not exact: two libms' logs
