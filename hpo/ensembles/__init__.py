"""Ensembles of classifiers (thesis Chapter 4).

* :mod:`hpo.ensembles.vote` — the (weighted) majority vote that scores a choice of several
  members on the test split (``majority_vote``, ``vote_counts``, ``TIE_RULES``);
* :mod:`hpo.ensembles.losses` — margins (Eqs 4.5-4.6) and the ensemble losses of §4.3
  (zero-one, margin, squared margin, adapted C-bound, sigmoid), vectorised over candidate members;
* :mod:`hpo.ensembles.caruana` — post-hoc forward greedy selection with replacement
  (Caruana et al. 2004; thesis §4.2, §4.4), k-fold aware;
* :mod:`hpo.ensembles.pool` — the pool of evaluated models as per-fold validation predictions;
* :mod:`hpo.rules.ensemble` — Chapter 4's selection rules: post-hoc (Caruana) and EO's ensemble;
* :mod:`hpo.ensembles.agnostic_bayes` — agnostic Bayes over the pool (Lacoste et al. 2014): the
  bootstrap posterior, the ensemble's prediction and the ``agnostic_bayes`` rule of ESMBO and ERS.

The two rule modules are imported by their full path (they build on
:mod:`hpo.rules.final_selection`); this
package's namespace holds the votes, losses and selection that everything else uses.
"""

from hpo.ensembles.caruana import forward_greedy
from hpo.ensembles.losses import (
    LOSSES,
    FoldVotes,
    candidate_losses,
    cbound_loss,
    ensemble_loss,
    margin_loss,
    margins,
    sigmoid_loss,
    sigmoid_scale,
    squared_margin_loss,
    zero_one_loss,
)
from hpo.ensembles.pool import PredictionPool
from hpo.ensembles.vote import TIE_RULES, majority_vote, vote_counts

__all__ = [
    "LOSSES",
    "TIE_RULES",
    "FoldVotes",
    "PredictionPool",
    "candidate_losses",
    "cbound_loss",
    "ensemble_loss",
    "forward_greedy",
    "majority_vote",
    "margin_loss",
    "margins",
    "sigmoid_loss",
    "sigmoid_scale",
    "squared_margin_loss",
    "vote_counts",
    "zero_one_loss",
]
