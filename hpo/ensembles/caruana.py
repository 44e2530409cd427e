"""Post-hoc ensemble selection: forward greedy selection with replacement (Caruana et al. 2004;
thesis §4.2, §4.4) — what BO-post, RS-post and EO-post return.

The ensemble starts from the ``n_init`` models of lowest individual validation error (3 in the
thesis's experiments, §4.4.1: "initiated by picking the three best classifiers from the pool");
every further iteration adds, with replacement, the pool model that minimises the ensemble's
validation loss (zero-one by default, Eq. 4.2). The result is a multiset: each model's
multiplicity is its weight in the majority vote.

Settings and decisions (the thesis leaves them open; docs/ensembles.md):

* ``n_iterations`` = the number of members (with multiplicity) of the returned ensemble, the
  first ``n_init`` of which are the best models; default 100, the only number the thesis gives
  (CIFAR-10, Table 4.7 and Fig. 4.10, whose x-axis counts classifiers = iterations). The
  ensemble after the last iteration is returned (no best-prefix search, no bagging: bagging is
  used only for the illustration of Fig. 4.1);
* k-fold: each fold's ensemble loss uses that fold's models, and the criterion is the unweighted
  mean of the per-fold losses (the author's code; "over all the cross-validation folds", §4.4);
* ties (equal mean loss) go to the lower ``tie_loss`` of ``E ⊎ {h}`` (default ``"sqm"``, the
  squared-margin loss, which rewards a candidate right where the ensemble's margin is low), then
  to the model of lowest individual validation error, then to the earliest evaluated model
  (deterministic). ``tie_loss=None`` skips the first key (the author's order for EO's refill
  without its optimisation loss): on small validation sets the zero-one loss stops moving once
  the best model holds a majority of the votes, every tie goes to it again and the ensemble
  collapses to the best model (BO-post = BO-best); the thesis's post-hoc ensembles differ from
  their best model (Tables 4.4, 4.6), and EO's refill breaks the same ties by its own loss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hpo.ensembles.losses import FoldVotes, check_loss, loss_of_votes

DEFAULT_N_INIT = 3
DEFAULT_N_ITERATIONS = 100
DEFAULT_TIE_LOSS = "sqm"

Fold = tuple[np.ndarray, np.ndarray]  # (pool predictions (K, n_f), true labels (n_f,))


def individual_errors(folds: Sequence[Fold]) -> np.ndarray:
    """``(K,)`` mean over folds of each pool model's validation zero-one error."""
    return np.mean([np.mean(pool != labels, axis=1) for pool, labels in folds], axis=0)


def first_argmin(*keys: np.ndarray) -> int:
    """Index minimising ``keys[0]``, ties broken by the following keys, then by lowest index."""
    order = np.lexsort((np.arange(keys[0].size), *reversed(keys)))
    return int(order[0])


def forward_greedy(
    folds: Sequence[Fold],
    n_init: int = DEFAULT_N_INIT,
    n_iterations: int = DEFAULT_N_ITERATIONS,
    loss: str = "zero_one",
    tie_loss: str | None = DEFAULT_TIE_LOSS,
) -> np.ndarray:
    """``(K,)`` multiplicity of each pool model in the selected ensemble (sums to
    ``max(n_iterations, min(n_init, K))``).

    ``folds``: per fold, the pool's validation predictions ``(K, n_f)`` and the true labels.
    ``tie_loss``: the ensemble loss that breaks ties of ``loss`` (None: none, straight to the
    individual validation error).
    """
    check_loss(loss)
    if tie_loss is not None:
        check_loss(tie_loss)
    if not folds:
        raise ValueError("forward_greedy needs at least one fold")
    if n_init < 1 or n_iterations < 1:
        raise ValueError(f"n_init and n_iterations must be >= 1, got {n_init}, {n_iterations}")
    pools = [np.asarray(pool) for pool, _ in folds]
    n_models = pools[0].shape[0]
    if n_models == 0 or any(pool.shape[0] != n_models for pool in pools):
        raise ValueError("every fold needs predictions of the same, non-empty pool")
    individual = individual_errors(folds)
    multiplicity = np.zeros(n_models, dtype=np.int64)
    best = np.lexsort((np.arange(n_models), individual))[: min(n_init, n_models)]
    multiplicity[best] = 1
    votes = [FoldVotes(labels, pool, multiplicity) for pool, labels in folds]
    for _ in range(n_iterations - int(multiplicity.sum())):
        candidate_votes = [v.with_candidates(pool) for v, pool in zip(votes, pools, strict=True)]
        losses = np.mean([loss_of_votes(loss, c) for c in candidate_votes], axis=0)
        keys = [losses, individual]
        if tie_loss is not None:
            keys.insert(1, np.mean([loss_of_votes(tie_loss, c) for c in candidate_votes], axis=0))
        chosen = first_argmin(*keys)
        multiplicity[chosen] += 1
        votes = [v.plus(pool[chosen]) for v, pool in zip(votes, pools, strict=True)]
    return multiplicity
