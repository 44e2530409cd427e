"""One mechanism for every plug-in point: a :class:`Registry` maps names to objects.

Every extension point of the framework — optimizer families, GP kernels, final-selection rules,
objectives, post-run stages, trial loops, report plug-ins — is a ``Registry``: an entry is
registered under its name as the object itself or as ``"module:attribute"`` (imported the first
time it is asked for, so a heavy or optional dependency costs nothing until used); a registry may
also take names it does not hold through a fallback (a class's dotted path, as an outside
optimizer's ``_target_``). An unknown name is one line, the same at every point: the kind, the
value, the closest names and the valid ones (:func:`unknown_choice_message`), raised as
:class:`UnknownChoice` (a ``KeyError`` and a ``ValueError`` both, whose text is that line).

Like :mod:`hpo.records`, this module is the shared vocabulary of every layer: it imports nothing
of the library.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_MISSING = object()
# Every optimizer config (61) is listed; datasets (121+) are not.
MAX_LISTED_CHOICES = 90


def unknown_choice_message(
    kind: str, value: str, choices: Iterable[str], list_command: str | None = None
) -> str:
    """One line: the bad value and the valid choices, closest matches first. All choices are
    listed when there are at most :data:`MAX_LISTED_CHOICES`; otherwise the close matches and
    the command that lists them all."""
    choices = sorted(choices)
    close = difflib.get_close_matches(str(value), choices, n=5, cutoff=0.5)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    if len(choices) <= MAX_LISTED_CHOICES:
        listing = ", ".join(close + [c for c in choices if c not in close])
    else:
        command = list_command or "see the documentation"
        shown = ", ".join(close) + "; " if close else ""
        listing = f"{shown}{len(choices)} in all (list them: {command})"
    return f"unknown {kind} {value!r}{hint}; valid choices: {listing}"


class UnknownChoice(KeyError, ValueError):
    """A name no registry entry has; its text is :func:`unknown_choice_message`'s one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Names -> objects of one kind (``kind`` names it in messages).

    ``entries``: the initial ones (objects, or ``"module:attribute"`` strings imported on first
    use); ``fallback``: how a name that is not registered is resolved instead (``None``: it is
    unknown), e.g. a dotted path imported as a class; ``list_command``: the command that lists
    the names, for a registry too long to list in a message."""

    def __init__(
        self,
        kind: str,
        entries: dict[str, T | str] | None = None,
        fallback: Callable[[str], T | None] | None = None,
        list_command: str | None = None,
    ) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}
        self._loaded: dict[str, T] = {}
        self.fallback = fallback
        self.list_command = list_command
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T | str | None = None) -> Any:
        """Register ``entry`` under ``name`` (a name taken by another entry is a
        ``ValueError``); without ``entry``, a decorator registering what it decorates."""
        if entry is None:

            def decorate(obj: T) -> T:
                self.register(name, obj)
                return obj

            return decorate
        if name in self._entries and self._entries[name] is not entry:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        self._loaded.pop(name, None)
        return entry

    def get(self, name: str, default: Any = _MISSING) -> T:
        """The object registered as ``name`` (imported on first use), or the fallback's;
        ``default`` if given and ``name`` is not registered (as ``dict.get``), else
        :class:`UnknownChoice` naming the valid names."""
        if default is not _MISSING and name not in self._entries:
            return default
        if name in self._loaded:
            return self._loaded[name]
        if name in self._entries:
            entry = self._entries[name]
            obj = import_attribute(entry) if isinstance(entry, str) and ":" in entry else entry
            self._loaded[name] = obj  # type: ignore[assignment]
            return obj  # type: ignore[return-value]
        found = self.fallback(name) if self.fallback is not None else None
        if found is None:
            raise UnknownChoice(
                unknown_choice_message(self.kind, name, self.names(), self.list_command)
            )
        return found

    def names(self) -> tuple[str, ...]:
        """The registered names, in the order they were registered."""
        return tuple(self._entries)

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __setitem__(self, name: str, entry: T | str) -> None:  # tests replace an entry
        self._entries[name] = entry
        self._loaded.pop(name, None)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        self._loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        """(name, object) of every entry, each imported."""
        return ((name, self.get(name)) for name in self.names())


def import_attribute(path: str) -> Any:
    """The attribute ``module:attribute`` names (imported)."""
    module, _, attribute = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj
