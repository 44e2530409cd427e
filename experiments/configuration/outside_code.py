"""What code from outside this repository a run depends on, as a part of its identity.

A run may name classes of other packages: an optimizer by its dotted path (a method file's
``_target_``), a class inside an optimizer's settings (Optuna's sampler, a CARP-S optimizer:
any ``_target_``), an estimator class as the learner, a selection rule's class. Their code
decides the results as much as the settings do, so each enters the run's identity
(:meth:`experiments.configuration.spec.RunSpec.identity`) by

* its distribution's name and version (``importlib.metadata``; the package's ``__version__``
  where no distribution is installed), and
* a fingerprint of its source: SHA-256 over the ``.py`` files of its top-level package when
  that package is a user's (found on the path or installed editable, i.e. outside
  ``site-packages``), else over the module file that defines the class (an installed release,
  whose version pins the rest).

A change of either is a new run, never a reused result. This repository's own code
(``hpo``, ``experiments``, ``analysis``, ``benchmarks``) is not part of the identity: a new commit
must not invalidate finished results; its revision is provenance (``rerun_stale``).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

OWN_PACKAGES = ("hpo", "runfiles", "experiments", "analysis", "benchmarks")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")


def targets_in(value: Any) -> list[str]:
    """Every ``_target_`` string in a (nested) mapping or list, in order of appearance."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == "_target_" and isinstance(item, str):
                found.append(item)
            else:
                found.extend(targets_in(item))
    elif isinstance(value, list | tuple):
        for item in value:
            found.extend(targets_in(item))
    return found


def outside_classes(
    optimizer: str, settings: Mapping[str, Any], classes: Iterable[str]
) -> list[str]:
    """The dotted paths of the classes a run names that are not this repository's: the optimizer
    (a dotted path), the ``_target_`` classes of its settings and the other ``classes`` named by
    a dotted path (learners, selection rules); sorted, each once."""
    named = [optimizer, *targets_in(settings), *classes]
    return sorted(
        {path for path in named if DOTTED.match(path) and path.split(".")[0] not in OWN_PACKAGES}
    )


def outside_code(
    optimizer: str, settings: Mapping[str, Any], classes: Iterable[str]
) -> dict[str, Any]:
    """{dotted path: {distribution, version, source}} for :func:`outside_classes` (empty for a
    run of this repository's code alone)."""
    return {path: code_fingerprint(path) for path in outside_classes(optimizer, settings, classes)}


def code_fingerprint(path: str) -> dict[str, str]:
    """The distribution, version and source fingerprint of the class at dotted ``path``."""
    module_name, _, _ = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # the run itself refuses it in one line; identity says what it can
        return {"distribution": module_name.split(".")[0], "version": "unknown", "source": ""}
    obj = getattr(module, path.rpartition(".")[2], None)
    defined_in = inspect.getmodule(obj) if obj is not None else module
    top = module_name.split(".")[0]
    distribution, version = _distribution(top)
    root, files = _source_files(top, defined_in or module)
    return {"distribution": distribution, "version": version, "source": _digest(root, files)}


@lru_cache(maxsize=64)
def _distribution(top: str) -> tuple[str, str]:
    """(distribution name, version) of a top-level package."""
    for name in metadata.packages_distributions().get(top, []):
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    version = getattr(importlib.import_module(top), "__version__", None)
    return top, str(version) if version is not None else "unknown"


def _source_files(top: str, module: Any) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    """(root, files): the files whose bytes fingerprint the code, a user's whole package or an
    installed release's one module file, each as (path, mtime_ns, size) so that the digest's
    cache sees a rewritten file; their names are taken relative to root."""
    package = importlib.import_module(top)
    root = Path(getattr(package, "__file__", "") or "").parent
    installed = any(part in ("site-packages", "dist-packages") for part in root.parts)
    if getattr(package, "__path__", None) and not installed:
        paths = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    else:
        source = getattr(module, "__file__", None)
        paths = [Path(source)] if source else []
        root = paths[0].parent if paths else root
    stats = []
    for p in paths:
        stat = p.stat()
        stats.append((str(p), stat.st_mtime_ns, stat.st_size))
    return str(root), tuple(stats)


@lru_cache(maxsize=256)
def _digest(root: str, files: tuple[tuple[str, int, int], ...]) -> str:
    """SHA-256 (16 hex digits) over the files' names relative to ``root`` and their bytes (the
    same code elsewhere on disk has the same fingerprint)."""
    if not files:
        return ""
    digest = hashlib.sha256()
    for path, _, _ in files:
        digest.update(Path(path).relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(Path(path).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]
