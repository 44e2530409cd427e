"""Final-selection rules (thesis §3.2.2, §3.3, §3.4.1): what a method returns after every t.

A rule reads a run's trace and returns, per iteration, a :class:`Choice`: members with weights. A
single model is a one-member choice (every Chapter-3 rule); ensembles (Chapter 4) are choices of
several members. :class:`SelectionRule` is the interface the runner calls; the Chapter-3 rules
are pure functions of the trace wrapped by :class:`IncumbentRule`, and the posterior-mean rule
(:class:`PosteriorMeanRule`) reads the optimizer's surrogate through the
:class:`~hpo.optimizers.SurrogateOptimizer` capability as the run goes.

The pure rules are functions of a run's trace, given as equal-length arrays in
evaluation order: ``valid_loss`` (what the optimizer saw), ``selection_loss`` (the error on the
selection split D_S; NaN when the method has none) and ``batch`` (the CMA-ES generation, else the
iteration; non-decreasing). Every rule returns an int array ``incumbent`` of the trace's length:
``incumbent[t]`` is the 0-based trace index of the model the rule picks from the first ``t + 1``
evaluations, or :data:`NO_ANSWER` where it has none yet.

Population rules (pv, bw, gv) answer only at population ends: the last evaluation of each
generation and the last evaluation of the run, even when that generation is truncated ([decide],
docs/deviations.md).
Ties: the earliest evaluated model wins, and the bw/gv archives change only on
strict improvement ([decide], docs/deviations.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from hpo.records import Choice, Member, Trace

if TYPE_CHECKING:
    from hpo.optimizers.base import Optimizer

NO_ANSWER = -1
POSTERIOR_MEAN = "posterior_mean"
POST_HOC = "post_hoc"  # Chapter 4's rules: hpo.rules.ensemble
ENSEMBLE_OPTIMIZER = "eo"

Rule = Callable[[ArrayLike, ArrayLike, ArrayLike], np.ndarray]


def _as_trace(
    valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three trace arrays, checked: 1-D, non-empty, equal lengths, batches non-decreasing."""
    valid = np.asarray(valid_loss, dtype=float)
    selection = np.asarray(selection_loss, dtype=float)
    batches = np.asarray(batch)
    if valid.ndim != 1 or valid.size == 0:
        raise ValueError(f"valid_loss must be a non-empty 1-D array, got shape {valid.shape}")
    if selection.shape != valid.shape or batches.shape != valid.shape:
        raise ValueError(
            "valid_loss, selection_loss and batch must have equal lengths, got "
            f"{valid.shape}, {selection.shape}, {batches.shape}"
        )
    if not np.issubdtype(batches.dtype, np.integer):
        raise ValueError(f"batch must hold integers, got dtype {batches.dtype}")
    if np.any(np.diff(batches) < 0):
        raise ValueError("batch must be non-decreasing (evaluation order)")
    return valid, selection, batches


def _no_nan(values: np.ndarray, name: str) -> np.ndarray:
    """``values``, refusing NaN: a rule that reads a loss needs it for every evaluation."""
    missing = np.flatnonzero(np.isnan(values))
    if missing.size:
        raise ValueError(f"{name} is NaN at evaluations {missing.tolist()}; this rule reads it")
    return values


def _running_argmin(values: np.ndarray) -> np.ndarray:
    """For every t, the index of the first minimum of ``values[: t + 1]``.

    A later value replaces the incumbent only when strictly lower, so ties keep the earliest.
    """
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(values)[:-1]))
    improved = values < best_before
    return np.maximum.accumulate(np.where(improved, np.arange(values.size), 0))


def population_ends(batch: ArrayLike) -> np.ndarray:
    """Mask of population ends: before each change of batch, and at the run's last evaluation."""
    batches = np.asarray(batch)
    return np.append(batches[1:] != batches[:-1], True)


def _population_bests(loss: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Trace index of the first argmin of ``loss`` within each population (Eqs 3.5/3.6)."""
    starts = np.concatenate(([0], ends[:-1] + 1))
    spans = zip(starts, ends, strict=True)
    return np.array([start + np.argmin(loss[start : end + 1]) for start, end in spans])


def _answer_at(ends: np.ndarray, choices: np.ndarray, n: int) -> np.ndarray:
    """An incumbent array holding ``choices`` at the population ``ends`` and no answer elsewhere."""
    incumbent = np.full(n, NO_ANSWER, dtype=int)
    incumbent[ends] = choices
    return incumbent


def best_validation(
    valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike
) -> np.ndarray:
    """Best-of-run, ``argmin_h y_h`` over every evaluated model (grid, rs, gp, gp-r, cma, cma-r)."""
    valid, _, _ = _as_trace(valid_loss, selection_loss, batch)
    return _running_argmin(_no_nan(valid, "valid_loss"))


def best_selection(
    valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike
) -> np.ndarray:
    """``argmin_h y_sel_h`` over every evaluated model (gp-sel, gp-sel-r; thesis §3.2.2)."""
    _, selection, _ = _as_trace(valid_loss, selection_loss, batch)
    return _running_argmin(_no_nan(selection, "selection_loss"))


def partial_validation(
    valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike
) -> np.ndarray:
    """Partial validation: ``b_S(P_t)`` of the latest population only (Eq. 3.6; cma-pv)."""
    _, selection, batches = _as_trace(valid_loss, selection_loss, batch)
    ends = np.flatnonzero(population_ends(batches))
    bests = _population_bests(_no_nan(selection, "selection_loss"), ends)
    return _answer_at(ends, bests, selection.size)


def _archive(candidates: np.ndarray, selection: np.ndarray) -> np.ndarray:
    """The archive over successive population candidates: replaced only on strictly lower y_sel."""
    return candidates[_running_argmin(selection[candidates])]


def backwarding(valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike) -> np.ndarray:
    """Backwarding: archive ``b_V(P_t)`` when its y_sel beats the archive's (Eq. 3.7; cma-bw)."""
    valid, selection, batches = _as_trace(valid_loss, selection_loss, batch)
    ends = np.flatnonzero(population_ends(batches))
    candidates = _population_bests(_no_nan(valid, "valid_loss"), ends)
    archive = _archive(candidates, _no_nan(selection, "selection_loss"))
    return _answer_at(ends, archive, valid.size)


def global_validation(
    valid_loss: ArrayLike, selection_loss: ArrayLike, batch: ArrayLike
) -> np.ndarray:
    """Global validation: archive ``b_S(P_t)`` when its y_sel beats the archive's (Eq. 3.8; cma-gv).

    At population ends this equals :func:`best_selection`: the first argmin of y_sel so far.
    """
    _, selection, batches = _as_trace(valid_loss, selection_loss, batch)
    ends = np.flatnonzero(population_ends(batches))
    selection = _no_nan(selection, "selection_loss")
    archive = _archive(_population_bests(selection, ends), selection)
    return _answer_at(ends, archive, selection.size)


RULES: dict[str, Rule] = {
    "best_validation": best_validation,
    "best_selection": best_selection,
    "partial_validation": partial_validation,
    "backwarding": backwarding,
    "global_validation": global_validation,
}


class SelectionRule(ABC):
    """A final-selection rule: a choice (or None: no answer yet) per iteration of a run.

    ``observe`` is called after every evaluation, for rules that read the optimizer's state as
    the run goes (``wanted`` says whether the iteration's choice will be reported); ``choices``
    once at the end.
    """

    name: str
    needs_predictions: bool = False  # the run keeps predictions for rules that read them

    def check(self, optimizer: Optimizer) -> None:  # noqa: B027 - optional hook
        """Raise ``ValueError`` when the rule cannot read ``optimizer``."""

    def observe(self, optimizer: Optimizer, iteration: int, wanted: bool) -> None:  # noqa: B027
        """Look at the optimizer after evaluation ``iteration`` (1-based)."""

    @abstractmethod
    def choices(self, trace: Trace) -> list[Choice | None]:
        """One entry per evaluation of ``trace``."""


class IncumbentRule(SelectionRule):
    """A rule that picks one evaluated model per iteration (a function of :data:`RULES`)."""

    def __init__(self, name: str) -> None:
        if name not in RULES:
            raise ValueError(f"unknown selection rule {name!r}; valid: {', '.join(RULES)}")
        self.name = name

    def choices(self, trace: Trace) -> list[Choice | None]:
        incumbent = RULES[self.name](trace.valid_loss, trace.selection_loss, trace.batch)
        return [None if i == NO_ANSWER else Choice((trace.member(int(i)),)) for i in incumbent]


class PosteriorMeanRule(SelectionRule):
    """``-pm`` methods: the argmin of the integrated GP posterior mean after every iteration
    (thesis §3.4.1), over the whole space or the observed points (``domain``,
    [decide], docs/deviations.md)."""

    name = POSTERIOR_MEAN

    def __init__(self, domain: str = "space") -> None:
        self.domain = domain
        self._chosen: dict[int, Mapping[str, Any]] = {}

    def check(self, optimizer: Optimizer) -> None:
        from hpo.optimizers.base import SurrogateOptimizer

        if not isinstance(optimizer, SurrogateOptimizer):
            raise ValueError(
                f"{type(optimizer).__name__} has no surrogate for the posterior-mean rule"
            )

    def observe(self, optimizer: Optimizer, iteration: int, wanted: bool) -> None:
        if wanted:
            u = optimizer.posterior_mean_argmin(self.domain)  # type: ignore[attr-defined]
            self._chosen[iteration] = optimizer.space.decode(u)

    def choices(self, trace: Trace) -> list[Choice | None]:
        return [
            Choice((Member(self._chosen[t], None),)) if t in self._chosen else None
            for t in range(1, len(trace.valid_loss) + 1)
        ]
