"""The seed's GP and RF SMBO (hpo/optimizers/surrogate.py, skopt 0.5.2's settings): the models'
settings, the encoding (one-hot categoricals, conditionals always active), EI, and that the model
steers the search on a function with a known optimum."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from experiments.configuration.compose import compose_run
from experiments.configuration.spaces import load_space
from hpo.optimizers import make_optimizer
from hpo.optimizers.surrogate import SurrogateSMBO, encode, expected_improvement
from hpo.space.search_space import Categorical, Real, Space


def test_the_forest_has_the_seeds_settings() -> None:
    spec = compose_run(["optimizer=skopt_rf"])
    assert (spec.task.space_name, spec.budget.evaluations) == (
        "ffnn_mnist",
        10,
    )  # §2.1.2: 10 MNIST evaluations
    optimizer = make_optimizer(
        spec.method.optimizer, load_space("ffnn_mnist"), 10, np.random.default_rng(0),
        **spec.method.settings,
    )  # fmt: skip
    assert (optimizer.model, optimizer.n_candidates) == ("forest", 10_000)  # §2.1.2.1
    forest = optimizer.forest(seed=1)
    assert forest.n_estimators == 100 and forest.min_samples_leaf == 3  # §2.1.2.1, B = 100
    assert forest.max_features is None and forest.bootstrap  # p = 1, bootstrap samples


def test_the_gp_has_skopts_settings() -> None:
    spec = compose_run(["optimizer=skopt_gp"])
    optimizer = make_optimizer(
        spec.method.optimizer, load_space("ffnn_mnist"), 10, np.random.default_rng(0),
        **spec.method.settings,
    )  # fmt: skip
    gp = optimizer.gaussian_process(n_features=5, seed=1)
    amplitude_matern, noise = gp.kernel.k1, gp.kernel.k2
    matern = amplitude_matern.k2
    assert matern.nu == 2.5 and np.shape(matern.length_scale) == (5,)  # Matérn-5/2, ARD
    assert matern.length_scale_bounds == (0.01, 100.0)
    assert amplitude_matern.k1.constant_value_bounds == (0.01, 1000.0)
    assert noise.noise_level_bounds == (1e-5, 1e5)  # noise fitted (ML-II)
    assert gp.n_restarts_optimizer == 2 and optimizer.xi == 0.01


def test_encoding_is_one_hot_and_keeps_inactive_coordinates() -> None:
    space = load_space("ffnn_mrbi")
    u = np.full(17, 0.7)  # layer_2 = "False": layers 2-3 inactive, but their coordinates stay
    features = encode(space, u)
    assert features.shape == (1, 17)  # every categorical here has two choices: one column each
    three = Space("c", (Categorical("k", ("a", "b", "c")), Real("x", 0.0, 1.0)))
    np.testing.assert_array_equal(encode(three, [[0.5, 0.25]]), [[0.0, 1.0, 0.0, 0.25]])


def test_expected_improvement_matches_its_formula() -> None:
    mean, std = np.array([0.2, 0.5, 0.1]), np.array([0.1, 0.3, 0.0])
    best, xi = 0.3, 0.01
    z = (best - mean[:2] - xi) / std[:2]
    expected = (best - mean[:2] - xi) * norm.cdf(z) + std[:2] * norm.pdf(z)
    ei = expected_improvement(mean, std, best, xi)
    np.testing.assert_allclose(ei[:2], expected)
    assert ei[2] == pytest.approx(0.19)


@pytest.mark.parametrize("model", ["gp", "forest"])
def test_the_model_steers_the_search(model: str) -> None:
    """On a bowl centred at 0.2 in 3 dimensions, 12 model-based proposals land nearer the
    optimum than 12 random ones."""
    space = Space("bowl", tuple(Real(f"x{i}", 0.0, 1.0) for i in range(3)))

    def loss(u: np.ndarray) -> float:
        return float(np.sum((u - 0.2) ** 2))

    optimizer = SurrogateSMBO(space, 20, np.random.default_rng(0), model=model, n_candidates=2000)
    distances = []
    for _ in range(20):
        proposal = optimizer.ask()
        optimizer.tell(proposal, loss(proposal.u))
        distances.append(loss(proposal.u))
    random = [loss(u) for u in np.random.default_rng(0).uniform(size=(12, 3))]
    assert np.median(distances[8:]) < 0.5 * np.median(random)


def test_the_first_points_are_random_and_seeded() -> None:
    space = load_space("ffnn_mnist")
    a = SurrogateSMBO(space, 5, np.random.default_rng(4), n_initial=3)
    b = SurrogateSMBO(space, 5, np.random.default_rng(4), n_initial=3)
    for _ in range(4):
        pa, pb = a.ask(), b.ask()
        np.testing.assert_array_equal(pa.u, pb.u)
        a.tell(pa, float(pa.u[0]))
        b.tell(pb, float(pb.u[0]))


def test_bad_settings_are_one_line() -> None:
    with pytest.raises(ValueError, match="unknown surrogate model 'rf'; valid: gp, forest"):
        SurrogateSMBO(load_space("ffnn_mnist"), 5, np.random.default_rng(0), model="rf")
