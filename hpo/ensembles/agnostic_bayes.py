"""Agnostic Bayes over a finite pool of models, by bootstrapping the validation examples.

References: A. Lacoste, M. Marchand, F. Laviolette, H. Larochelle, "Agnostic Bayesian learning of
ensembles", ICML 2014 (the posterior over which model has the lowest true risk, and its bootstrap
estimate); A. Lacoste, H. Larochelle, M. Marchand, F. Laviolette, "Sequential model-based ensemble
optimization", UAI 2014 (ESMBO/ERS, which use it; :mod:`hpo.optimizers.esmbo`). See docs/esmbo.md.

This module owns:

* the bootstrap matrix (:func:`bootstrap_counts`): ``N`` resamples of the ``m`` validation
  examples, each drawn with replacement ``k = round(essr * m)`` times and stored as integer counts
  ``(N, m)``; ``essr`` (effective sample size ratio, in (0, 1], default 1.0 = the standard
  bootstrap) is the authors' code's setting, of which the paper does not give the value used;
* bootstrap risks (:func:`bootstrap_risks`): one matrix product ``counts @ losses / k`` over all
  models and bootstraps. The counts are integers, so equal sums of zero-one losses are exactly
  equal and ties are detected without a tolerance;
* the posterior (:func:`posterior_from_risks`): the share of bootstraps each model wins, a
  bootstrap's argmin shared equally among the models tied at its minimum;
* the ensemble (:func:`ensemble_predict`): the posterior-weighted majority vote for classification
  (:func:`hpo.ensembles.majority_vote`), the weighted mean for regression (the mode of a normal
  fitted to the members' predictions, ICML 2014 / UAI 2014 §3);
* per-example validation losses of a model (:func:`example_losses`) and of a pool
  (:func:`pool_losses`, on :class:`hpo.ensembles.PredictionPool`): out-of-fold zero-one losses
  (squared errors for regression, :mod:`hpo.tasks`) in fold order, so hold-out and k-fold
  runs share one definition.

The anytime selection rule that reads this posterior after every evaluation (ESMBO's output on
an ``esmbo`` run, ERS's on a random-search run) is :mod:`hpo.rules.agnostic_bayes`.

The bootstrap stream of a run is derived from the optimizer's seed sequence with a fixed key
(:func:`bootstrap_rng`), without drawing from the optimizer's stream: the rule and the ESMBO
optimizer of one run build the same matrix, and adding the rule changes no proposal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from hpo.ensembles.pool import PredictionPool
from hpo.ensembles.vote import majority_vote
from hpo.records import FoldPredictions
from hpo.tasks import example_losses as task_losses

AGNOSTIC_BAYES = "agnostic_bayes"
TASKS = ("classification", "regression")
BOOTSTRAP_KEY = 0xB007  # spawn-key suffix of the run's bootstrap stream


def check_essr(essr: float) -> float:
    """``essr`` as a float, refused outside (0, 1] with one line naming it."""
    if not 0.0 < essr <= 1.0:
        raise ValueError(f"essr must be in (0, 1], got {essr}")
    return float(essr)


def check_n_bootstraps(n_bootstraps: int) -> int:
    """``n_bootstraps`` refused below 1 with one line naming it."""
    if int(n_bootstraps) != n_bootstraps or n_bootstraps < 1:
        raise ValueError(f"the number of bootstraps N must be an integer >= 1, got {n_bootstraps}")
    return int(n_bootstraps)


def bootstrap_seed(rng: np.random.Generator) -> np.random.SeedSequence:
    """The seed of a run's bootstrap stream: ``rng``'s seed sequence with :data:`BOOTSTRAP_KEY`
    appended to its spawn key. ``rng``'s own stream is neither read nor advanced."""
    seq = rng.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):
        raise ValueError("the optimizer's generator has no SeedSequence to derive a stream from")
    return np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, BOOTSTRAP_KEY))


def bootstrap_rng(rng: np.random.Generator) -> np.random.Generator:
    """A fresh generator of the run's bootstrap stream (:func:`bootstrap_seed`)."""
    return np.random.default_rng(bootstrap_seed(rng))


def bootstrap_counts(
    rng: np.random.Generator, n_examples: int, n_bootstraps: int, essr: float = 1.0
) -> np.ndarray:
    """``(n_bootstraps, n_examples)`` integer counts: row ``j`` is how often each validation
    example is drawn in bootstrap ``j`` (``round(essr * n_examples)`` draws with replacement,
    at least one). The authors' ``build_bootstrap_matrix`` divides these by the number of draws."""
    essr = check_essr(essr)
    n_bootstraps = check_n_bootstraps(n_bootstraps)
    if n_examples < 1:
        raise ValueError(f"need at least one validation example, got {n_examples}")
    size = max(1, round(essr * n_examples))
    draws = rng.integers(0, n_examples, size=(n_bootstraps, size))
    counts = np.zeros((n_bootstraps, n_examples), dtype=np.int64)
    np.add.at(counts, (np.arange(n_bootstraps)[:, None], draws), 1)
    return counts


def bootstrap_risks(counts: np.ndarray, losses: ArrayLike) -> np.ndarray:
    """``(N, n_models)`` risks on each bootstrap of per-example ``losses`` ``(m, n_models)`` (or
    ``(m,)`` for one model, giving ``(N,)``): one product ``counts @ losses / draws``."""
    counts = np.asarray(counts)
    values = np.asarray(losses, dtype=float)
    if values.shape[0] != counts.shape[1]:
        raise ValueError(
            f"losses have {values.shape[0]} examples, the bootstraps {counts.shape[1]}"
        )
    return (counts @ values) / counts[0].sum()


def bootstrap_wins(risks: ArrayLike) -> np.ndarray:
    """``(n_models,)`` number of bootstraps (rows of ``risks``, ``(N, n_models)``) each model
    wins; a bootstrap whose minimum is tied gives each tied model ``1 / #ties``. Sums to ``N``."""
    values = np.asarray(risks, dtype=float)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(
            f"risks must be a non-empty (bootstraps, models) array, got {values.shape}"
        )
    winners = values == values.min(axis=1, keepdims=True)
    return (winners / winners.sum(axis=1, keepdims=True)).sum(axis=0)


def posterior_from_risks(risks: ArrayLike) -> np.ndarray:
    """``(n_models,)`` the share of bootstraps each model wins (:func:`bootstrap_wins` / N)."""
    return bootstrap_wins(risks) / np.shape(risks)[0]


def agnostic_bayes_posterior(losses: ArrayLike, counts: np.ndarray) -> np.ndarray:
    """The posterior over ``n_models`` models from per-example ``losses`` ``(m, n_models)``."""
    return posterior_from_risks(bootstrap_risks(counts, losses))


def ensemble_predict(
    predictions: ArrayLike,
    posterior: ArrayLike,
    task: str = "classification",
    ties: str = "lowest",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The agnostic-Bayes ensemble's prediction from ``(n_models, n)`` member predictions:
    the ``posterior``-weighted majority vote (labels; ``ties`` as :func:`majority_vote`) or, for
    ``task="regression"``, the ``posterior``-weighted mean."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid choices: {', '.join(TASKS)}")
    weights = np.asarray(posterior, dtype=float)
    if task == "classification":
        return majority_vote(predictions, weights, ties, rng)
    values = np.asarray(predictions, dtype=float)
    if values.ndim != 2 or weights.shape != (values.shape[0],) or np.any(weights < 0):
        raise ValueError(
            f"need (models, examples) predictions and one non-negative weight per model, got "
            f"{values.shape} and {weights.shape}"
        )
    return weights @ values / weights.sum()


def example_losses(folds: Sequence[FoldPredictions]) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, losses)``: the validation rows of all folds and the model's zero-one loss on each
    (squared error for regression targets, :mod:`hpo.tasks`) (its out-of-fold
    prediction; a
    failed fit's label -1 counts as an error), in fold order — the
    order of :func:`pool_losses`, so one model's losses line up with a pool's."""
    rows = np.concatenate([f.valid_rows for f in folds])
    losses = np.concatenate([task_losses(f.valid, f.valid_labels) for f in folds])
    return rows, losses


def pool_losses(predictions: Sequence[Sequence[FoldPredictions]]) -> np.ndarray:
    """``(m, n_models)`` per-example zero-one (or squared) losses of a pool, in fold order. The
    pool is a :class:`~hpo.ensembles.PredictionPool`, which refuses models validated on other
    folds."""
    if not predictions:
        raise ValueError("agnostic Bayes needs at least one model's predictions")
    folds = PredictionPool.of(predictions).folds()
    return np.concatenate([task_losses(votes, labels).T for votes, labels in folds])
