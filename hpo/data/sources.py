"""The registry of dataset sources: datasets named ``<prefix>:<rest>`` (``openml:31``,
``file:PATH``, a package's own) and how each prefix loads, tells its task and checks a name.

A source module registers itself when imported (:mod:`hpo.data.openml_sets`,
:mod:`hpo.data.files`); a package's sources are entry points of :data:`ENTRY_POINT_GROUP`, found
when a name needs them. :mod:`hpo.data.catalog` imports the built-in ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from hpo.data.types import Dataset
from hpo.registry import Registry


@dataclass(frozen=True)
class Source:
    """Datasets named ``<prefix>:<rest>``: how to load one (``load(name, data_dir)``), its task
    without a full load (``task(name)``) and a pre-flight check that raises a one-line
    :class:`~hpo.data.types.DatasetError` (``check(name)``)."""

    load: Callable[[str, str | os.PathLike[str] | None], Dataset]
    task: Callable[[str], str]
    check: Callable[[str], None]


# The sources by prefix (``hpo.registry.Registry``, the one mechanism of every plug-in point).
SOURCES: Registry[Source] = Registry("dataset source")
ENTRY_POINT_GROUP = "hpo.data_sources"  # a package's sources: name = prefix, value = a Source


def register_source(prefix: str, source: Source) -> None:
    """Make ``dataset=<prefix>:…`` load through ``source`` (a package may instead declare it
    as an entry point of :data:`ENTRY_POINT_GROUP`, found when a name needs it)."""
    if not prefix.isidentifier():
        raise ValueError(f"a dataset source's prefix must be a name, got {prefix!r}")
    SOURCES[prefix] = source


def source_of(name: str) -> Source | None:
    """The source of a ``<prefix>:<rest>`` name (None for a catalog name)."""
    prefix, sep, _ = name.partition(":")
    if not sep or not prefix.isidentifier():
        return None
    if prefix not in SOURCES:
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP, name=prefix):
            register_source(prefix, entry.load())
    return SOURCES.get(prefix, None)
