"""Acquisition optimizers: how the maximiser of an acquisition over ``[0, 1]^d`` is searched.

:class:`AcquisitionOptimizer` is the interface the BO loop calls; a new search strategy (random
sampling or SMAC-style local search for Chapter 5's conditional spaces, spec ch4-6 §2.3) is one
new subclass. :class:`GridLBFGS` is Spearmint's ``GPEIOptChooser`` search (spec ch2-3 §1.3):
score a fixed Sobol grid plus a few points jittered around the incumbent, refine the best
``n_refine`` by L-BFGS-B inside the cube, return the best of everything scored.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from hpo.gp.acquisition import Acquisition


def sobol_grid(dim: int, size: int, seed: int = 1) -> np.ndarray:
    """``size`` points of the unscrambled Sobol sequence in ``[0, 1]^dim``: ``(size, dim)``.

    ``seed`` is Spearmint's ``grid_seed`` (the 1-based index of the first point), so the default
    grid starts ``(0, ..., 0), (0.5, ..., 0.5)`` like Spearmint's ``sobol_lib`` with skip 1.
    """
    engine = qmc.Sobol(dim, scramble=False)
    if seed > 1:
        engine.fast_forward(seed - 1)
    with warnings.catch_warnings():  # balance properties need a power-of-two size; irrelevant
        warnings.simplefilter("ignore", UserWarning)
        return engine.random(size)


class AcquisitionOptimizer(ABC):
    """Searches the maximiser of an acquisition function over the unit cube."""

    @abstractmethod
    def maximize(
        self,
        acquisition: Acquisition,
        observed: np.ndarray,
        incumbent: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """The point ``(d,)`` to return, given the evaluated points ``observed (n, d)`` and the
        best of them ``incumbent (d,)`` (``None`` when the search does not use it)."""


class GridLBFGS(AcquisitionOptimizer):
    """Spearmint's grid + L-BFGS-B search.

    Candidates = the grid, without (``observed="exclude"``, Spearmint's remaining grid points)
    or preceded by (``"include"``, the posterior-mean search of spec §2.6) the observed points,
    plus ``n_jitter`` points ``incumbent + N(0, jitter_sd^2)`` clipped to the cube. The
    ``n_refine`` best candidates are refined by L-BFGS-B within ``[0, 1]^d`` with the analytic
    gradient, one run per start (:func:`refine_lbfgsb`). Returns the first maximiser over
    candidates and refined points, so ties go to the earliest candidate.
    """

    def __init__(
        self,
        grid: np.ndarray,
        n_refine: int = 20,
        n_jitter: int = 10,
        jitter_sd: float = 1e-3,
        observed: str = "exclude",
    ) -> None:
        if observed not in ("exclude", "include"):
            raise ValueError(f"observed must be 'exclude' or 'include', got {observed!r}")
        self.grid = grid
        self.n_refine = n_refine
        self.n_jitter = n_jitter
        self.jitter_sd = jitter_sd
        self.observed = observed
        self._grid_index = {row.tobytes(): i for i, row in enumerate(grid)}

    def candidates(
        self, observed: np.ndarray, incumbent: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray:
        """The candidate set ``(m, d)`` scored before refinement."""
        if self.observed == "exclude":
            keep = np.ones(len(self.grid), dtype=bool)
            for x in observed:
                index = self._grid_index.get(np.asarray(x, dtype=float).tobytes())
                if index is not None:
                    keep[index] = False
            parts = [self.grid[keep]]
        else:
            parts = [np.asarray(observed, dtype=float).reshape(-1, self.grid.shape[1]), self.grid]
        if self.n_jitter > 0 and incumbent is not None:
            jitter = incumbent + self.jitter_sd * rng.standard_normal(
                (self.n_jitter, len(incumbent))
            )
            parts.append(np.clip(jitter, 0.0, 1.0))
        return np.concatenate(parts)

    def maximize(
        self,
        acquisition: Acquisition,
        observed: np.ndarray,
        incumbent: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        cand = self.candidates(observed, incumbent, rng)
        top, top_values = acquisition.top_k(cand, max(1, min(self.n_refine, len(cand))))
        refined = refine_lbfgsb(acquisition, cand[top[: self.n_refine]])
        points = np.concatenate([cand[top], refined])
        values = np.concatenate([top_values, acquisition(refined)])
        return points[int(np.argmax(values))]


def refine_lbfgsb(acquisition: Acquisition, starts: np.ndarray) -> np.ndarray:
    """Local maximisation of ``acquisition`` from each of ``starts (k, d)`` in ``[0, 1]^d``: one
    L-BFGS-B run per start with scipy's default tolerances, as Spearmint's ``fmin_l_bfgs_b``
    loop (each start stops on its own criterion)."""
    bounds = [(0.0, 1.0)] * starts.shape[1]

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = acquisition.value_and_grad(x[None])
        return -float(value[0]), -grad[0]

    refined = [
        minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=bounds).x for x0 in starts
    ]
    return np.clip(np.reshape(refined, starts.shape), 0.0, 1.0)
