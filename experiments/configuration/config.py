"""From Hydra configs to plain :class:`~experiments.run.runner.RunSpec` objects, and the checks that
turn a bad command line into one clear line (exit code 2) before anything runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from experiments.configuration.spaces import (
    plain_space,
    space_task,
    spaces_for_task,
    unread_parameters,
)
from experiments.configuration.spec import (
    BATCH_NETWORKS_SIZE,
    POST_HOC_DEFAULTS,
    Budget,
    Execution,
    Method,
    Outputs,
    RunSpec,
    Task,
)
from hpo.data.catalog import DatasetError, dataset_task, resolve_name, unknown_choice_message
from hpo.evaluation.isolation import EvaluationLimits
from hpo.evaluation.objective import ZERO_ONE
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard, factory_of, learner_names, make_estimator
from hpo.optimizers import check_settings, make_optimizer
from hpo.space.search_space import SpaceError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def if_space(space: str, name: str, then: Any, otherwise: Any) -> Any:
    """``${if_space:${space.name},<name>,<then>,<otherwise>}`` in a method config: a setting
    that depends on the search space (Chapter 4's BO-best is Chapter 5's GP-matern-ls in the
    scikit-learn space and Spearmint's GP-EI in the SVM space, thesis §4.4.1-4.4.2)."""
    return then if space == name else otherwise


OmegaConf.register_new_resolver("if_space", if_space, replace=True)


CONFIG_GROUPS = ("optimizer", "protocol", "space", "experiment")


TOP_LEVEL_KEYS = (
    "dataset",
    "budget",
    "time_budget",
    "time_budget_kind",
    "batch_networks",
    "batch_networks_size",
    "probabilities",
    "seed",
    "repetition",
    "data_dir",
    "results_dir",
    "rerun_stale",
    "journal",
    "curves",
    "pm_domain",
    "predictions",
    "vote_ties",
    "profile",
    "shard",
    "n_shards",
    "parts",
)


FIT_GUARD_FIELDS = tuple(FitGuard.__dataclass_fields__)


NESTED_PREFIXES = (
    "fit_guard.",
    "learner.",
    "limits.",
    "post_hoc.",
    "optimizer.",
    "protocol.",
    "space.",
    "hydra.",
    "hydra/",
)


PM_DOMAINS = ("space", "observed")


LIMITS_KEYS = ("enabled", *EvaluationLimits.__dataclass_fields__)  # conf/config.yaml ``limits``


class UsageError(ValueError):
    """A bad command-line value; the message is one line naming the valid choices."""


def _integer(name: str, value: Any, minimum: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number != value and str(number) != str(value) or number < minimum:
        raise UsageError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return number


def _stratify(value: Any) -> bool | tuple[str, ...]:
    """``protocol.stratify``: true, false, or a list of split names."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence):
        return tuple(str(v) for v in value)
    raise UsageError(f"protocol.stratify must be true, false or a list of splits, got {value!r}")


def _space(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The composed space declaration, checked (a malformed file is one line, exit 2)."""
    try:
        space = plain_space(declaration)
    except SpaceError as err:
        raise UsageError(str(err)) from err
    for learner in space.learners:
        if "." in learner:  # an estimator class by its dotted path
            try:
                factory_of(learner)
            except ValueError as err:
                raise UsageError(f"space {space.name!r}: {err}") from err
        elif learner not in learner_names():
            raise UsageError(
                f"space {space.name!r} names "
                + unknown_choice_message("learner", learner, learner_names())
            )
    for parameter, learner, read in unread_parameters(declaration)[:1]:
        raise UsageError(
            f"space {space.name!r}: parameter {parameter!r} is never read by learner "
            f"{learner!r} (a misspelt name, or a condition that gives it to the wrong learner); "
            f"{learner!r} reads: {', '.join(sorted(read)) or 'nothing'}"
        )
    return dict(declaration)


def check_task(space: Mapping[str, Any], dataset: str) -> None:
    """A space for another task than the dataset's is one line naming the spaces that fit."""

    try:
        learners_task = space_task(plain_space(space))
    except ValueError as err:
        raise UsageError(str(err)) from err
    task = dataset_task(dataset)
    if learners_task != task:
        raise UsageError(
            f"space={space['name']} is a {learners_task} space but dataset={dataset} is a {task} "
            f"dataset; valid spaces for it: {', '.join(spaces_for_task(task))}"
        )


def boolean(name: str, value: Any) -> bool:
    """A true boolean (``curves=maybe`` is refused, not read as true)."""
    if isinstance(value, bool):
        return value
    raise UsageError(f"{name} must be true or false, got {value!r}")


def spec_from_config(cfg: Mapping[str, Any], experiment: str | None = None) -> RunSpec:
    """The run described by a composed config (a mapping; OmegaConf configs work as they are)."""
    optimizer, protocol = cfg["optimizer"], cfg["protocol"]
    space = _with_learner(cfg["space"], (cfg.get("learner") or {}).get("_target_"))
    _choice("pm_domain", cfg.get("pm_domain", "space"), PM_DOMAINS)
    try:
        dataset = resolve_name(str(cfg["dataset"]))
        settings = _protocol_settings(protocol, optimizer)
        guard = FitGuard(**dict(cfg["fit_guard"]))
        limits = _limits(cfg.get("limits"))
    except (DatasetError, ValueError, TypeError) as err:
        raise UsageError(str(err)) from err
    _check_ensemble_folds(optimizer)
    space = _space(space)
    check_task(space, dataset)
    try:
        return RunSpec(
            Task(
                dataset=dataset,
                space=space,
                protocol=settings,
                protocol_name=str(protocol["name"]),
                objective=_objective(optimizer.get("performance_index"), space),
                fit_guard=guard,
            ),
            _method(cfg, optimizer),
            Budget(
                evaluations=_integer("budget", cfg["budget"], 1),
                seconds=_time_budget(cfg.get("time_budget")),
                clock=str(cfg.get("time_budget_kind", "wall")),
                limits=limits,
            ),
            _execution(cfg),
            _outputs(cfg, experiment),
            seed=_integer("seed", cfg["seed"], 0),
            repetition=_integer("repetition", cfg["repetition"], 0),
        )
    except ValueError as err:  # a part's own check: one line
        raise UsageError(str(err)) from err


def _protocol_settings(
    protocol: Mapping[str, Any], optimizer: Mapping[str, Any]
) -> ProtocolSettings:
    """The split protocol of a protocol file, with the method's reshuffling and selection split."""
    return ProtocolSettings(
        validation=protocol["validation"],
        n_folds=int(protocol["n_folds"]),
        valid_frac=float(protocol["valid_frac"]),
        test_frac=float(protocol["test_frac"]),
        selection_frac=float(protocol["selection_frac"]),
        selection_split=bool(optimizer["selection_split"]),
        reshuffle=bool(optimizer["reshuffle"]),
        train_cap=None if protocol["train_cap"] is None else int(protocol["train_cap"]),
        cap_selection_share=float(protocol["cap_selection_share"]),
        stratify=_stratify(protocol["stratify"]),
        standardize=boolean("protocol.standardize", protocol.get("standardize", False)),
    )


def _method(cfg: Mapping[str, Any], optimizer: Mapping[str, Any]) -> Method:
    """The method part: the optimizer's family and settings, its rules and post-run stages."""
    return Method(
        optimizer=optimizer_family(optimizer),
        rules=dict(optimizer["rules"]),
        settings=_optimizer_settings(optimizer),
        pm_domain=str(cfg.get("pm_domain", "space")),
        vote_ties=str(cfg.get("vote_ties", "lowest")),
        post_hoc=_post_hoc(cfg.get("post_hoc") or {}),
        stages=_stages(optimizer.get("model_selection")),
    )


def _execution(cfg: Mapping[str, Any]) -> Execution:
    """How the run executes where that changes numbers: networks trained batched, how many."""
    return Execution(
        batch_networks={False: "off", True: "on"}.get(
            cfg.get("batch_networks", "off"), cfg.get("batch_networks")
        ),
        batch_size=_integer(
            "batch_networks_size", cfg.get("batch_networks_size", BATCH_NETWORKS_SIZE), 1
        ),
    )


def _outputs(cfg: Mapping[str, Any], experiment: str | None) -> Outputs:
    """What the run writes beside its final outcomes (curves, predictions, probabilities)."""
    return Outputs(
        curves=boolean("curves", cfg.get("curves", True)),
        predictions=boolean("predictions", cfg.get("predictions", False)),
        probabilities=boolean("probabilities", cfg.get("probabilities", False)),
        experiment=experiment,
    )


def _with_learner(space: Mapping[str, Any], target: str | None) -> Mapping[str, Any]:
    """The space, its one learner replaced by the estimator class ``learner._target_`` names
    (a space that chooses among learners, or a CASH space, has no one learner to replace)."""
    if not target:
        return space
    if not isinstance(space.get("learner"), str):
        raise UsageError(
            f"learner._target_ replaces a space's one learner, and space {space.get('name')!r} "
            "has none (it chooses among learners); pick a space with one, e.g. space=trees"
        )
    return {**space, "learner": str(target)}


def _limits(value: Mapping[str, Any] | None) -> EvaluationLimits | None:
    """``limits`` (conf/config.yaml): ``None`` unless ``limits.enabled`` (seed 004 §4.1)."""
    settings = dict(value or {})
    enabled = settings.pop("enabled", False)
    if not boolean("limits.enabled", enabled):
        return None
    unknown = sorted(set(settings) - set(LIMITS_KEYS))
    if unknown:
        raise UsageError(unknown_choice_message("limits setting", unknown[0], list(LIMITS_KEYS)))
    return EvaluationLimits(**settings)


def _time_budget(value: Any) -> float | None:
    """``time_budget``: seconds > 0, or null."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0 or isinstance(value, bool):
        raise UsageError(f"time_budget must be a number of seconds > 0 or null, got {value!r}")
    return seconds


def _objective(settings: Any, space: Mapping[str, Any]) -> dict[str, Any]:
    """The run's objective (:mod:`hpo.evaluation.objective`): the zero-one error, or the
    performance index a method config sets as ``optimizer.performance_index`` (seed 003, eq.
    3.7), checked: bad weights, an unknown metric, and a metric that needs probabilities with a
    learner of the space that gives none are one line each."""
    from hpo.evaluation.performance_index import (
        PerformanceIndex,
        PerformanceIndexError,
        gives_probabilities,
    )

    if settings is None:
        return dict(ZERO_ONE)
    settings = {k: dict(v) if isinstance(v, Mapping) else v for k, v in dict(settings).items()}
    try:
        index = PerformanceIndex(**settings)
        if index.needs_probabilities():
            for learner in plain_space(space).learners:
                estimator = make_estimator(learner, {}, FitGuard())
                index.check_learner(learner, gives_probabilities(estimator))
    except (PerformanceIndexError, TypeError) as err:
        raise UsageError(f"optimizer.performance_index: {err}") from err
    return {"name": "performance_index", **settings}


def _stages(settings: Any) -> dict[str, dict[str, Any]]:
    """The run's post-run stages (:mod:`hpo.stages`): seed 003's model selection when a
    method config sets ``optimizer.model_selection`` (§3.5), checked (α outside (0, 1), k < 1,
    bad importances: one line)."""
    from hpo.significance.stage import SelectionSettings

    if settings is None:
        return {}
    settings = {k: dict(v) if isinstance(v, Mapping) else v for k, v in dict(settings).items()}
    try:
        SelectionSettings(**settings)
    except (ValueError, TypeError) as err:
        raise UsageError(f"optimizer.model_selection: {err}") from err
    return {"model_selection": settings}


def _check_ensemble_folds(optimizer: Mapping[str, Any]) -> None:
    """Ensembles combine models fold by fold: EO and the post_hoc rule need every model
    validated on the same folds (one line, exit 2, before anything runs)."""
    from hpo.rules.final_selection import ENSEMBLE_OPTIMIZER, POST_HOC

    needs = [r for r in dict(optimizer["rules"]).values() if r in (POST_HOC, ENSEMBLE_OPTIMIZER)]
    if optimizer_family(optimizer) == "eo":
        needs.append("the eo optimizer")
    if needs and bool(optimizer["reshuffle"]):
        raise UsageError(
            f"optimizer.reshuffle=true: {needs[0]} needs every model's validation predictions "
            "on the same folds; set optimizer.reshuffle=false"
        )


def _post_hoc(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``post_hoc`` block, checked by building the rule (an unknown loss, a size below 1 or
    an unknown key is one line, exit 2)."""
    from hpo.rules.ensemble import PostHocRule

    settings = {**POST_HOC_DEFAULTS, **dict(settings)}
    unknown = sorted(set(settings) - set(POST_HOC_DEFAULTS))
    if unknown:
        raise UsageError(
            unknown_choice_message("post_hoc setting", unknown[0], list(POST_HOC_DEFAULTS))
        )
    try:
        PostHocRule(**settings)
    except (TypeError, ValueError) as err:
        raise UsageError(f"post_hoc: {err}") from err
    return settings


def _choice(name: str, value: Any, valid: Sequence[str]) -> str:
    if value not in valid:
        raise UsageError(unknown_choice_message(name, str(value), valid))
    return str(value)


def optimizer_family(optimizer: Mapping[str, Any]) -> str:
    """A method file's optimizer: its ``family`` (a name of ``hpo.optimizers.CLASSES``) or, for
    a class of another package, its ``_target_`` (a dotted path) with ``_partial_: true`` (the
    framework supplies the space, budget and random generator; ``settings:`` are the rest of
    the class's keyword arguments)."""
    family, target = optimizer.get("family"), optimizer.get("_target_")
    if (family is None) == (target is None):
        raise UsageError(
            f"optimizer {optimizer.get('name')!r} must give exactly one of family "
            f"(got {family!r}) or _target_ (got {target!r})"
        )
    if target is None:
        return str(family)
    if optimizer.get("_partial_") is not True:
        raise UsageError(
            f"optimizer _target_ {target!r} needs _partial_: true (the framework supplies the "
            "space, budget and rng; give the other arguments under settings:)"
        )
    if "." not in str(target):
        raise UsageError(f"optimizer _target_ {target!r} is not a dotted path (my_pkg.MyClass)")
    return str(target)


def _optimizer_settings(optimizer: Mapping[str, Any]) -> dict[str, Any]:
    """``optimizer.settings``, checked against the keyword arguments of the family's class (a
    value the class refuses is found where the run builds it, once, or by :func:`check_method`
    for a sweep, before anything runs)."""
    family, settings = optimizer_family(optimizer), dict(optimizer.get("settings") or {})
    try:
        check_settings(family, settings)
    except (KeyError, ValueError, TypeError) as err:
        raise UsageError(str(err).strip('"')) from err
    return settings


def check_method(spec: RunSpec) -> None:
    """Build the run's optimizer on its space, as the run will, and drop it: a setting out of
    range, or a conditional kernel on a space without conditions, is one line here. For a
    sweep, which checks each of its methods once before any of its runs starts; a single run
    builds its optimizer once, when it starts, and refuses the same settings there."""
    method = spec.method
    try:
        make_optimizer(
            method.optimizer,
            spec.task.search_space,
            2,
            np.random.default_rng(0),
            **dict(method.settings),
        )
    except (KeyError, ValueError, TypeError) as err:
        raise UsageError(str(err).strip('"')) from err
