"""Exact shortcuts through ConfigSpace 1.2's hot paths, active only inside a block.

SMAC3 2.4 on seed 004's CASH space (264 hyperparameters, 145 conditions under the learner)
spends most of its time in ConfigSpace's per-configuration Python, not in its model:

* ``Configuration.__eq__`` builds both configurations' dictionaries (264 conversions each), and
  SMAC compares every new configuration with its whole history (``in`` on lists);
* ``Configuration.__hash__`` is the hash of the printed configuration, rebuilt on every runhistory
  lookup of the same object;
* ``Configuration.__iter__`` tests its entries one numpy scalar at a time (``dict(config)``,
  printing and SMAC's Sobol design all go through it);
* ``util.change_hp_value``, which makes every neighbour of SMAC's local search, walks the
  conditions under the changed parameter one by one;
* ``util.deactivate_inactive_hyperparameters``, which makes SMAC's Sobol initial design into
  configurations, rebuilds the configuration from its dictionary once per inactive
  hyperparameter: 2 s per SMAC run on the CASH space, before the run's first evaluation.

:func:`configspace_shortcuts` replaces each within a ``with`` block by a function that returns
exactly ConfigSpace's result (tests/test_cash_methods.py compares them on random, neighbouring,
copied and integer-nudged configurations and Sobol designs, and whole SMAC runs with and
without), and restores ConfigSpace's own after. Only :mod:`hpo.optimizers.smac_instances` uses it,
around the facade's construction (its Sobol initial design) and SMAC's ``ask`` and ``tell``; the
Chapter-5 adapter's spaces are small enough to leave alone.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

_CONFIGSPACE: dict[str, Any] = {}  # ConfigSpace's own functions, while the shortcuts are active


def _same_configuration(self: Any, other: Any) -> Any:
    """ConfigSpace 1.2's ``Configuration.__eq__`` (``dict(self) == dict(other)`` and the same
    space), decided without building both dictionaries.

    Two configurations of one space have the same keys iff the same entries of their vectors are
    NaN (inactive); their values can differ only where their vectors differ, and there the values
    are compared exactly as ``dict`` would (``Configuration.__getitem__``: an integer's vector may
    differ while its value does not). ConfigSpace's version converts all 264 entries of the CASH
    space on every comparison, and SMAC 2.4 compares each new configuration with its whole history
    (``in`` on lists): on the CASH space that was most of SMAC's time after a few hundred trials.
    """
    if not isinstance(other, type(self)):  # ConfigSpace's own test (self.__class__)
        return NotImplemented
    if self.config_space is not other.config_space and self.config_space != other.config_space:
        return False
    mine, theirs = self.get_array(), other.get_array()
    inactive = np.isnan(mine)
    if not np.array_equal(inactive, np.isnan(theirs)):
        return False
    names = self.config_space.at
    differing = np.flatnonzero(~inactive & (mine != theirs))
    return all(self[names[i]] == other[names[i]] for i in differing)


@dataclass(frozen=True)
class _Wave:
    """Consecutive conditions of ConfigSpace's change lookup that neither read nor write what
    another of them writes, applied as one array operation (see :func:`_change_plan`)."""

    children: np.ndarray  # the children of every condition of the wave
    defaults: np.ndarray  # each child's default (vector value)
    parents: np.ndarray  # per child and accepted parent value: the parent's index
    accepted: np.ndarray  # ... and the accepted value
    starts: np.ndarray | None  # each child's first pair; None when every child has one

    def apply(self, vector: np.ndarray) -> None:
        hits = vector[self.parents] == self.accepted
        on = hits if self.starts is None else np.logical_or.reduceat(hits, self.starts)
        current = vector[self.children]
        kept = np.where(np.isnan(current), self.defaults, current)
        vector[self.children] = np.where(on, kept, np.nan)


def _change_plan(dag: Any, hp_name: str) -> list[_Wave] | None:
    """ConfigSpace's ``change_hp_lookup[hp_name]`` as waves, or ``None`` when a condition is
    not a plain ``EqualsCondition`` or ``InCondition`` (then ConfigSpace's own loop runs).

    ConfigSpace walks the conditions in order: each one satisfied gives its NaN children their
    default, each one not satisfied makes its children NaN. A wave ends where a condition's
    parent or children were written by an earlier condition of the wave, so within a wave the
    order cannot matter and the waves in order do what the walk does."""
    from ConfigSpace import EqualsCondition, InCondition

    waves: list[_Wave] = []
    pending: list[tuple[int, list[float], np.ndarray]] = []
    written: set[int] = set()

    def close() -> None:
        per_child = [(c, p, values) for p, values, kids in pending for c in kids.tolist()]
        pending.clear()
        written.clear()
        if not per_child:  # conditions without children change nothing
            return
        children = np.array([c for c, _, _ in per_child], dtype=np.intp)
        lengths = [len(values) for _, _, values in per_child]
        waves.append(
            _Wave(
                children=children,
                defaults=dag.normalized_defaults[children],
                parents=np.repeat([p for _, p, _ in per_child], lengths).astype(np.intp),
                accepted=np.array([v for _, _, values in per_child for v in values]),
                starts=None if set(lengths) == {1} else np.cumsum([0, *lengths[:-1]]),
            )
        )

    for node in dag.change_hp_lookup.get(hp_name, []):
        condition = node.condition
        if type(condition) is EqualsCondition:
            accepted = [float(condition.vector_value)]
        elif type(condition) is InCondition:
            accepted = [float(v) for v in condition.vector_values]
        else:
            return None
        children = np.asarray(node.children_indices, dtype=np.intp)
        parent = int(condition.parent_vector_id)
        if pending and (parent in written or written.intersection(children.tolist())):
            close()
        pending.append((parent, accepted, children))
        written.update(children.tolist())
    if pending:
        close()
    return waves


_CHANGE_PLANS: dict[int, dict[str, list[_Wave] | None]] = {}  # id(dag) -> {name: waves}


def _for_object(cache: dict[int, Any], owner: Any, build: Callable[[], Any]) -> Any:
    """``cache``'s entry for ``owner``, built on first use and dropped when ``owner`` is
    collected (ConfigSpace's spaces and DAGs are not hashable, so the key is their id)."""
    key = id(owner)
    if key not in cache:
        cache[key] = build()
        weakref.finalize(owner, cache.pop, key, None)
    return cache[key]


def _change_hp_value(
    configuration_space: Any,
    configuration_array: np.ndarray,
    hp_name: str,
    hp_value: float,
    index: int,
) -> np.ndarray:
    """ConfigSpace 1.2's ``util.change_hp_value`` (set one entry, then activate or deactivate
    its dependants), wave by wave instead of condition by condition (:func:`_change_plan`).
    On the CASH space a change of the learner walks 145 conditions: most of SMAC's local search
    time. Same vectors as ConfigSpace's (tests/test_cash_methods.py)."""
    dag = configuration_space._dag
    plans = _for_object(_CHANGE_PLANS, dag, dict)
    if hp_name not in plans:
        plans[hp_name] = _change_plan(dag, hp_name)
    waves = plans[hp_name]
    if waves is None:
        return _CONFIGSPACE["change_hp_value"](
            configuration_space, configuration_array, hp_name, hp_value, index
        )
    configuration_array[index] = hp_value
    for wave in waves:
        wave.apply(configuration_array)
    return configuration_array


def _active_names(self: Any) -> Iterator[str]:
    """ConfigSpace 1.2's ``Configuration.__iter__`` (the active names, in the space's order),
    with the NaN test done on the whole vector at once."""
    space = self.config_space
    names, indices = _for_object(_ITERATION_ORDER, space, lambda: _iteration_order(space))
    active = ~np.isnan(self._vector[indices])
    return iter([name for name, on in zip(names, active.tolist(), strict=True) if on])


def _iteration_order(space: Any) -> tuple[list[str], np.ndarray]:
    """The space's names in its own iteration order, and their indices in a vector."""
    names = list(space)
    return names, np.array([space.index_of[name] for name in names])


_ITERATION_ORDER: dict[int, tuple[list[str], np.ndarray]] = {}  # id(space) -> names, indices


def _remembered_hash(self: Any) -> int:
    """ConfigSpace 1.2's ``Configuration.__hash__`` (the hash of its printout), remembered on
    the object with what the printout is made of: its vector and its values dictionary (a
    configuration built from values prints them; one whose ``__setitem__`` ran gets a new vector
    and a new dictionary). The same object hashed again costs a byte comparison."""
    vector = self._vector.tobytes()
    remembered = self.__dict__.get("_hpo_hash")
    if remembered is not None and remembered[0] == vector and remembered[1] is self._values:
        return remembered[2]
    value = hash(self.__repr__())
    self._hpo_hash = (vector, self._values, value)  # the dictionary held: its id is not reused
    return value


def _deactivated(
    configuration: dict | None, configuration_space: Any, vector: np.ndarray | None = None
) -> Any:
    """ConfigSpace 1.2's ``util.deactivate_inactive_hyperparameters`` for a vector (SMAC's
    Sobol initial design): the space's conditions applied to the vector in the order its own
    sampler applies them (a child of an inactive parent fails its condition in turn), then the
    configuration rebuilt from its values, as ConfigSpace's does once it has rebuilt it once per
    inactive hyperparameter (250 on the CASH space: 0.2 s per configuration). A configuration
    given as a dictionary goes to ConfigSpace's own."""
    if configuration is not None or vector is None:
        return _CONFIGSPACE["deactivate_inactive_hyperparameters"](
            configuration, configuration_space, vector
        )
    from ConfigSpace import Configuration

    column = np.array(vector, dtype=np.float64).reshape(-1, 1)
    for node in configuration_space._dag.minimum_conditions:
        if not node.condition.satisfied_by_vector_array(column)[0]:
            column[node.children_indices, 0] = np.nan
    active = Configuration(
        configuration_space, vector=column[:, 0], allow_inactive_with_values=True
    )
    return Configuration(configuration_space, values=dict(active))


@contextlib.contextmanager
def configspace_shortcuts() -> Iterator[None]:
    """Within the block, ConfigSpace's ``Configuration.__eq__``, ``__hash__`` and ``__iter__``,
    ``util.change_hp_value`` and ``deactivate_inactive_hyperparameters`` (also SMAC's reference
    to it) are this module's (same results, see the module);
    ConfigSpace's own are restored after, also when the block raises."""
    from ConfigSpace import Configuration, util
    from smac.utils import configspace as smacs_configspace  # its own name for deactivation

    if Configuration.__eq__ is _same_configuration:  # already inside a block
        yield
        return
    shortcuts = [
        (Configuration, "__eq__", _same_configuration),
        (Configuration, "__hash__", _remembered_hash),
        (Configuration, "__iter__", _active_names),
        (util, "change_hp_value", _change_hp_value),
        (util, "deactivate_inactive_hyperparameters", _deactivated),
        (smacs_configspace, "deactivate_inactive_hyperparameters", _deactivated),
    ]
    own = [(owner, name, getattr(owner, name)) for owner, name, _ in shortcuts]
    _CONFIGSPACE.update({name: function for _, name, function in own})
    for owner, name, function in shortcuts:
        setattr(owner, name, function)
    try:
        yield
    finally:
        for owner, name, function in own:
            setattr(owner, name, function)
