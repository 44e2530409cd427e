"""The ESMBO paper's multilayer perceptron (UAI 2014, §6.1): two tanh hidden layers, a softmax
output, the negative log-likelihood, one L2 weight per layer, trained by L-BFGS.

scikit-learn's ``MLPClassifier`` has a single L2 weight (``alpha``) for all layers, so this is a
small numpy model fitted with ``scipy.optimize.minimize(method="L-BFGS-B")`` (no bounds, so plain
L-BFGS). The objective is

``J(θ) = (1/n) Σ_i −log softmax(f_θ(x_i))[y_i] + Σ_{l=1..3} λ_l ‖W_l‖²_F``

with ``f_θ(x) = W_3ᵀ tanh(W_2ᵀ tanh(W_1ᵀ x + b_1) + b_2) + b_3``; biases are not penalised. The
paper gives neither the normalisation of the two terms, the initialisation nor the number of
L-BFGS iterations: [decide] mean NLL plus unhalved penalties; Glorot-uniform weights and zero
biases drawn from the learner's seed; at most :data:`DEFAULT_MAX_ITER` iterations (reaching it is
a normal end of training, not a guard hit). BLAS runs on one thread during a fit (the products
are small: threads only contend, 30 s instead of 0.2 s for a 100 × 100 network on a busy
2-core machine).

Learner ``mlp`` (configuration ``l2_1, l2_2, l2_3, hidden_1, hidden_2``); :func:`objective` is the
value and gradient (tested against finite differences).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from hpo.learners.guard import FitGuard
from hpo.learners.registry import Value, register_learner

DEFAULT_MAX_ITER = 200  # [decide] L-BFGS iterations per fit


def layer_shapes(n_inputs: int, hidden: tuple[int, int], n_outputs: int) -> list[tuple[int, int]]:
    """``(fan_in, fan_out)`` of the three weight matrices."""
    sizes = [n_inputs, *hidden, n_outputs]
    return [(sizes[i], sizes[i + 1]) for i in range(3)]


def unpack(theta: np.ndarray, shapes: list[tuple[int, int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(W_l, b_l)]`` views of the flat parameter vector (weights then bias, layer by layer)."""
    layers, start = [], 0
    for fan_in, fan_out in shapes:
        weights = theta[start : start + fan_in * fan_out].reshape(fan_in, fan_out)
        start += fan_in * fan_out
        layers.append((weights, theta[start : start + fan_out]))
        start += fan_out
    return layers


def _forward(
    layers: list[tuple[np.ndarray, np.ndarray]], X: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray]:
    activations = [X]
    for weights, bias in layers[:-1]:
        activations.append(np.tanh(activations[-1] @ weights + bias))
    weights, bias = layers[-1]
    return activations, activations[-1] @ weights + bias


def objective(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    shapes: list[tuple[int, int]],
    l2: tuple[float, float, float],
) -> tuple[float, np.ndarray]:
    """``(J(θ), ∇J(θ))`` for class indices ``y`` in ``0..K-1`` (module docstring)."""
    layers = unpack(theta, shapes)
    activations, logits = _forward(layers, X)
    logits = logits - logits.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(logits).sum(axis=1))
    n = len(y)
    rows = np.arange(n)
    value = float(np.mean(log_norm - logits[rows, y]))
    delta = np.exp(logits - log_norm[:, None])
    delta[rows, y] -= 1.0
    delta /= n
    gradients: list[np.ndarray] = []
    for index in range(2, -1, -1):
        weights, _ = layers[index]
        value += l2[index] * float(np.sum(weights**2))
        grad_w = activations[index].T @ delta + 2.0 * l2[index] * weights
        gradients = [grad_w.ravel(), delta.sum(axis=0), *gradients]
        if index:
            delta = (delta @ weights.T) * (1.0 - activations[index] ** 2)
    return value, np.concatenate(gradients)


class PerLayerL2MLP:
    """Two tanh hidden layers, softmax output, one L2 weight per layer, fitted by L-BFGS."""

    def __init__(
        self,
        l2: tuple[float, float, float],
        hidden: tuple[int, int],
        random_state: int = 0,
        max_iter: int = DEFAULT_MAX_ITER,
    ) -> None:
        self.l2 = tuple(float(v) for v in l2)
        self.hidden = (int(hidden[0]), int(hidden[1]))
        self.random_state = random_state
        self.max_iter = max_iter

    def initial_parameters(self, shapes: list[tuple[int, int]]) -> np.ndarray:
        """Glorot-uniform weights, zero biases, from ``random_state``."""
        rng = np.random.default_rng(self.random_state)
        parts = []
        for fan_in, fan_out in shapes:
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            parts += [rng.uniform(-bound, bound, fan_in * fan_out), np.zeros(fan_out)]
        return np.concatenate(parts)

    def fit(self, X: np.ndarray, y: np.ndarray) -> PerLayerL2MLP:
        self.classes_, indices = np.unique(y, return_inverse=True)
        self.shapes_ = layer_shapes(X.shape[1], self.hidden, len(self.classes_))
        with threadpool_limits(limits=1, user_api="blas"):  # small products: one thread
            result = minimize(
                objective,
                self.initial_parameters(self.shapes_),
                args=(np.asarray(X, dtype=float), indices, self.shapes_, self.l2),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.max_iter},
            )
        self.theta_ = result.x
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        with threadpool_limits(limits=1, user_api="blas"):
            _, logits = _forward(unpack(self.theta_, self.shapes_), np.asarray(X, dtype=float))
        return self.classes_[np.argmax(logits, axis=1)]


@register_learner("mlp")
def mlp(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> PerLayerL2MLP:
    """The per-layer-L2 MLP at ``l2_1, l2_2, l2_3, hidden_1, hidden_2``."""
    l2 = (float(config["l2_1"]), float(config["l2_2"]), float(config["l2_3"]))
    hidden = (int(config["hidden_1"]), int(config["hidden_2"]))
    return PerLayerL2MLP(l2, hidden, random_state=seed)
