"""The launcher overrides of ``python run.py -m``: an unknown launcher or launcher setting, or a
shard outside ``[0, n_shards)``, is one line before any job is submitted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from experiments.configuration.config import CONF_DIR, UsageError


def _launcher_settings(launcher: str) -> list[str]:
    """The settings of ``hydra/launcher=<launcher>``; raises :class:`UsageError` naming the
    launchers when it is unknown."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        choices = GlobalHydra.instance().config_loader().get_group_options("hydra/launcher")
        choices = [c for c in choices if not c.startswith("_")]
        if launcher not in choices:
            raise UsageError(f"unknown launcher {launcher!r}; valid: {', '.join(choices)}")
        try:
            cfg = compose("config", [f"hydra/launcher={launcher}"], return_hydra_config=True)
        except HydraException as err:  # e.g. the submitit plugin is not installed
            raise UsageError(f"launcher {launcher}: {str(err).splitlines()[0]}") from err
    return [str(key) for key in cfg.hydra.launcher]


def check_launcher_overrides(overrides: Sequence[str]) -> None:
    """Reject an unknown ``hydra/launcher`` choice or ``hydra.launcher.<setting>`` with one
    line (Hydra's own message spans several and exits 1)."""
    pairs = [o.split("=", 1) for o in overrides if "=" in o and not o.startswith("-")]
    launcher = ([v for k, v in pairs if k == "hydra/launcher"] or [None])[-1]
    settings = [
        k.lstrip("~").split(".")[2]
        for k, _ in pairs
        if k.startswith(("hydra.launcher.", "~hydra.launcher."))
    ]
    if launcher is None and not settings:
        return
    valid = _launcher_settings(launcher or "basic")
    for setting in settings:
        if setting not in valid:
            raise UsageError(
                f"unknown setting hydra.launcher.{setting} of launcher {launcher or 'basic'}; "
                f"valid: {', '.join(valid)}"
            )


def _override_values(overrides: Sequence[str], key: str, default: int) -> list[Any]:
    """Every value that ``key`` takes in ``overrides`` (a sweep such as ``range(0,8)`` gives
    each of its values)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    ours = [o for o in overrides if o.split("=", 1)[0] == key]
    if not ours:
        return [default]
    (override,) = OverridesParser.create().parse_overrides(ours[-1:])
    return list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]


def check_shards(overrides: Sequence[str]) -> None:
    """Reject a ``shard`` outside ``[0, n_shards)`` before any job is submitted (each job would
    fail on its own, after the queue)."""
    for n_shards in _override_values(overrides, "n_shards", 1):
        if not isinstance(n_shards, int) or n_shards < 1:
            raise UsageError(f"n_shards must be an integer >= 1, got {n_shards!r}")
        for shard in _override_values(overrides, "shard", 0):
            if not isinstance(shard, int) or not 0 <= shard < n_shards:
                raise UsageError(f"shard must be in [0, {n_shards}), got {shard!r}")
