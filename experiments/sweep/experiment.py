"""An experiment file and its profiles: loading it (by name through Hydra, from the session's
search path, or by path), its profiles and each profile's parts with the experiment's shared
settings under them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from experiments.configuration.compose import compose_config, override
from experiments.configuration.config import UsageError
from experiments.configuration.search_path import group_choices, session_search_path
from hpo.data.catalog import unknown_choice_message as _unknown

SHARED_SETTINGS = (
    "space",
    "budget",
    "seed",
    "curves",
    "pm_domain",
    "predictions",
    "vote_ties",
)


def experiment_choices() -> list[str]:
    return group_choices("experiment")


def load_experiment(name: str) -> dict[str, Any]:
    """The experiment's config as a dict, composed by Hydra (``conf/experiment/<name>.yaml``, or
    ``experiment/<name>.yaml`` of a folder of the session's search path,
    :func:`experiments.configuration.search_path.use_search_path`), or a YAML file given by path;
    raises :class:`UsageError` naming the valid choices and where they were searched."""
    if name.endswith(".yaml"):
        if not Path(name).is_file():
            raise UsageError(f"experiment file {name} not found")
        return OmegaConf.to_container(OmegaConf.load(name), resolve=True)
    if name not in experiment_choices():
        searched = ", ".join(["conf (this repository)", *session_search_path()])
        raise UsageError(
            f"{_unknown('experiment', name, experiment_choices())}; search path: {searched} "
            "(an own experiment file: --search-path pkg://my_pkg/conf)"
        )
    return compose_config([f"experiment={name}"])["experiment"]


def shared_overrides(settings: Mapping[str, Any]) -> list[str]:
    """The experiment's settings shared by all its runs, as overrides."""
    overrides = [override(k, settings[k]) for k in SHARED_SETTINGS if k in settings]
    guard = settings.get("fit_guard") or {}
    return overrides + [override(f"fit_guard.{k}", v) for k, v in guard.items()]


def unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def parts_of(config: Mapping[str, Any], profile: str) -> list[tuple[str, dict[str, Any]]]:
    """``(part, settings)`` of a profile: the experiment's shared settings under each part's."""
    shared = (*SHARED_SETTINGS, "fit_guard", "openml", "overrides", "method_overrides", "seeds")
    base = {k: v for k, v in config.items() if k in shared}
    return [(part, {**base, **c}) for part, c in config["profiles"][profile]["parts"].items()]


def chosen_profile(config: Mapping[str, Any], profile: str | None) -> str:
    """``profile``, or the experiment's first; an unknown one is one line naming the choices."""
    profiles = config["profiles"]
    profile = profile or next(iter(profiles))
    if profile not in profiles:
        raise UsageError(_unknown("profile", profile, profiles))
    return profile
