"""The learner registry: configuration names -> estimator factories.

A factory builds an unfitted scikit-learn estimator from a configuration:
``factory(config, guard, seed, n_train)``. ``config`` holds only the learner's own parameters:
in a space that chooses among learners (thesis Table 5.1), a parameter named
``<learner>__<parameter>`` belongs to that learner (scikit-learn's ``step__parameter``
convention), and :func:`make_estimator` hands each factory its own parameters with the prefix
removed, plus the unprefixed ones (which factories pick by name, ignoring the rest).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hpo.learners.guard import FitGuard
from hpo.registry import Registry, import_attribute

Value = float | int | str
PREFIX_SEPARATOR = "__"


class LearnerFactory(Protocol):
    def __call__(
        self, config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
    ) -> Any: ...


DEFAULT_RESOURCES = ("train_fraction",)  # any learner can fit on a share of its training rows


@dataclass(frozen=True)
class Learner:
    """One learner as the registry holds it: its factory and what the run asks of it by
    capability, never by name (:func:`register_learner` says what each field means)."""

    factory: LearnerFactory
    task: str = "classification"
    settings_check: Callable[[Mapping[str, Any]], None] | None = None
    resources: tuple[str, ...] = DEFAULT_RESOURCES
    gram_parameter: str | None = None
    batch_trainer: str | None = None


def _estimator_by_path(name: str) -> Learner | None:
    """An estimator class named by its dotted path, registered on first use
    (:func:`register_estimator`); None for any other unknown name."""
    if "." not in name:
        return None
    register_estimator(name)
    return LEARNERS.get(name)


# The learners, by the name configurations use (``hpo.registry.Registry``: the one mechanism of
# every plug-in point); a dotted path not registered yet is an estimator class.
LEARNERS: Registry[Learner] = Registry("learner", fallback=_estimator_by_path)


def register_learner(
    name: str,
    task: str = "classification",
    settings_check: Callable[[Mapping[str, Any]], None] | None = None,
    resources: tuple[str, ...] = DEFAULT_RESOURCES,
    gram_parameter: str | None = None,
    batch_trainer: str | None = None,
) -> Callable[[LearnerFactory], LearnerFactory]:
    """Decorator registering ``factory`` under ``name``, the value configurations use; ``task``
    (``classification`` or ``regression``, :mod:`hpo.tasks`) is what the learner
    predicts;
    ``settings_check`` refuses bad fixed settings (a space's ``settings:``) before a run, in one
    line (a learner without one takes no settings); ``resources`` are the partial-evaluation
    kinds it serves (``epochs`` needs a learner that can continue training, seed 002).

    The speed-ups a learner offers, which the evaluator asks for by capability, never by name:
    ``gram_parameter``, the configuration's RBF width (``gamma``) when the estimator can fit on
    a precomputed kernel (``kernel="precomputed"``), which the evaluator then computes from
    squared distances it caches per training set; ``batch_trainer``, ``"module:function"`` of a
    function ``(estimators, X, y, validation, resource, checkpoints)`` that trains several of
    the learner's estimators as one batched model into their checkpoints
    (:meth:`hpo.evaluation.evaluator.Evaluator.pretrain`)."""
    from hpo.tasks import check_task

    check_task(task)

    def register(factory: LearnerFactory) -> LearnerFactory:
        if name in LEARNERS and LEARNERS[name].factory is not factory:
            raise ValueError(f"learner {name!r} is already registered")
        LEARNERS[name] = Learner(
            factory, task, settings_check, tuple(resources), gram_parameter, batch_trainer
        )
        return factory

    return register


def learner(name: str) -> Learner:
    """The registered learner ``name``, or for a dotted path (``sklearn.ensemble.
    ExtraTreesClassifier``) that estimator class's (:func:`register_estimator`); one
    ``ValueError`` line naming the choices otherwise."""
    return LEARNERS.get(name)


def factory_of(name: str) -> LearnerFactory:
    """The factory of learner ``name`` (:func:`learner`)."""
    return learner(name).factory


def learner_task(name: str) -> str:
    """The task of a registered learner (``ValueError`` naming the choices otherwise)."""
    return learner(name).task


def check_learner_settings(name: str, settings: Mapping[str, Any]) -> None:
    """Refuse ``settings`` (a space's fixed learner settings) that learner ``name`` cannot take,
    in one ``ValueError`` line."""
    check = learner(name).settings_check
    if check is not None:
        check(settings)
    elif settings:
        takes = sorted(n for n, entry in LEARNERS.items() if entry.settings_check is not None)
        raise ValueError(
            f"learner {name!r} takes no settings, got {', '.join(sorted(settings))}; "
            f"learners with settings: {', '.join(takes) or 'none'}"
        )


def learner_resources(name: str) -> tuple[str, ...]:
    """The resource kinds learner ``name`` can be partially evaluated by
    (``Proposal.resource``)."""
    return learner(name).resources


def learner_gram_parameter(name: str) -> str | None:
    """The configuration parameter of learner ``name``'s RBF width when it fits on a
    precomputed kernel (``register_learner(gram_parameter=…)``), else None."""
    entry = LEARNERS.get(name, None)  # an unregistered name offers no speed-up
    return None if entry is None else entry.gram_parameter


def learner_batch_trainer(name: str) -> Callable[..., Any] | None:
    """The function that trains several of learner ``name``'s estimators as one batched model
    (``register_learner(batch_trainer=…)``, imported on first use), else None."""
    entry = LEARNERS.get(name, None)
    path = None if entry is None else entry.batch_trainer
    return None if path is None else import_attribute(path)


def learner_names() -> tuple[str, ...]:
    """The registered learners, sorted."""
    return tuple(sorted(LEARNERS))


def learner_parameters(learner: str, config: Mapping[str, Value]) -> dict[str, Value]:
    """The parameters of ``config`` that belong to ``learner``, with their prefix removed."""
    own: dict[str, Value] = {}
    for key, value in config.items():
        owner, separator, name = key.partition(PREFIX_SEPARATOR)
        if not separator:
            own[key] = value
        elif owner == learner:
            own[name] = value
    return own


def _import_estimator(path: str) -> type:
    """The class at dotted ``path``: it must import and have ``fit``, ``predict`` and
    ``get_params`` (scikit-learn's estimator API); ``ValueError`` in one line otherwise."""
    import importlib

    module, _, name = path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ValueError(
            f"learner {path!r} does not import ({type(err).__name__}: {err}); name a "
            "scikit-learn-compatible estimator class by its dotted path, e.g. "
            "sklearn.ensemble.ExtraTreesClassifier"
        ) from err
    missing = [m for m in ("fit", "predict", "get_params") if not hasattr(found, m)]
    if not isinstance(found, type) or missing:
        lacks = ", ".join(missing) if missing else "a class"
        raise ValueError(
            f"learner {path!r} is not a scikit-learn-compatible estimator class (it lacks "
            f"{lacks}); it needs fit, predict and get_params"
        )
    return found


def register_estimator(path: str) -> LearnerFactory:
    """Register the scikit-learn-compatible estimator class at dotted ``path`` as a learner of
    that name (once). A configuration's parameters are its constructor's arguments (checked
    against ``get_params()``, :func:`check_learner_parameters`); ``random_state`` is set to
    the fit's seed when the class takes one; the task is a regressor's when scikit-learn's
    ``is_regressor`` says so, else classification. The fit guard's iteration limits do not
    apply (they are libsvm's and liblinear's)."""
    from sklearn.base import is_regressor

    cls = _import_estimator(path)
    default = cls()
    takes = set(default.get_params())
    seeded = "random_state" in takes

    def factory(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> Any:
        return cls(**config, **({"random_state": seed} if seeded else {}))

    task = "regression" if is_regressor(default) else "classification"
    _PARAMETERS[path] = frozenset(takes)

    def settings_check(settings: Mapping[str, Any]) -> None:
        check_learner_parameters(path, settings)

    register_learner(path, task=task, settings_check=settings_check)(factory)
    return factory


_PARAMETERS: dict[str, frozenset[str]] = {}  # an estimator learner's constructor arguments


def check_learner_parameters(learner: str, names: Iterable[str]) -> None:
    """Refuse, in one line, a space parameter that ``learner`` does not take (for estimator
    classes named by dotted path, whose arguments are known; a factory picks its own)."""
    factory_of(learner)
    takes = _PARAMETERS.get(learner)
    if takes is None:
        return
    unknown = sorted(set(names) - takes)
    if unknown:
        raise ValueError(
            f"learner {learner!r} takes no parameter {unknown[0]!r}; its parameters: "
            f"{', '.join(sorted(takes))}"
        )


def make_estimator(
    learner: str, config: Mapping[str, Value], guard: FitGuard, seed: int = 0, n_train: int = 0
) -> Any:
    """The unfitted estimator for ``learner`` at ``config``, to be fitted on ``n_train`` rows
    (which sets libsvm's and liblinear's iteration limits) with ``random_state=seed``."""
    return factory_of(learner)(learner_parameters(learner, config), guard, seed, n_train)


class _ReadRecorder(Mapping[str, Value]):
    """A configuration that records which keys a factory reads (a lookup, ``in`` or ``get``);
    iterating over it counts as reading every key, so a factory that copies the whole mapping is
    never said to ignore a parameter."""

    def __init__(self, values: Mapping[str, Value]) -> None:
        self._values = dict(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Value:
        self.read.add(key)
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        self.read.update(self._values)
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def parameters_read(learner: str, config: Mapping[str, Value], n_train: int = 100) -> set[str]:
    """The parameter names (prefix removed: :func:`learner_parameters`) that ``learner``'s
    factory asks ``config`` for when it builds the estimator, present or not: a space parameter
    outside this set never reaches the model (a misspelt name). A factory that stops at a missing
    parameter (``KeyError``) has asked for what it asked up to there; any other error of the
    factory is raised."""
    recorder = _ReadRecorder(learner_parameters(learner, config))
    factory = factory_of(learner)  # an unknown learner is its one line, not a missing key
    with contextlib.suppress(KeyError):
        factory(recorder, FitGuard(), 0, n_train)
    return set(recorder.read)


def given(config: Mapping[str, Value], names: tuple[str, ...]) -> dict[str, Value]:
    """The entries of ``config`` among ``names`` (estimator arguments; the others keep the
    estimator's defaults)."""
    return {name: config[name] for name in names if name in config}


BOOLEAN_TEXT = {"true": True, "false": False}


def as_bool(value: Value | bool, name: str = "value") -> bool:
    """A boolean from a configuration value: ``True``/``False`` or their text in any case
    (categorical choices are strings: ``"True"``, ``"false"``)."""
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text not in BOOLEAN_TEXT:
        raise ValueError(f"{name} must be one of True, False, got {value!r}")
    return BOOLEAN_TEXT[text]


def typed(config: Mapping[str, Value], types: Mapping[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """The entries of ``config`` among ``types``, each converted by its type (``int``, ``float``,
    ``str`` or :func:`as_bool`); absent ones are left out, so the estimator keeps its defaults
    (a configuration ``{}`` builds the estimator at scikit-learn's defaults, seed 003's
    baseline)."""
    return {name: convert(config[name]) for name, convert in types.items() if name in config}
