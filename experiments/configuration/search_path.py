"""Where configuration files are found beside ``conf/``: Hydra's search path of a command
(``hydra.searchpath=[pkg://my_pkg/conf]``), the session's (``HPO_SEARCH_PATH``, read by every
composition of this process and the processes it starts), the options of a config group found on
it, and the ``${package_file:…}`` resolver for files an own package ships."""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from omegaconf import OmegaConf

from experiments.configuration.config import CONF_DIR, UsageError


def group_choices(group: str, search_path: Sequence[str] = ()) -> list[str]:
    """The config files available in ``conf/<group>/`` and in ``<group>/`` of every folder of
    Hydra's ``search_path`` and of :func:`session_search_path` (``pkg://`` or ``file://``
    entries; without ``.yaml``)."""
    names = {p.stem for p in (CONF_DIR / group).glob("*.yaml")}
    for entry in _unique_entries([*search_path, *session_search_path()]):
        folder = search_path_folder(entry) / group
        if folder.is_dir():
            names |= {p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml")}
    return sorted(names)


SEARCH_PATH_KEY = "hydra.searchpath"


SEARCH_PATH_SCHEMES = ("pkg://", "file://")


# Where a sweep's own experiment, method and space files are found beside conf/, for this process
# and the processes it starts (workers, cluster jobs): set by ``--search-path`` of the sweep and
# reproduce commands and by run.py's ``hydra.searchpath``; comma separated.
SEARCH_PATH_ENV = "HPO_SEARCH_PATH"


def session_search_path() -> list[str]:
    """The search path this process composes with (:data:`SEARCH_PATH_ENV`), checked."""
    entries = [e for e in os.environ.get(SEARCH_PATH_ENV, "").split(",") if e]
    for entry in entries:
        search_path_folder(entry)  # an unknown scheme or package: one line
    return entries


def use_search_path(entries: Sequence[str]) -> list[str]:
    """Add ``entries`` (``pkg://my_pkg/conf``, ``file:///abs/conf``) to the search path every
    later composition of this process and of its children reads; returns the whole path."""
    for entry in entries:
        search_path_folder(entry)
    every = _unique_entries([*session_search_path(), *entries])
    os.environ[SEARCH_PATH_ENV] = ",".join(every)
    return every


def _unique_entries(entries: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entries))


def package_file(path: str) -> str:
    """The file a package ships, for config files: ``${package_file:my_pkg/data/x.csv}`` is the
    absolute path of ``data/x.csv`` inside package ``my_pkg`` (an own experiment's datasets,
    ``dataset=file:${package_file:…}``); one line when the package does not import."""
    package, _, inside = path.partition("/")
    try:
        folder = resources.files(package)
    except (ImportError, TypeError) as err:
        raise UsageError(
            f"package_file: {path}: package {package!r} does not import ({err})"
        ) from None
    return str(folder / inside)


OmegaConf.register_new_resolver("package_file", package_file, replace=True)


def search_path(overrides: Sequence[str]) -> list[str]:
    """The entries of ``hydra.searchpath=[...]`` among ``overrides`` (empty when none)."""
    entries: list[str] = []
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+~") == SEARCH_PATH_KEY:
            items = value.strip().strip("[]").split(",")
            entries += [item.strip().strip("'\"") for item in items if item.strip()]
    return entries


def search_path_folder(entry: str) -> Traversable:
    """The folder of one search-path entry: ``pkg://my_pkg/conf`` (a package's resources, as
    Hydra reads them) or ``file:///abs/conf`` (``UsageError`` for another scheme, a package that
    does not import, or a missing folder)."""
    if entry.startswith("file://"):
        folder: Traversable = Path(entry[len("file://") :])
    elif entry.startswith("pkg://"):
        module = entry[len("pkg://") :].replace("/", ".").rstrip(".")
        try:
            folder = resources.files(module)
        except (ImportError, TypeError) as err:
            raise UsageError(
                f"{SEARCH_PATH_KEY}: {entry} does not import ({err}); install the package that "
                "ships it (pip install -e <its folder>)"
            ) from None
    else:
        raise UsageError(
            f"{SEARCH_PATH_KEY}: {entry!r} has no known scheme; valid: "
            f"{', '.join(SEARCH_PATH_SCHEMES)}"
        )
    if not folder.is_dir():
        raise UsageError(f"{SEARCH_PATH_KEY}: {entry} is not a folder")
    return folder
