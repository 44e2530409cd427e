"""Seed 002's network (hpo/learners/ffnn.py): resuming costs exactly the missing epochs and gives
the model trained at once; fits are deterministic on the CPU; early stopping; the learning-rate
decay; the initialisations; settings and devices refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from experiments.configuration.spaces import load_space  # noqa: E402
from hpo.learners import FitGuard, check_learner_settings, fit_and_predict, make_estimator  # noqa: E402
from hpo.learners.network_settings import HiddenLayer, NetworkSettings, hidden_layers  # noqa: E402
from hpo.learners.torch_network import (  # noqa: E402
    FeedForwardNetwork,  # noqa: E402
    Network,
    _learning_rate,
)

torch.set_num_threads(1)
CONFIG = {
    "learning_rate": 0.05,
    "decay": 1e-3,
    "units_1": 20,
    "activation_1": "tanh",
    "init_1": "uniform",
}


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, ...]:
    """A small slice of scikit-learn's digits: 300 training and 150 validation rows."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return X[:300], y[:300], X[300:450], y[300:450]


def _network(seed: int = 3, **settings) -> FeedForwardNetwork:
    values = {"patience": 1000, "max_epochs": 100, **settings}
    return make_estimator("ffnn", {**CONFIG, **values}, FitGuard(), seed=seed)


def _weights(net: FeedForwardNetwork) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in net.model_.parameters()]


def test_resuming_costs_the_missing_epochs_and_equals_training_at_once(digits, tmp_path) -> None:
    X, y, Xv, yv = digits
    checkpoint = tmp_path / "config.pt"
    first = _network(restore_best="false").fit(X, y, (Xv, yv), epochs=4, checkpoint=checkpoint)
    assert (first.epochs_run_, first.epochs_trained_) == (4, 4)
    resumed = _network(restore_best="false").fit(X, y, (Xv, yv), epochs=11, checkpoint=checkpoint)
    assert (resumed.epochs_run_, resumed.epochs_trained_) == (7, 11)
    at_once = _network(restore_best="false").fit(X, y, (Xv, yv), epochs=11)
    assert at_once.epochs_run_ == 11
    for a, b in zip(_weights(resumed), _weights(at_once), strict=True):
        np.testing.assert_array_equal(a, b)
    again = _network(restore_best="false").fit(X, y, (Xv, yv), epochs=11, checkpoint=checkpoint)
    assert again.epochs_run_ == 0  # already there: nothing to train


def test_a_checkpoint_of_another_model_is_not_resumed(digits, tmp_path) -> None:
    X, y, Xv, yv = digits
    checkpoint = tmp_path / "config.pt"
    _network(seed=3).fit(X, y, (Xv, yv), epochs=3, checkpoint=checkpoint)
    other = _network(seed=4).fit(X, y, (Xv, yv), epochs=5, checkpoint=checkpoint)
    assert other.epochs_run_ == 5


def test_fits_are_deterministic_and_take_the_seed(digits) -> None:
    X, y, Xv, yv = digits
    a = _network(seed=3).fit(X, y, (Xv, yv), epochs=3)
    b = _network(seed=3).fit(X, y, (Xv, yv), epochs=3)
    c = _network(seed=4).fit(X, y, (Xv, yv), epochs=3)
    for wa, wb in zip(_weights(a), _weights(b), strict=True):
        np.testing.assert_array_equal(wa, wb)
    assert not np.array_equal(_weights(a)[0], _weights(c)[0])


def test_dropout_is_seeded_too(digits) -> None:
    X, y, Xv, yv = digits
    config = {**CONFIG, "input_dropout": 0.3, "patience": 100, "max_epochs": 3}
    fits = [make_estimator("ffnn", config, FitGuard(), seed=5).fit(X, y, (Xv, yv)) for _ in "ab"]
    np.testing.assert_array_equal(_weights(fits[0])[0], _weights(fits[1])[0])


def test_early_stopping_ends_training_and_a_stopped_model_costs_nothing_more(
    digits, tmp_path
) -> None:
    X, y, Xv, yv = digits
    checkpoint = tmp_path / "c.pt"
    # a learning rate of 1e-3 with sigmoid units barely moves: the error plateaus at once
    config = {**CONFIG, "learning_rate": 1e-3, "activation_1": "sigmoid", "patience": 2}
    net = make_estimator("ffnn", {**config, "max_epochs": 500}, FitGuard(), seed=1)
    net.fit(X, y, (Xv, yv), epochs=400, checkpoint=checkpoint)
    assert net.stopped_early_ and net.epochs_run_ < 400
    assert net.epochs_trained_ - net.best_epoch_ == 2  # stopped after `patience` worse epochs
    net.fit(X, y, (Xv, yv), epochs=500, checkpoint=checkpoint)
    assert net.epochs_run_ == 0


def test_epochs_are_capped_by_max_epochs(digits) -> None:
    X, y, Xv, yv = digits
    net = _network(max_epochs=3).fit(X, y, (Xv, yv), epochs=50)
    assert net.epochs_trained_ == 3


def test_the_learning_rate_decays_per_epoch_or_per_update() -> None:
    net = _network(decay_step="epoch")
    assert _learning_rate(net, epoch=10, updates=99) == pytest.approx(0.05 / (1 + 1e-3 * 10))
    net = _network(decay_step="update")
    assert _learning_rate(net, epoch=10, updates=99) == pytest.approx(0.05 / (1 + 1e-3 * 99))


def test_initialisations_follow_table_2_1() -> None:
    layers = (HiddenLayer(400, "tanh", "uniform"), HiddenLayer(400, "sigmoid", "normal"))
    network = Network(300, layers, 10, 0.0)
    network.initialise(torch.Generator().manual_seed(0))
    uniform = network.hidden[0].weight.detach().numpy()
    normal = network.hidden[1].weight.detach().numpy()
    assert (
        uniform.min() >= -1
        and uniform.max() <= 1
        and uniform.std() == pytest.approx(1 / np.sqrt(3), rel=0.02)
    )
    assert normal.std() == pytest.approx(1.0, rel=0.02) and np.abs(normal).max() > 3


def test_the_layer_flags_decide_the_architecture() -> None:
    space = load_space("ffnn_mrbi")
    config = {
        "learning_rate": 0.1,
        "decay": 1e-4,
        "input_dropout": 0.1,
        **{f"{name}_1": v for name, v in [("units", 30), ("activation", "tanh")]},
        "init_1": "normal",
        "dropout_1": 0.2,
        "layer_2": "True",
        "units_2": 40,
        "activation_2": "sigmoid",
        "init_2": "uniform",
        "dropout_2": 0.0,
        "layer_3": "False",
    }
    assert space.encode(config).shape == (17,)
    assert [layer.units for layer in hidden_layers(config)] == [30, 40]
    assert [layer.units for layer in hidden_layers({**config, "layer_2": "False"})] == [30]


def test_fit_and_predict_reports_the_epochs_spent(digits) -> None:
    X, y, Xv, yv = digits
    outcome = fit_and_predict(
        "ffnn",
        {**CONFIG, "patience": 1000},
        FitGuard(),
        X,
        y,
        [(Xv, yv)],
        seed=2,
        validation=(Xv, yv),
        epochs=6,
    )
    assert outcome.failure is None and outcome.resource_spent == 6.0
    assert outcome.errors[0] < 0.8  # better than chance (0.9)


def test_bad_settings_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="unknown ffnn setting.*valid: max_epochs"):
        check_learner_settings("ffnn", {"epochs": 3})
    with pytest.raises(ValueError, match="decay_step 'batch'; valid choices: epoch, update"):
        check_learner_settings("ffnn", {"decay_step": "batch"})
    with pytest.raises(ValueError, match="takes no settings"):
        check_learner_settings("svm_rbf", {"device": "cpu"})
    check_learner_settings("ffnn", {"device": "auto", "patience": "5"})


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_without_a_gpu_is_one_line() -> None:
    with pytest.raises(ValueError, match="device 'cuda' but PyTorch sees no GPU") as error:
        check_learner_settings("ffnn", {"device": "cuda"})
    assert "\n" not in str(error.value)


def test_settings_defaults_are_the_documented_ones() -> None:
    defaults = NetworkSettings()
    assert (defaults.batch_size, defaults.patience, defaults.decay_step) == (32, 20, "epoch")
    assert load_space("ffnn_mnist").learner_settings["max_epochs"] == 1000  # §2.1.1.2
    assert load_space("ffnn_mrbi").learner_settings["max_epochs"] == 2000
