"""Seed 003's sampling optimisers (Bermúdez-Chacón 2014, §3.4): hierarchical random search from
the per-context priors, and the parametric-density sampler with its uniform fallback.

* :class:`PriorRandomSearch` (family ``prior_rs``) — §3.4(a): every configuration drawn top-down
  from the tree (§3.1.3): each categorical from its weights, each numeric leaf from its prior in
  the context of the categoricals drawn above it (:meth:`hpo.space.priors.PriorSpace.sample`); no
  history is kept. Without priors it draws as :meth:`hpo.space.search_space.Space.sample` (uniform).
* :class:`ParametricDensity` (family ``pds``) — §3.4(c): draws from the (learned, Chapter 4)
  priors while this dataset's evaluations fit them, else uniformly. The seed names no fit test
  and no threshold [decision, docs/hierarchical.md]: after ``min_evaluations`` evaluations, the fit
  is Spearman's rank correlation between the prior's log-density of each evaluated configuration
  and its score (``−loss``): a prior that suits the dataset gives its dense regions the better
  scores. Below ``fit_threshold`` (default 0: the prior is no better than uninformative) the next
  configuration is drawn uniformly; the test is repeated before every draw, so sampling returns
  to the prior when the fit recovers. ``priors`` (a prior file's mapping, e.g. one written by
  :func:`hpo.space.prior_files.prior_file` from learned mixtures) replaces the space's own priors.

Both propose configurations (virtual parameters included; the runner removes them before the
learner is built, §3.1.2) and keep their unit-cube encodings as ``X`` like every optimizer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from hpo.optimizers.base import Optimizer, PriorConsumer, Proposal
from hpo.space.prior_files import with_priors
from hpo.space.priors import PriorSpace
from hpo.space.search_space import Space

FIT_THRESHOLD = 0.0  # [decision] Spearman's rho between log prior density and score
MIN_EVALUATIONS = 10  # [decision] evaluations before the fit is first tested


class PriorRandomSearch(Optimizer, PriorConsumer):
    """Top-down sampling from the space's priors (seed 003 §3.4(a), §3.1.3)."""

    def __init__(self, space: Space, budget: int, rng: np.random.Generator) -> None:
        super().__init__(space, budget, rng)
        self.prior_space = PriorSpace(space)

    def use_priors(self, prior_space: PriorSpace) -> None:
        if prior_space.space != self.space:
            raise ValueError(
                f"the priors are for space {prior_space.name!r}, not {self.space.name!r}"
            )
        self.prior_space = prior_space

    def draw(self) -> dict[str, Any]:
        """The next configuration."""
        return self.prior_space.sample(self.rng)

    def ask(self) -> Proposal:
        return Proposal(u=None, config=self.draw(), batch=len(self.y) + 1)

    def tell(self, proposal: Proposal, loss: float) -> None:
        self.X.append(self.space.encode(proposal.config))
        self.y.append(float(loss))


class ParametricDensity(PriorRandomSearch):
    """Draws from the priors while the evaluations fit them, else uniformly (seed 003 §3.4(c))."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        fit_threshold: float = FIT_THRESHOLD,
        min_evaluations: int = MIN_EVALUATIONS,
        priors: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(space, budget, rng)
        if not -1.0 <= fit_threshold <= 1.0:
            raise ValueError(f"fit_threshold={fit_threshold} must be in [-1, 1]")
        if min_evaluations < 3:
            raise ValueError(f"min_evaluations={min_evaluations} must be >= 3")
        self.fit_threshold = float(fit_threshold)
        self.min_evaluations = int(min_evaluations)
        self.priors = priors
        if priors is not None:  # a bad prior file is refused when the optimizer is built
            self.prior_space = with_priors(self.prior_space, priors)
        self.log_densities: list[float] = []
        self.sources: list[str] = []  # "prior" or "uniform", per proposal

    def use_priors(self, prior_space: PriorSpace) -> None:
        super().use_priors(prior_space)
        if self.priors is not None:
            self.prior_space = with_priors(prior_space, self.priors)

    def fit(self) -> float:
        """Spearman's rho between the log prior density of the evaluated configurations and
        their scores; NaN before ``min_evaluations`` or when either is constant."""
        if len(self.y) < self.min_evaluations:
            return math.nan
        density, score = np.array(self.log_densities), -np.array(self.y)
        finite = np.isfinite(density) & np.isfinite(score)
        if finite.sum() < 3 or np.ptp(density[finite]) == 0 or np.ptp(score[finite]) == 0:
            return math.nan
        return float(stats.spearmanr(density[finite], score[finite]).statistic)

    def draw(self) -> dict[str, Any]:
        fit = self.fit()
        if not math.isnan(fit) and fit < self.fit_threshold:
            self.sources.append("uniform")
            return self.space.sample(self.rng)
        self.sources.append("prior")
        return self.prior_space.sample(self.rng)

    def tell(self, proposal: Proposal, loss: float) -> None:
        super().tell(proposal, loss)
        self.log_densities.append(self.prior_space.log_density(proposal.config))
