"""One fit under the guard and its predictions on every evaluation set: :func:`fit_and_predict`.

Every outcome is stored as predictions, from which the zero-one errors are computed
(``float(np.mean(pred != y))``), so any loss (Chapter 4's ensemble losses included) can be
recomputed later. A fit that fails predicts :data:`FAILED_LABEL` everywhere, which no dataset
uses (labels are 0..C-1), so its zero-one error is exactly 1.0 on every non-empty set: a fit that
reaches the guard's limit under ``on_limit="error_one"``, or a learner that raises while fitting
or predicting (its exception is recorded in one line as ``FitOutcome.failure``).

Regression (float targets, :mod:`hpo.tasks`): losses are squared errors, predictions
floats, and a
failed fit predicts the mean of its training targets (the constant model) instead of a label.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from hpo.learners.guard import FitGuard
from hpo.learners.registry import (
    Value,
    factory_of,
    learner_gram_parameter,
    learner_parameters,
    make_estimator,
)
from hpo.learners.svm_rbf import rbf_predictor
from hpo.tasks import REGRESSION, mean_loss, task_of_targets

FAILED_LABEL = -1


class ConstantClassifier:
    """Predicts the single class seen in training (libsvm, liblinear and the discriminant
    analyses refuse one-class training sets; every learner gets this model for one). For
    regression, the single target value seen (a constant training target)."""

    def __init__(self, label: int | float) -> None:
        self.label = label

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(len(X), self.label)


@dataclass(frozen=True)
class FitOutcome:
    """One fitted model's predictions and zero-one errors on each evaluation set, with its cost.

    ``failure`` is ``"ExceptionType: message"`` when the learner raised (predictions are then
    :data:`FAILED_LABEL`); ``hit_limit`` says the fit reached the guard's iteration limit;
    ``constant`` that the training set had one class, so a :class:`ConstantClassifier` predicts it;
    ``breached`` that the fit was stopped at a time or memory limit
    (:mod:`hpo.evaluation.isolation`).
    ``probabilities`` (only when asked for, :func:`fit_and_predict`'s ``n_classes``): one
    ``(n, n_classes)`` array per evaluation set, the model's ``predict_proba`` where it has one,
    else the one-hot vectors of its predictions (seed 003 §3.2; a failed or breached fit's rows
    are zeros); ``gives_probabilities`` says which.
    """

    predictions: tuple[np.ndarray, ...]
    errors: tuple[float, ...]
    fit_seconds: float
    hit_limit: bool
    failure: str | None = None
    constant: bool = False
    resource_spent: float | None = None  # epochs a resumable learner trained (seed 002)
    # past a resource limit of hpo.evaluation.isolation (seed 004), never fitted
    breached: bool = False
    probabilities: tuple[np.ndarray, ...] | None = None
    gives_probabilities: bool = False


def one_hot(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """``(n, n_classes)`` one-hot rows of integer ``labels``; a label outside ``0..n_classes-1``
    (:data:`FAILED_LABEL`) gives a row of zeros."""
    labels = np.asarray(labels)
    return (labels[:, None] == np.arange(n_classes)[None, :]).astype(float)


def class_probabilities(model: object, X: np.ndarray, n_classes: int) -> np.ndarray:
    """``model.predict_proba(X)`` with its columns placed at the class labels they stand for
    (a training fold may miss classes: their columns are 0)."""
    full = np.zeros((len(X), n_classes))
    if len(X):
        full[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(X)
    return full


def zero_one_error(predictions: np.ndarray, y: np.ndarray) -> float:
    """The fraction of wrong predictions (the squared error for float targets,
    :mod:`hpo.tasks`);
    NaN for an empty set."""
    return mean_loss(predictions, y)


def failed_predictions(y_train: np.ndarray, n: int) -> np.ndarray:
    """What a failed fit predicts on ``n`` rows: :data:`FAILED_LABEL`, or for regression the
    training targets' mean."""
    if task_of_targets(y_train) == REGRESSION:
        return np.full(n, float(np.mean(y_train)) if len(y_train) else 0.0)
    return np.full(n, FAILED_LABEL)


def describe_failure(error: BaseException) -> str:
    """``"ExceptionType: message"`` on one line."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def fit_and_predict(
    learner: str,
    config: Mapping[str, Value],
    guard: FitGuard,
    X_train: np.ndarray,
    y_train: np.ndarray,
    eval_sets: Sequence[tuple[np.ndarray, np.ndarray]],
    seed: int = 0,
    train_gram: np.ndarray | None = None,
    validation: tuple[np.ndarray, np.ndarray] | None = None,
    epochs: float | None = None,
    checkpoint: str | None = None,
    n_classes: int | None = None,
) -> FitOutcome:
    """Fit ``learner`` at ``config`` on the training data; predict every evaluation set.

    ``train_gram``, the RBF kernel among the training rows at the configuration's width (a
    learner that declares ``gram_parameter``, :func:`hpo.learners.registry.register_learner`),
    makes the estimator fit it as a precomputed kernel. A learner that
    supports a resource (``supports_resource``, the seed-002 network) also gets ``validation``
    (its early-stopping set), ``epochs`` (train up to) and ``checkpoint`` (resume from, save
    to); ``resource_spent`` is then the epochs it trained. Other learners ignore the three.
    ``n_classes`` (labels ``0..n_classes-1``) asks for :attr:`FitOutcome.probabilities` too;
    without it nothing else is computed, so the predictions and errors are the same either way.
    """
    factory_of(learner)  # an unknown learner is a configuration error, raised, not a failure
    if train_gram is not None and learner_gram_parameter(learner) is None:
        raise ValueError(
            f"a precomputed Gram needs a learner that declares its kernel's width "
            f"(register_learner(gram_parameter=...)), not {learner!r}"
        )
    start = time.perf_counter()
    hit_limit, failure = False, None
    resumable = {"validation": validation, "epochs": epochs, "checkpoint": checkpoint}
    try:
        model, hit_limit = _fit(
            learner, config, guard, X_train, y_train, seed, train_gram, resumable
        )
    except Exception as error:  # a learner's failure is a result, recorded, not a crash
        model, failure = None, describe_failure(error)
    fit_seconds = time.perf_counter() - start
    predictions = None
    if model is not None and not (hit_limit and guard.on_limit == "error_one"):
        try:
            predict = rbf_predictor(model, X_train, learner_parameters(learner, config))
            predict = predict or model.predict
            predictions = tuple(_predict_set(predict, X) for X, _ in eval_sets)
        except Exception as error:
            failure = describe_failure(error)
    if predictions is None:
        predictions = tuple(failed_predictions(y_train, len(y)) for _, y in eval_sets)
    errors = tuple(zero_one_error(p, y) for p, (_, y) in zip(predictions, eval_sets, strict=True))
    constant = isinstance(model, ConstantClassifier)
    spent = getattr(model, "epochs_run_", None)
    spent = None if spent is None else float(spent)
    outcome = FitOutcome(predictions, errors, fit_seconds, hit_limit, failure, constant, spent)
    if n_classes is None:
        return outcome
    return _with_probabilities(outcome, model, [X for X, _ in eval_sets], n_classes)


def _with_probabilities(
    outcome: FitOutcome, model: object, X_sets: Sequence[np.ndarray], n_classes: int
) -> FitOutcome:
    """``outcome`` with each set's class probabilities: ``predict_proba`` where the model gives
    them and predicted (not a failure, not a fit stopped at the guard's limit under
    ``error_one``), else the one-hot vectors of the stored predictions."""
    predicted = outcome.failure is None and not np.any(outcome.predictions[0] == FAILED_LABEL)
    if predicted and hasattr(model, "predict_proba"):
        try:
            probabilities = tuple(class_probabilities(model, X, n_classes) for X in X_sets)
        except Exception:  # e.g. a probability model that cannot be built: one-hot instead
            probabilities = None
        if probabilities is not None:
            return dataclasses.replace(
                outcome, probabilities=probabilities, gives_probabilities=True
            )
    return dataclasses.replace(
        outcome, probabilities=tuple(one_hot(p, n_classes) for p in outcome.predictions)
    )


def _fit(
    learner: str,
    config: Mapping[str, Value],
    guard: FitGuard,
    X_train: np.ndarray,
    y_train: np.ndarray,
    seed: int,
    train_gram: np.ndarray | None,
    resumable: Mapping[str, object] | None = None,
) -> tuple[object, bool]:
    """The fitted model and whether the fit reached the guard's iteration limit."""
    if np.unique(y_train).size < 2:
        constant = y_train[0] if task_of_targets(y_train) == REGRESSION else int(y_train[0])
        return ConstantClassifier(constant), False
    model = make_estimator(learner, config, guard, seed, n_train=len(y_train))
    fit_input = X_train
    if train_gram is not None:
        model.set_params(kernel="precomputed")
        fit_input = train_gram
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if getattr(model, "supports_resource", False):
            model.fit(fit_input, y_train, **(resumable or {}))
        else:
            model.fit(fit_input, y_train)
    return model, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def _predict_set(predict: Callable[[np.ndarray], np.ndarray], X: np.ndarray) -> np.ndarray:
    if len(X) == 0:
        return np.empty(0, dtype=np.int64)
    return np.asarray(predict(X))
