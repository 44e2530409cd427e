"""The GP engine: kernels, posterior, slice sampler, acquisitions and acquisition optimizers.

Kept apart BoTorch-style so that a new kernel, acquisition or acquisition optimizer is one class:
:mod:`~hpo.gp.kernels` (correlation functions), :mod:`~hpo.gp.model` (batched exact posterior,
likelihood), :mod:`~hpo.gp.slice_sampler` (priors and the hyperparameter chain),
:mod:`~hpo.gp.acquisition` (integrated EI, posterior mean) and
:mod:`~hpo.gp.acquisition_optimizers` (Spearmint's Sobol grid + L-BFGS-B). The BO loop that wires
them is :class:`hpo.optimizers.bayes.GPEIOptimizer`.
"""
