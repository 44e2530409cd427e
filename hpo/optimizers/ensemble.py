"""Ensemble optimization, EO (thesis Alg. 4.1, §4.3-4.4): Bayesian optimisation
of the next member of a fixed-size ensemble, one slot at a time.

The ensemble has ``ensemble_size`` slots (m = 12 in the thesis's UCI experiments, §4.4.1),
visited round robin (Eq. 4.4): iteration ``i`` (1-based) works on slot ``(i − 1) mod m``.

1. ``E_i`` = the ensemble without the model in slot ``j`` (the printed ``E \\ {h_i}`` is a typo
   for the slot's model);
2. every pool model not in ``E_i`` (no duplicates: "without replacement") is re-scored as
   ``L(E_i ∪ {h}, D_V | loss)`` (mean of per-fold losses), an exact observation of
   ``f(γ_h | E_i)`` (Eq. 4.3);
3. a Matérn-5/2 GP with Spearmint's priors is fitted to those values by slice sampling, on the
   losses times ``loss_scale`` (``hyper_chain``: one chain per slot, continued when the round
   robin comes back to it, by default; ``"restart"`` = the thesis's Spearmint initial state and
   a new burn-in every iteration, §4.4.1; ``"continue"`` = one chain as GP-EI) — and the next
   point maximises the sample-averaged EI (``f_best`` = the lowest re-scored loss) on the Sobol
   grid + L-BFGS-B (:class:`~hpo.gp.acquisition_optimizers.GridLBFGS`) or with GP-EI's other
   acquisition optimizers (Chapter 5's local search in the scikit-learn space);
   while fewer than 2 pool models are outside ``E_i`` the point is random (uniform in the cube,
   or a random valid configuration, as Spearmint before 2 results): with the slots filling one
   per iteration, that is the first ``m + 1`` iterations;
4. once the model is evaluated (its fold predictions arrive through :meth:`observe_predictions`,
   then :meth:`tell`), slot ``j`` takes the pool model not in ``E_i`` that minimises the
   ensemble's zero-one loss (the thesis's line 11; the author's code uses ``loss``) [decide]:
   ties go to the lower ``loss``, then the lower individual validation error, then
   the earliest model (deterministic; the author's code breaks the last tie at random).

Failed fits stay in the pool: their predictions (``FAILED_LABEL``) abstain in the vote and count
as wrong in the margins (:mod:`hpo.ensembles.losses`); the author's code instead feeds the GP
their single-model loss [decide].
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from hpo.ensembles.caruana import first_argmin
from hpo.ensembles.losses import check_loss
from hpo.ensembles.pool import PredictionPool, Votes, mean_loss, stack_votes
from hpo.gp.acquisition import ExpectedImprovement, single_threaded_blas
from hpo.gp.model import make_posterior
from hpo.gp.slice_sampler import HyperChain
from hpo.gp.stack import build_gp_stack, check_choice
from hpo.optimizers.base import EnsembleProvider, Optimizer, PredictionsConsumer, Proposal
from hpo.space.search_space import Space

if TYPE_CHECKING:
    from hpo.records import FoldPredictions

EO_LOSSES = ("zero_one", "sqm", "cbound", "sigmoid")  # the margin loss cannot optimise (§4.3.1)
MEMBER_LOSS = "zero_one"  # what fills a slot (Alg. 4.1 line 11)
N_GP_POINTS = 2  # fewer observations than this: no GP (Spearmint)
HYPER_CHAINS = ("per_slot", "restart", "continue")
INITIAL_DESIGNS = ("random", "random_valid")


class EnsembleOptimizer(Optimizer, PredictionsConsumer, EnsembleProvider):
    """EO with settings:

    * ``loss``: the ensemble loss the GP models, one of :data:`EO_LOSSES`; default ``"sqm"``
      (the thesis's EO and EO-post in the SVM space; EO-C = ``"cbound"``, EO-sig = ``"sigmoid"``,
      thesis §4.4.1-4.4.2);
    * ``ensemble_size``: m, the number of slots (12, thesis §4.4.1), at least 2;
    * ``hyper_chain``: how the GP hyperparameter chain follows the changing objective:
      ``"per_slot"`` (default) one chain per slot, started from Spearmint's initial state with
      ``burnin`` transitions the first time the slot is optimised and continued (mean clipped
      into the new losses' range) each time the round robin comes back to it — the author's
      code restarts the chooser only "if the last iteration wasn't on the same classifier";
      ``"restart"``: Spearmint's initial state and ``burnin`` transitions every iteration (the
      thesis, §4.4.1, and the author's sequential runs: 5-6 times a GP-EI step); ``"continue"``:
      one chain for all slots, as GP-EI;
    * ``loss_scale``: the re-scored losses are multiplied by it before the GP sees them (50: the
      author's ``func_scale``, "so that the noise of the GP is better fit"; the thesis is silent)
      [decide]: ensemble losses of a pool differ by ~1e-3, far below the scale Spearmint's priors
      (horseshoe 0.1 on the noise, log-normal(1) on the amplitude) are made for; unscaled, the
      GP explains them as noise and EI is nearly flat (and 3-6 times slower to maximise);
    * the GP settings of :class:`~hpo.optimizers.bayes.GPEIOptimizer`, same defaults
      (``kernel``, ``n_samples``, ``burnin``, ``grid_size``, ``grid_seed``, ``n_refine``,
      ``n_jitter``, ``noise_scale``, ``amp2_scale``, ``max_ls``, ``priors``,
      ``acquisition_optimizer``, ``n_candidates``, ``ls_step``, ``ls_restarts``,
      ``ls_best_observed``, ``ls_max_iter``, ``impute``); ``initial_design``: the random points
      before the GP, ``"random"`` (uniform in the cube) or ``"random_valid"`` (random valid
      configurations, inactive dimensions imputed unless ``impute=False``: Chapter 5's).

    ``timings`` holds the seconds of the last ``ask`` (``rescore``, ``sampling``,
    ``acquisition``) and ``tell`` (``refill``). ``Proposal.batch`` is the 1-based iteration.
    """

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        loss: str = "sqm",
        ensemble_size: int = 12,
        hyper_chain: str = "per_slot",
        loss_scale: float = 50.0,
        kernel: str = "matern52",
        n_samples: int = 10,
        burnin: int = 100,
        grid_size: int = 20000,
        grid_seed: int = 1,
        n_refine: int = 20,
        n_jitter: int = 10,
        noise_scale: float = 0.1,
        amp2_scale: float = 1.0,
        max_ls: float = 2.0,
        priors: str = "spearmint",
        acquisition_optimizer: str = "grid_lbfgs",
        n_candidates: int = 1000,
        ls_step: float = 0.1,
        ls_restarts: int = 10,
        ls_best_observed: int = 5,
        ls_max_iter: int = 50,
        impute: bool = True,
        initial_design: str = "random",
    ) -> None:
        super().__init__(space, budget, rng)
        check_loss(loss, EO_LOSSES)
        if not isinstance(ensemble_size, int) or ensemble_size < 2:
            raise ValueError(f"ensemble_size must be an integer >= 2, got {ensemble_size!r}")
        if not loss_scale > 0:
            raise ValueError(f"loss_scale must be > 0, got {loss_scale!r}")
        check_choice("hyper_chain", hyper_chain, HYPER_CHAINS)
        check_choice("initial_design", initial_design, INITIAL_DESIGNS)
        stack = build_gp_stack(
            space, kernel, n_samples, burnin, grid_size, grid_seed, n_refine, n_jitter,
            noise_scale, amp2_scale, max_ls, priors, acquisition_optimizer, n_candidates,
            ls_step, ls_restarts, ls_best_observed, ls_max_iter, impute,
        )  # fmt: skip
        self.kernel, self.chain, self.sampler = stack.kernel, stack.chain, stack.sampler
        self.acquisition_optimizer = stack.acquisition_optimizer
        self.loss = loss
        self.hyper_chain = hyper_chain
        self.initial_design = initial_design
        self.loss_scale = float(loss_scale)
        self.slots: list[int | None] = [None] * ensemble_size  # 0-based pool indices
        self.pool = PredictionPool()
        # per_slot: one chain per slot (copies of the fresh chain above)
        self.chains = [self.chain.copy() for _ in range(ensemble_size)]
        self.n_samples = n_samples
        self.timings: dict[str, float] = {}
        self._scored: tuple[int, list[Votes]] | None = None  # (n, votes) of the last ask

    @property
    def ensemble_size(self) -> int:
        return len(self.slots)

    def slot(self, n_evaluated: int) -> int:
        """The slot of the iteration after ``n_evaluated`` evaluations (round robin, Eq. 4.4)."""
        return n_evaluated % self.ensemble_size

    def ensemble_without(self, slot: int) -> list[int]:
        """``E_i``: the pool indices in every slot but ``slot``."""
        return [h for s, h in enumerate(self.slots) if s != slot and h is not None]

    def outside(self, ensemble: Sequence[int], n_models: int) -> list[int]:
        """The pool models (among the first ``n_models``) not in ``ensemble``."""
        members = set(ensemble)
        return [h for h in range(n_models) if h not in members]

    def current_ensemble(self) -> tuple[int, ...]:
        return tuple(h + 1 for h in self.slots if h is not None)

    def ask(self) -> Proposal:
        with single_threaded_blas():
            return self._ask()

    def _ask(self) -> Proposal:
        n = len(self.y)
        ensemble = self.ensemble_without(self.slot(n))
        candidates = self.outside(ensemble, n)
        if len(candidates) < N_GP_POINTS:
            self.timings = {}
            if self.initial_design == "random":
                u = self.rng.uniform(size=self.space.dim)
            else:
                u = self.sampler(self.rng, 1)[0]
            return Proposal(u=u, batch=n + 1)
        started = time.perf_counter()
        votes = self.pool.candidate_votes(ensemble, candidates)
        self._scored = (n, votes)
        y = mean_loss(votes, self.loss) * self.loss_scale
        rescored = time.perf_counter()
        X = np.array(self.X)[candidates]
        hypers = self._chain(self.slot(n), y).sample(X, y, self.n_samples, self.rng)
        sampled = time.perf_counter()
        acquisition = ExpectedImprovement(make_posterior(self.kernel, X, y, hypers), best_f=y.min())
        incumbent = X[int(np.argmin(y))]
        u = self.acquisition_optimizer.maximize(acquisition, np.array(self.X), incumbent, self.rng)
        self.timings = {
            "rescore": rescored - started,
            "sampling": sampled - rescored,
            "acquisition": time.perf_counter() - sampled,
        }
        return Proposal(u=u, batch=n + 1)

    def _chain(self, slot: int, y: np.ndarray) -> HyperChain:
        """The chain that samples this iteration's hyperparameters (``hyper_chain``); a state
        carried over has its constant mean clipped into the range of the new losses (the
        mean's prior support)."""
        chain = self.chains[slot] if self.hyper_chain == "per_slot" else self.chain
        if self.hyper_chain == "restart":
            chain.state = None  # Spearmint's initial state, then a new burn-in
        elif chain.state is not None:
            mean = np.clip(chain.state.mean, y.min(), y.max())
            chain.state = replace(chain.state, mean=mean)
        return chain

    def observe_predictions(self, proposal: Proposal, folds: tuple[FoldPredictions, ...]) -> None:
        if len(self.pool) != len(self.y):
            raise RuntimeError("observe_predictions called twice before tell")
        self.pool.add(folds)

    def tell(self, proposal: Proposal, loss: float) -> None:
        n = len(self.y)
        if len(self.pool) != n + 1:
            raise RuntimeError("EO needs the model's predictions (observe_predictions) before tell")
        super().tell(proposal, loss)
        started = time.perf_counter()
        slot = self.slot(n)
        ensemble = self.ensemble_without(slot)
        candidates = self.outside(ensemble, n + 1)
        if self._scored is not None and self._scored[0] == n:  # ask scored all but the new model
            votes = stack_votes(self._scored[1], self.pool.candidate_votes(ensemble, [n]))
        else:
            votes = self.pool.candidate_votes(ensemble, candidates)
        self._scored = None
        zero_one = mean_loss(votes, MEMBER_LOSS)
        tie_loss = mean_loss(votes, self.loss)
        individual = np.array(self.y)[candidates]
        self.slots[slot] = candidates[first_argmin(zero_one, tie_loss, individual)]
        self.timings["refill"] = time.perf_counter() - started
