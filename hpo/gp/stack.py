"""The GP stack a Bayesian optimizer is assembled from, built in one place for every optimizer
that models losses with a fully Bayesian GP (Spearmint's GP-EI, Chapter 4's ensemble
optimizers): the kernel, the hyperparameter priors and their slice-sampling chain, the Sobol
candidate grid, the sampler of random valid configurations and the acquisition's optimizer.

A setting's meaning and default are those of :class:`hpo.optimizers.bayes.GPEIOptimizer`, whose
docstring lists them; a bad value is one line naming it and the valid choices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.gp.acquisition_optimizers import (
    AcquisitionOptimizer,
    GridLBFGS,
    LocalSearch,
    RandomCandidates,
    Sampler,
    sobol_grid,
    space_sampler,
)
from hpo.gp.kernels import Kernel, make_kernel
from hpo.gp.slice_sampler import HyperChain, LogNormalHorseshoePriors, Priors, SpearmintPriors
from hpo.space.search_space import Space

PRIORS = ("spearmint", "lognormal")
ACQUISITION_OPTIMIZERS = ("grid_lbfgs", "random", "local_search")


@dataclass(frozen=True)
class GPStack:
    """The assembled parts: ``chain`` is the fresh hyperparameter chain (not burnt in yet)."""

    kernel: Kernel
    chain: HyperChain
    grid: np.ndarray
    sampler: Sampler
    acquisition_optimizer: AcquisitionOptimizer


def build_gp_stack(
    space: Space,
    kernel: str,
    n_samples: int,
    burnin: int,
    grid_size: int,
    grid_seed: int,
    n_refine: int,
    n_jitter: int,
    noise_scale: float,
    amp2_scale: float,
    max_ls: float,
    priors: str,
    acquisition_optimizer: str,
    n_candidates: int,
    ls_step: float,
    ls_restarts: int,
    ls_best_observed: int,
    ls_max_iter: int,
    impute: bool,
    log_hypers: bool = False,
    fixed_noise: float | None = None,
) -> GPStack:
    """The GP stack of ``space`` with these settings, each checked (one line for a bad one)."""
    check_choice("priors", priors, PRIORS)
    check_choice("acquisition_optimizer", acquisition_optimizer, ACQUISITION_OPTIMIZERS)
    if fixed_noise is not None and not fixed_noise > 0:
        raise ValueError(f"fixed_noise must be > 0 or None, got {fixed_noise!r}")
    named = (("n_samples", n_samples), ("grid_size", grid_size), ("grid_seed", grid_seed))
    for name, value in named:
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if burnin < 0 or n_refine < 0 or n_jitter < 0:
        raise ValueError(
            f"burnin, n_refine, n_jitter must be >= 0, got {burnin}, {n_refine}, {n_jitter}"
        )
    gp_kernel = make_kernel(kernel, space)
    prior = _priors(priors, noise_scale, amp2_scale, max_ls)
    chain = HyperChain(
        gp_kernel, prior, burnin=burnin, log_hypers=log_hypers, fixed_noise=fixed_noise
    )
    sampler = space_sampler(space, impute=impute)
    grid = sobol_grid(space.dim, grid_size, grid_seed)
    optimizer = _acquisition_optimizer(
        acquisition_optimizer,
        space,
        grid,
        sampler,
        n_refine=n_refine,
        n_jitter=n_jitter,
        n_candidates=n_candidates,
        ls_step=ls_step,
        ls_restarts=ls_restarts,
        ls_best_observed=ls_best_observed,
        ls_max_iter=ls_max_iter,
    )
    return GPStack(gp_kernel, chain, grid, sampler, optimizer)


def _priors(priors: str, noise_scale: float, amp2_scale: float, max_ls: float) -> Priors:
    """``"spearmint"`` (horseshoe, log-normal and top-hat priors of the given scales) or
    ``"lognormal"`` (Chapter 5's, thesis §5.5); the name checked by :func:`build_gp_stack`."""
    if priors == "spearmint":
        return SpearmintPriors(noise_scale=noise_scale, amp2_scale=amp2_scale, max_ls=max_ls)
    return LogNormalHorseshoePriors()


def _acquisition_optimizer(
    name: str,
    space: Space,
    grid: np.ndarray,
    sampler: Sampler,
    n_refine: int,
    n_jitter: int,
    n_candidates: int,
    ls_step: float,
    ls_restarts: int,
    ls_best_observed: int,
    ls_max_iter: int,
) -> AcquisitionOptimizer:
    """One of :data:`ACQUISITION_OPTIMIZERS` (the name checked by :func:`build_gp_stack`)."""
    if name == "grid_lbfgs":
        return GridLBFGS(grid, n_refine=n_refine, n_jitter=n_jitter)
    if name == "random":
        return RandomCandidates(sampler, n_candidates=n_candidates)
    return LocalSearch(
        space,
        step=ls_step,
        n_restarts=ls_restarts,
        n_best_observed=ls_best_observed,
        max_iter=ls_max_iter,
        sampler=sampler,
    )


def check_choice(name: str, value: str, valid: tuple[str, ...]) -> None:
    """One line naming ``name``'s bad ``value`` and the ``valid`` choices."""
    if value not in valid:
        raise ValueError(f"{name} must be one of {valid}, got {value!r}")
