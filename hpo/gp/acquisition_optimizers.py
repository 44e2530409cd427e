"""Acquisition optimizers: how the maximiser of an acquisition over ``[0, 1]^d`` is searched.

:class:`AcquisitionOptimizer` is the interface the BO loop calls; each search strategy is one
subclass:

* :class:`GridLBFGS` — Spearmint's ``GPEIOptChooser`` search (thesis §3.3; the author's code):
  score a fixed
  Sobol grid plus a few points jittered around the incumbent, refine the best ``n_refine`` by
  L-BFGS-B inside the cube, return the best of everything scored;
* :class:`RandomCandidates` — the best of ``n_candidates`` random valid configurations
  (thesis §5.3.2; 1000 for GP-cond, §5.5);
* :class:`LocalSearch` — SMAC-style local search over the neighbourhoods of the active
  hyperparameters (thesis Eqs 5.7-5.8), for conditional spaces.

The last two see configurations through :class:`~hpo.space.search_space.Space`
(``decode``/``encode``), so
they return valid points only: inactive dimensions at the imputed value (thesis §5.3.1), integers
and categoricals at their bin centres.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

import numpy as np
from scipy.optimize import _lbfgsb  # scipy's L-BFGS-B routine (setulb)
from scipy.stats import qmc

from hpo.gp.acquisition import Acquisition
from hpo.space.search_space import Categorical, Integer, Space, Value

Sampler = Callable[[np.random.Generator, int], np.ndarray]  # (rng, m) -> points (m, d)
Config = dict[str, Value]
Neighbours = Callable[[Mapping[str, Value], float], list[Config]]  # (config, step) -> configs


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
    or preceded by (``"include"``, the posterior-mean search of thesis §3.4.1) the observed points,
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
        self._previous_top = np.zeros((0, grid.shape[1]))  # best candidates of the last search

    def candidates(
        self, observed: np.ndarray, incumbent: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray:
        """The candidate set ``(m, d)`` scored before refinement."""
        return self._candidates(observed, incumbent, rng)[0]

    def _candidates(
        self, observed: np.ndarray, incumbent: np.ndarray | None, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """The candidate set ``(m, d)`` and the position in it of every grid point
        ``(len(grid),)``, -1 for the grid points left out."""
        observed = np.asarray(observed, dtype=float).reshape(-1, self.grid.shape[1])
        if self.observed == "exclude":
            keep = np.ones(len(self.grid), dtype=bool)
            for x in observed:
                index = self._grid_index.get(x.tobytes())
                if index is not None:
                    keep[index] = False
            parts = [self.grid[keep]]
            position = np.where(keep, np.cumsum(keep) - 1, -1)
        else:
            parts = [observed, self.grid]
            position = len(observed) + np.arange(len(self.grid))
        if self.n_jitter > 0 and incumbent is not None:
            jitter = incumbent + self.jitter_sd * rng.standard_normal(
                (self.n_jitter, len(incumbent))
            )
            parts.append(np.clip(jitter, 0.0, 1.0))
        return np.concatenate(parts), position

    def maximize(
        self,
        acquisition: Acquisition,
        observed: np.ndarray,
        incumbent: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        cand, position = self._candidates(observed, incumbent, rng)
        # hints: where the previous search's best grid points are now (the acquisition changes
        # little from one BO iteration to the next); its jittered points are not in the grid
        rows = [self._grid_index.get(point.tobytes()) for point in self._previous_top]
        hints = position[[row for row in rows if row is not None]]
        top, top_values = acquisition.top_k(
            cand, max(1, min(self.n_refine, len(cand))), hints=hints[hints >= 0]
        )
        self._previous_top = cand[top]
        refined = refine_lbfgsb(acquisition, cand[top[: self.n_refine]])
        points = np.concatenate([cand[top], refined])
        values = np.concatenate([top_values, acquisition(refined)])
        return points[int(np.argmax(values))]


def space_sampler(space: Space, impute: bool = True) -> Sampler:
    """Uniform points of the unit cube (log-uniform values for log-scaled parameters, uniform
    choices for categoricals), made valid by ``encode(decode(u))``: inactive dimensions at the
    imputed value, integers and categoricals at their bin centres. ``impute=False``: the raw
    uniform points, inactive dimensions keeping their random values
    (thesis §5.3.1, no imputation)."""

    def sample(rng: np.random.Generator, m: int) -> np.ndarray:
        U = rng.random((m, space.dim))
        return U if not impute else np.array([space.encode(space.decode(u)) for u in U])

    return sample


def one_exchange_neighbours(space: Space) -> Neighbours:
    """Neighbourhoods ``N_j`` of thesis Eq. 5.8 for every active parameter ``j`` of a
    configuration: a real moves ``step`` up and down in its unit encoding (clipped to
    ``[0, 1]``; a move that the clipping cancels is dropped), an integer moves by one within its
    range, a categorical takes each of its other values. Parameters that a categorical change
    activates start at the imputed value (the centre of their range, as the imputation puts
    them); those it deactivates are dropped."""
    defaults = {p.name: p.from_unit(space.impute_value) for p in space.parameters}

    def neighbours(config: Mapping[str, Value], step: float) -> list[Config]:
        full = {**defaults, **config}
        result: list[Config] = []

        def add(name: str, value: Value) -> None:
            moved = {**full, name: value}
            result.append(
                {p.name: moved[p.name] for p in space.parameters if space.is_active(p, moved)}
            )

        for p in space.parameters:
            if p.name not in config:
                continue
            if isinstance(p, Categorical):
                for choice in p.choices:
                    if choice != config[p.name]:
                        add(p.name, choice)
            elif isinstance(p, Integer):
                for value in (int(config[p.name]) - 1, int(config[p.name]) + 1):
                    if p.low <= value <= p.high:
                        add(p.name, value)
            else:
                u = p.to_unit(config[p.name])
                for moved in (min(max(u - step, 0.0), 1.0), min(max(u + step, 0.0), 1.0)):
                    if moved != u:
                        add(p.name, p.from_unit(moved))
        return result

    return neighbours


class RandomCandidates(AcquisitionOptimizer):
    """The best of ``n_candidates`` random points by acquisition value (thesis §5.3.2; GP-cond
    uses 1000, §5.5). ``sampler(rng, m)``: the candidates (default :func:`space_sampler`,
    valid imputed configurations). Ties go to the first candidate."""

    def __init__(self, sampler: Sampler, n_candidates: int = 1000) -> None:
        if n_candidates < 1:
            raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
        self.sampler = sampler
        self.n_candidates = n_candidates

    def maximize(
        self,
        acquisition: Acquisition,
        observed: np.ndarray,
        incumbent: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        candidates = self.sampler(rng, self.n_candidates)
        return candidates[int(np.argmax(acquisition(candidates)))]


class LocalSearch(AcquisitionOptimizer):
    """SMAC-style local search (thesis §5.3.2, Eqs 5.7-5.8).

    From each start, move to the best neighbour (``neighbours(config, step)``, default
    :func:`one_exchange_neighbours`: steps along every active parameter, the other values of
    active categoricals) while it improves the acquisition strictly, for at most ``max_iter``
    moves; return the best end point over all starts (ties: the first start). Starts: the
    ``n_best_observed`` best observed points (by acquisition value; made valid) and
    ``n_restarts`` random valid configurations (``sampler``, default :func:`space_sampler`).
    The starts advance in lockstep, one batched acquisition call per round. :attr:`paths` keeps
    each start's accepted points of the last search (for inspection and tests).

    A move needs a relative gain above ``MIN_GAIN`` (the thesis's "gain threshold", set at the
    rounding level of the acquisition: any real improvement counts).
    """

    MIN_GAIN = 1e-9

    def __init__(
        self,
        space: Space,
        step: float = 0.1,
        n_restarts: int = 10,
        n_best_observed: int = 5,
        max_iter: int = 50,
        sampler: Sampler | None = None,
        neighbours: Neighbours | None = None,
    ) -> None:
        if not 0.0 < step <= 1.0:
            raise ValueError(f"local-search step must be in (0, 1], got {step}")
        if n_restarts < 0 or n_best_observed < 0 or n_restarts + n_best_observed < 1:
            raise ValueError(
                "local search needs n_restarts >= 0, n_best_observed >= 0 and at least one "
                f"start, got {n_restarts}, {n_best_observed}"
            )
        if max_iter < 1:
            raise ValueError(f"local-search max_iter must be >= 1, got {max_iter}")
        self.space = space
        self.step = step
        self.n_restarts = n_restarts
        self.n_best_observed = n_best_observed
        self.max_iter = max_iter
        self.sampler = space_sampler(space) if sampler is None else sampler
        self.neighbours = one_exchange_neighbours(space) if neighbours is None else neighbours
        self.paths: list[list[np.ndarray]] = []

    def valid(self, u: np.ndarray) -> np.ndarray:
        """The valid point of ``u``'s configuration: ``encode(decode(u))``."""
        return self.space.encode(self.space.decode(u))

    def starts(
        self, acquisition: Acquisition, observed: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The starting points ``(k, d)``: best observed first, then random ones."""
        parts = [self.sampler(rng, self.n_restarts)] if self.n_restarts else []
        observed = np.asarray(observed, dtype=float).reshape(-1, self.space.dim)
        if self.n_best_observed and len(observed):
            valid = np.array([self.valid(u) for u in observed])
            order = np.argsort(-acquisition(valid), kind="stable")[: self.n_best_observed]
            parts.insert(0, valid[order])
        return np.concatenate(parts)

    def maximize(
        self,
        acquisition: Acquisition,
        observed: np.ndarray,
        incumbent: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        points = self.starts(acquisition, observed, rng)
        values = acquisition(points)
        self.paths = [[point.copy()] for point in points]
        running = list(range(len(points)))
        for _ in range(self.max_iter):
            if not running:
                break
            batches = [self._neighbourhood(points[k]) for k in running]
            scores = acquisition(np.concatenate(batches))
            still, offset = [], 0
            for k, batch in zip(running, batches, strict=True):
                part = scores[offset : offset + len(batch)]
                offset += len(batch)
                # Eq. 5.7, moving only on a gain above rounding (EI of one point may differ in
                # the last bits between batches; two such points must not ping-pong)
                if len(batch) and part.max() > values[k] + self.MIN_GAIN * abs(values[k]):
                    best = int(np.argmax(part))
                    points[k], values[k] = batch[best], part[best]
                    self.paths[k].append(batch[best])
                    still.append(k)
            running = still
        return points[int(np.argmax(values))].copy()

    def _neighbourhood(self, u: np.ndarray) -> np.ndarray:
        """The encoded neighbours ``(q, d)`` of the valid point ``u``."""
        configs = self.neighbours(self.space.decode(u), self.step)
        return np.array([self.space.encode(c) for c in configs]).reshape(-1, self.space.dim)


def refine_lbfgsb(acquisition: Acquisition, starts: np.ndarray) -> np.ndarray:
    """Local maximisation of ``acquisition`` from each of ``starts (k, d)`` in ``[0, 1]^d``: one
    L-BFGS-B run per start with scipy's default tolerances, as Spearmint's ``fmin_l_bfgs_b``
    loop (each start stops on its own criterion).

    The runs are independent, so they advance in lockstep (:class:`LockstepLBFGSB`): every
    round evaluates the points all pending runs ask for in one batched call. Each run's iterates
    are those of ``scipy.optimize.minimize(method="L-BFGS-B")`` from its start, bit for bit.
    """

    def negative(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, grads = acquisition.value_and_grad(X)
        return -values, -grads

    return np.clip(LockstepLBFGSB(starts, lower=0.0, upper=1.0).minimize(negative), 0.0, 1.0)


class LockstepLBFGSB:
    """Several bound-constrained L-BFGS-B minimisations advanced together.

    Drives scipy's L-BFGS-B routine (``setulb``, the reverse-communication interface that
    ``scipy.optimize.minimize`` loops over) with scipy's defaults (``maxcor=10``,
    ``ftol=2.22e-9``, ``gtol=1e-5``, ``maxls=20``, ``maxiter=maxfun=15000``), one state per
    start. Instead of one Python callback per evaluation and run, every round collects the
    points the unfinished runs ask for and evaluates them in one call of a batched function, which
    removes most of the per-evaluation overhead of ``minimize`` (about 60 µs, more than a
    compiled evaluation of EI).
    """

    MAXCOR = 10
    FACTR = 2.2204460492503131e-09 / np.finfo(float).eps  # scipy's ftol, in units of eps
    PGTOL = 1e-5
    MAXLS = 20
    MAXITER = 15000
    MAXFUN = 15000
    _FG, _NEW_X, _STOP = 3, 1, 5  # setulb task codes: evaluate, new iterate, stop requested

    def __init__(self, starts: np.ndarray, lower: float, upper: float) -> None:
        starts = np.atleast_2d(np.asarray(starts, dtype=float))
        self.k, self.dim = starts.shape
        self.x = np.clip(starts, lower, upper)  # (k, d), updated in place by setulb
        self.lower = np.full(self.dim, float(lower))
        self.upper = np.full(self.dim, float(upper))
        self.nbd = np.full(self.dim, 2, dtype=np.int32)  # both bounds
        m, n = self.MAXCOR, self.dim
        self.f = np.zeros(self.k)
        self.g = np.zeros((self.k, n))
        self.wa = np.zeros((self.k, 2 * m * n + 5 * n + 11 * m * m + 8 * m))
        self.iwa = np.zeros((self.k, 3 * n), dtype=np.int32)
        self.task = np.zeros((self.k, 2), dtype=np.int32)
        self.ln_task = np.zeros((self.k, 2), dtype=np.int32)
        self.lsave = np.zeros((self.k, 4), dtype=np.int32)
        self.isave = np.zeros((self.k, 44), dtype=np.int32)
        self.dsave = np.zeros((self.k, 29))
        self.n_iterations = np.zeros(self.k, dtype=int)
        self.n_evaluations = np.zeros(self.k, dtype=int)

    def minimize(
        self, fun_and_grad: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    ) -> np.ndarray:
        """Run every start to its stopping criterion; ``fun_and_grad(X (m, d))`` returns values
        ``(m,)`` and gradients ``(m, d)``. Returns the final iterates ``(k, d)``."""
        waiting = [run for run in range(self.k) if self._advance(run)]
        while waiting:
            values, grads = fun_and_grad(self.x[waiting])
            self.f[waiting] = values
            self.g[waiting] = grads
            self.n_evaluations[waiting] += 1
            waiting = [run for run in waiting if self._advance(run)]
        return self.x

    def _advance(self, run: int) -> bool:
        """Call ``setulb`` for ``run`` until it asks for an evaluation (True) or stops."""
        x, task = self.x[run], self.task[run]
        while True:
            _lbfgsb.setulb(
                self.MAXCOR, x, self.lower, self.upper, self.nbd, self.f[run], self.g[run],
                self.FACTR, self.PGTOL, self.wa[run], self.iwa[run], task, self.lsave[run],
                self.isave[run], self.dsave[run], self.MAXLS, self.ln_task[run],
            )  # fmt: skip
            if task[0] == self._FG:
                return True
            if task[0] != self._NEW_X:
                return False
            self.n_iterations[run] += 1
            # scipy counts the evaluation at the start made when its objective is set up
            if self.n_iterations[run] >= self.MAXITER:
                task[:] = self._STOP, 504
            elif self.n_evaluations[run] > self.MAXFUN:
                task[:] = self._STOP, 502
