"""The command line's overrides before Hydra composes them: unknown keys, config-group options
and datasets are one line each (exit 2), a method's settings are add-or-override, and the labels
of a run whose method settings were overridden say what ran."""

from __future__ import annotations

import re
from collections.abc import Sequence

from experiments.configuration.config import (
    CONFIG_GROUPS,
    FIT_GUARD_FIELDS,
    LIMITS_KEYS,
    NESTED_PREFIXES,
    TOP_LEVEL_KEYS,
    UsageError,
)
from experiments.configuration.search_path import group_choices, search_path
from experiments.configuration.spec import (
    POST_HOC_DEFAULTS,
    RunSpec,
)
from hpo.data.catalog import DatasetError, resolve_name, unknown_choice_message

SWEEP_FUNCTIONS = ("glob(", "range(", "choice(", "interval(", "tag(", "sort(", "shuffle(")


def _listed_values(value: str) -> list[str]:
    """The values of a Hydra multirun list (``gp,rs``); [] for a sweep function (``glob(gp*)``),
    which Hydra expands and each job's own composition then checks."""
    if value.startswith(SWEEP_FUNCTIONS):
        return []
    return [v.strip() for v in value.split(",")]


OPEN_SETTINGS = "optimizer.settings."


def open_settings(overrides: Sequence[str]) -> list[str]:
    """``overrides`` with ``optimizer.settings.<name>=`` made add-or-override (``++``), so a
    setting the method's file does not list can be given as plainly as one it does (the
    family's class still refuses unknown names, one line)."""
    return [f"++{o}" if o.startswith((OPEN_SETTINGS, "optimizer.label=")) else o for o in overrides]


def check_overrides(overrides: Sequence[str]) -> None:
    """Reject unknown keys, config-group options and datasets with one line each (every value
    of a multirun list is checked). A config group's option may come from a folder of Hydra's
    search path (``hydra.searchpath=[pkg://my_pkg/conf]``); an unknown one lists the path."""
    path = search_path(overrides)
    for override in overrides:
        if override.startswith("-") or "=" not in override:
            continue
        key, value = override.split("=", 1)
        key = key.lstrip("+~")
        if key in CONFIG_GROUPS:
            choices = group_choices(key, path)
            for choice in _listed_values(value):
                if choice not in choices:
                    searched = ", ".join(["conf (this repository)", *path])
                    message = unknown_choice_message(key, choice, choices)
                    raise UsageError(f"{message}; search path: {searched}")
        elif key == "dataset":
            for name in _listed_values(value):
                try:
                    resolve_name(name)
                except DatasetError as err:
                    raise UsageError(str(err)) from err
        elif key.startswith("post_hoc.") and key[len("post_hoc.") :] not in POST_HOC_DEFAULTS:
            raise UsageError(
                unknown_choice_message("post_hoc setting", key[9:], list(POST_HOC_DEFAULTS))
            )
        elif key.startswith("limits.") and key[len("limits.") :] not in LIMITS_KEYS:
            raise UsageError(unknown_choice_message("limits setting", key[7:], list(LIMITS_KEYS)))
        elif key not in TOP_LEVEL_KEYS and not key.startswith(NESTED_PREFIXES):
            valid = [*CONFIG_GROUPS, *TOP_LEVEL_KEYS, *(f"fit_guard.{f}" for f in FIT_GUARD_FIELDS)]
            raise UsageError(unknown_choice_message("setting", key, valid))


# Overrides of a method file's keys that keep its algorithm, so keep its label: a post-run stage
# (its rows have a type of their own; the method's trace is unchanged) and the label itself.
LABEL_NEUTRAL_KEYS = ("optimizer.model_selection", "optimizer.label")


def label_overrides(overrides: Sequence[str]) -> list[tuple[str, str]]:
    """The (setting, value) pairs of ``overrides`` that change a method's algorithm: every
    ``optimizer.*`` key but :data:`LABEL_NEUTRAL_KEYS`, named relative to ``optimizer.settings.``
    (or ``optimizer.``), a class (a ``_target_``, a facade) by its name
    (``sampler=RandomSampler``)."""
    found = []
    for item in overrides:
        if "=" not in item:
            continue
        key, value = item.split("=", 1)
        key = key.lstrip("+~")
        if not key.startswith("optimizer.") or key.startswith(LABEL_NEUTRAL_KEYS):
            continue
        name = key.removeprefix(OPEN_SETTINGS).removeprefix("optimizer.")
        name = name.removesuffix("._target_")  # a class by the setting that holds it
        if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.[A-Z]\w*", value):  # a class's path
            value = value.rsplit(".", 1)[-1]
        found.append((name, value))
    return found


def relabelled(spec: RunSpec, overrides: Sequence[str], label: str | None = None) -> RunSpec:
    """``spec`` with labels that say what ran: ``label`` (``optimizer.label=NAME``) for a run of
    one method, else each method's name with the algorithm-changing overrides appended
    (``optuna_tpe[sampler=RandomSampler]``); unchanged when there are none. Two runs whose
    settings differ never share a label, so the analysis never pools them."""
    if label is not None:
        if len(spec.method.rules) != 1:
            raise UsageError(
                f"optimizer.label names a run of one method; this run reports "
                f"{', '.join(spec.method.rules)}: leave the derived labels"
            )
        label = str(label)
        if not label or any(c in label for c in "/:\\"):
            raise UsageError(f"optimizer.label {label!r} must be non-empty, without / : or \\")
        return spec.with_labels({label: next(iter(spec.method.rules.values()))})
    changed = label_overrides(overrides)
    if not changed:
        return spec
    suffix = "[" + ",".join(f"{k}={v}" for k, v in changed) + "]"
    return spec.with_labels({f"{m}{suffix}": r for m, r in spec.method.rules.items()})
