"""The one composition path: Hydra's compose API turns overrides into a plain run specification.

``run.py`` (a single run or a Hydra multirun job) and sweeps (``experiments.sweep``) both build
their runs here, from the same ``conf/`` tree and the same defaults, so a sweep's run and the
single run typed on the command line with the same values are the same run (same config hash,
same results file).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.initialize import get_gh_backup, restore_gh_from_backup
from omegaconf import OmegaConf

from experiments.configuration.command_line import check_overrides, open_settings, relabelled
from experiments.configuration.config import CONF_DIR, spec_from_config
from experiments.configuration.search_path import SEARCH_PATH_KEY, search_path, session_search_path
from experiments.configuration.spec import RunSpec


def override(key: str, value: Any) -> str:
    """``key=value`` in Hydra's override grammar (booleans and null as YAML)."""
    text = "null" if value is None else json.dumps(value) if isinstance(value, bool) else value
    return f"{key}={text}"


def compose_config(overrides: Sequence[str]) -> dict[str, Any]:
    """The composed config (a plain dict) for command-line style ``overrides``."""
    check_overrides(overrides)
    overrides = with_session_search_path(open_settings(overrides))
    if _inside_this_app():  # run.py's Hydra app: the same conf/ tree and its search path
        cfg = compose(config_name="config", overrides=list(overrides))
    else:  # no Hydra app, or another one (CARP-S's runner): ours for the call, then theirs back
        backup = get_gh_backup()
        GlobalHydra.instance().clear()
        try:
            with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
                cfg = compose(config_name="config", overrides=list(overrides))
        finally:
            restore_gh_from_backup(backup)
    return OmegaConf.to_container(cfg, resolve=True)


def with_session_search_path(overrides: Sequence[str]) -> list[str]:
    """``overrides`` whose ``hydra.searchpath`` also holds :func:`session_search_path` (an
    own experiment's methods and spaces are found by every run of its sweep)."""
    session = session_search_path()
    if not session:
        return list(overrides)
    given = search_path(overrides)
    kept = [o for o in overrides if o.partition("=")[0].lstrip("+~") != SEARCH_PATH_KEY]
    every = list(dict.fromkeys([*given, *session]))
    return [*kept, f"{SEARCH_PATH_KEY}=[{','.join(every)}]"]


def _inside_this_app() -> bool:
    """Whether the running Hydra app (if any) reads this repository's ``conf/``."""
    hydra = GlobalHydra.instance()
    if not hydra.is_initialized():
        return False
    sources = hydra.config_loader().get_sources()
    return any(s.scheme() == "file" and Path(s.path).resolve() == CONF_DIR for s in sources)


def compose_run(overrides: Sequence[str]) -> RunSpec:
    """The run that ``python run.py <overrides>`` would execute, labelled by what its overrides
    change (:func:`experiments.configuration.command_line.relabelled`)."""
    cfg = compose_config(overrides)
    return relabelled(spec_from_config(cfg), overrides, cfg["optimizer"].get("label"))
