"""GP-EI Bayesian optimisation as Spearmint's ``GPEIOptChooser`` (thesis Alg. 2.1, §3.3).

The loop only wires the parts of :mod:`hpo.gp` together: a kernel, the hyperparameter chain
(slice sampling, burnt in once per run and continued), the batched GP posterior, an acquisition
and an acquisition optimizer. A new kernel, acquisition or acquisition optimizer changes none of
the code here beyond the constructor's choice.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hpo.gp.acquisition import ExpectedImprovement, NegativePosteriorMean, single_threaded_blas
from hpo.gp.acquisition_optimizers import (
    GridLBFGS,
    sobol_grid,
)
from hpo.gp.model import make_posterior
from hpo.gp.slice_sampler import HyperChain
from hpo.gp.stack import build_gp_stack, check_choice
from hpo.optimizers.base import Proposal, SurrogateOptimizer
from hpo.space.search_space import Space

INITIAL_DESIGNS = ("sobol", "random", "random_valid")
PM_DOMAINS = ("space", "observed")
EI_INCUMBENTS = ("observed_min", "posterior_mean_min")
N_INITIAL = 2  # Spearmint proposes without a GP while fewer than 2 results are complete


class GPEIOptimizer(SurrogateOptimizer):
    """Fully Bayesian GP with integrated expected improvement, maximised on a Sobol grid + L-BFGS-B.

    Settings (defaults = Spearmint's GPEIOptChooser and ``main.py``; [decide] points in
    docs/deviations.md):

    * ``kernel``: ``"matern52"`` (Spearmint's default) or ``"se_ard"`` (thesis Eq. 2.15) [decide];
    * ``n_samples``: slice samples per iteration (``mcmc_iters=10``); ``burnin``: transitions
      before the first samples, once per run (100);
    * ``grid_size``, ``grid_seed``: the Sobol candidate grid (20000, 1); ``n_refine``: candidates
      refined by L-BFGS-B (``grid_subset=20``); ``n_jitter``: points sprayed around the incumbent
      (10, sd ``1e-3``);
    * ``kernel`` also takes Chapter 5's ``"laplace"`` (thesis Eq. 5.15, per-dimension
      length-scales) and ``"conditional"`` (Eq. 5.9 around Matérn-5/2; the space must have
      conditions);
    * ``priors``: ``"spearmint"`` (default) or ``"lognormal"`` = Chapter 5's
      :class:`~hpo.gp.slice_sampler.LogNormalHorseshoePriors` (log-normal(0, 1) on length-scales
      and amplitude, horseshoe(1) on the noise; thesis §5.5);
    * ``noise_scale``, ``amp2_scale``, ``max_ls``: horseshoe, log-normal and top-hat priors
      (0.1, 1, 2) of ``priors="spearmint"``;
    * ``acquisition_optimizer``: ``"grid_lbfgs"`` (default, Spearmint), ``"random"`` (best of
      ``n_candidates`` random valid configurations, 1000; thesis §5.3.2, §5.5) or
      ``"local_search"`` (thesis Eqs 5.7-5.8: ``ls_step`` 0.1 in the unit encoding,
      ``ls_restarts`` 10 random starts, ``ls_best_observed`` 5 best observed starts,
      ``ls_max_iter`` 50 moves per start); ``impute`` (True): random candidates and random
      starts have inactive dimensions at the imputed value (thesis §5.3.1), else random;
    * ``initial_design``: the 2 points proposed before the GP is used: ``"sobol"`` = the first two
      unscrambled Sobol points ``(0, .., 0), (.5, .., .5)`` [decide], ``"random"`` (uniform in
      the cube), or ``"random_valid"``: random valid configurations, inactive dimensions at the
      imputed value unless ``impute=False`` (Chapter 5's conditional spaces, thesis §5.3.1);
    * ``pm_domain``: default domain of :meth:`posterior_mean_argmin` (``"space"`` [decide]);
    * ``standardize`` (not Spearmint, off by default): fit the GP to the losses shifted and
      scaled to zero mean and unit variance (as Optuna and scikit-optimize do), so that the
      scale-dependent priors (amp2, noise) and the chain's initial state fit any loss scale; the
      chain's state is re-expressed in the new units whenever they change;
    * ``loss_scale`` (1, [decide] docs/deviations.md): the losses are multiplied by it before
      the GP sees them. The author's later code does this (``func_scale``, 50 in its example,
      "so that the noise of the GP is better fit"; the thesis and Spearmint are silent); the
      priors (horseshoe 0.1 on the noise, log-normal(0, 1) on the amplitude) are scale-dependent,
      so the scale changes the GP's posterior, its expected improvement and the proposals. The
      incumbents (argmin of the losses) do not depend on it;
    * ``ei_incumbent``: the value EI improves on. ``"observed_min"`` (default): the lowest
      observed loss, Spearmint's ``best = np.min(vals)``; ``"posterior_mean_min"`` (not
      Spearmint): the lowest sample-averaged latent posterior mean at the observed points, the
      usual remedy for EI on noisy observations (a noisy low draw no longer sets the bar). The
      points jittered around the incumbent follow: around the observed point with that lowest
      mean;
    * ``fixed_noise`` (``None``: sampled under the horseshoe prior, Spearmint's default): the
      noise variance held at this value, in the GP's loss units, while the mean and amplitude
      are slice-sampled as before. Spearmint's ``noiseless=1`` is ``fixed_noise=1e-3``;
    * ``log_hypers`` (not Spearmint, off by default): slice-sample ``(mean, log amp2, log
      noise)`` instead of ``(mean, amp2, noise)``, same posterior (Jacobian included). In the
      raw parameterisation the joint update freezes once the noise is small (every random
      direction leaves the support within ~noise), so amp2 and the mean stop moving.

    ``Proposal.batch`` is the 1-based iteration number.
    """

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
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
        initial_design: str = "sobol",
        pm_domain: str = "space",
        standardize: bool = False,
        log_hypers: bool = False,
        loss_scale: float = 1.0,
        ei_incumbent: str = "observed_min",
        fixed_noise: float | None = None,
        priors: str = "spearmint",
        acquisition_optimizer: str = "grid_lbfgs",
        n_candidates: int = 1000,
        ls_step: float = 0.1,
        ls_restarts: int = 10,
        ls_best_observed: int = 5,
        ls_max_iter: int = 50,
        impute: bool = True,
    ) -> None:
        super().__init__(space, budget, rng)
        check_choice("initial_design", initial_design, INITIAL_DESIGNS)
        check_choice("pm_domain", pm_domain, PM_DOMAINS)
        check_choice("ei_incumbent", ei_incumbent, EI_INCUMBENTS)
        if not loss_scale > 0:
            raise ValueError(f"loss_scale must be > 0, got {loss_scale!r}")
        stack = build_gp_stack(
            space, kernel, n_samples, burnin, grid_size, grid_seed, n_refine, n_jitter,
            noise_scale, amp2_scale, max_ls, priors, acquisition_optimizer, n_candidates,
            ls_step, ls_restarts, ls_best_observed, ls_max_iter, impute, log_hypers, fixed_noise,
        )  # fmt: skip
        self.kernel, self.chain, self.sampler = stack.kernel, stack.chain, stack.sampler
        self.acquisition_optimizer = stack.acquisition_optimizer
        self.n_samples = n_samples
        self.initial_design = initial_design
        self.pm_domain = pm_domain
        self.ei_incumbent = ei_incumbent
        self.standardize = standardize
        self.loss_scale = float(loss_scale)
        self._chain_units = (0.0, 1.0)  # (shift, scale) of the losses the chain state refers to
        self.pm_optimizer = GridLBFGS(stack.grid, n_refine=n_refine, n_jitter=0, observed="include")
        # Posterior-mean searches draw from their own stream, seeded per number of observations,
        # so that calling them never changes the proposals (and gives the same answer twice).
        self._pm_entropy = int(rng.integers(2**63))
        self._pm_cache: dict[tuple[int, str], np.ndarray] = {}
        self.last_acquisition: ExpectedImprovement | None = None

    def _scaled_losses(self) -> np.ndarray:
        """The observed losses times ``loss_scale`` ``(n,)``."""
        return np.array(self.y, dtype=float) * self.loss_scale

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        """Evaluated points ``(n, d)`` and the losses the GP is fitted to ``(n,)``: times
        ``loss_scale``, and with ``standardize`` shifted and scaled to zero mean and unit
        variance."""
        X, y = np.array(self.X).reshape(-1, self.space.dim), self._scaled_losses()
        shift, scale = self._units(y)
        return X, (y - shift) / scale

    def _units(self, y: np.ndarray) -> tuple[float, float]:
        """``(shift, scale)`` of the GP's loss units: ``(0, 1)`` unless ``standardize``."""
        if not self.standardize or len(y) == 0:
            return 0.0, 1.0
        std = float(y.std())
        return float(y.mean()), std if std > 0 else 1.0

    def _chain_in_current_units(self, chain: HyperChain) -> HyperChain:
        """``chain`` with its state expressed in the units of the current losses: the same
        hyperparameters in raw-loss terms (the mean stays inside the range of the losses)."""
        y = self._scaled_losses()
        units = self._units(y)
        if self.standardize and chain.state is not None and self._chain_units != units:
            chain.change_units(*self._chain_units, *units)
            low, high = (y.min() - units[0]) / units[1], (y.max() - units[0]) / units[1]
            chain.state = replace(chain.state, mean=np.clip(chain.state.mean, low, high))
        return chain

    def ask(self) -> Proposal:
        with single_threaded_blas():
            return self._ask()

    def _ask(self) -> Proposal:
        n = len(self.y)
        if n < N_INITIAL:
            if self.initial_design == "sobol":
                u = sobol_grid(self.space.dim, N_INITIAL)[n]
            elif self.initial_design == "random":
                u = self.rng.uniform(size=self.space.dim)
            else:
                u = self.sampler(self.rng, 1)[0]
            return Proposal(u=u, batch=n + 1)
        X, y = self._data()
        self._chain_in_current_units(self.chain)
        self._chain_units = self._units(self._scaled_losses())
        hypers = self.chain.sample(X, y, self.n_samples, self.rng)
        posterior = make_posterior(self.kernel, X, y, hypers)
        values = y if self.ei_incumbent == "observed_min" else posterior.mean(X).mean(axis=0)
        best = int(np.argmin(values))
        acquisition = ExpectedImprovement(posterior, best_f=values[best])
        self.last_acquisition = acquisition
        incumbent = X[best]
        u = self.acquisition_optimizer.maximize(acquisition, X, incumbent, self.rng)
        return Proposal(u=u, batch=n + 1)

    def posterior_mean_argmin(self, domain: str | None = None) -> np.ndarray:
        """Minimiser of the sample-averaged latent posterior mean (thesis §3.4.1; [decide]).

        The hyperparameters are ``n_samples`` further transitions of a copy of the chain,
        conditioned on all observations. ``domain="space"``: Sobol grid and observed points
        scored, the ``n_refine`` best refined by L-BFGS-B; ``"observed"``: the best observed
        point. Ties go to the earliest evaluated point. With fewer than two observations the
        GP is not defined (as in Spearmint) and the first observed point is returned.
        """
        with single_threaded_blas():
            return self._posterior_mean_argmin(domain)

    def _posterior_mean_argmin(self, domain: str | None) -> np.ndarray:
        domain = self.pm_domain if domain is None else domain
        check_choice("domain", domain, PM_DOMAINS)
        X, y = self._data()
        if len(y) == 0:
            raise ValueError("posterior_mean_argmin needs at least one observation")
        if len(y) < N_INITIAL:
            return X[0].copy()
        key = (len(y), domain)
        if key not in self._pm_cache:
            rng = np.random.default_rng([self._pm_entropy, len(y)])
            chain = self._chain_in_current_units(self.chain.copy())
            hypers = chain.sample(X, y, self.n_samples, rng)
            neg_mean = NegativePosteriorMean(make_posterior(self.kernel, X, y, hypers))
            if domain == "observed":
                self._pm_cache[key] = X[int(np.argmax(neg_mean(X)))]
            else:
                self._pm_cache[key] = self.pm_optimizer.maximize(neg_mean, X, None, rng)
        return self._pm_cache[key].copy()
