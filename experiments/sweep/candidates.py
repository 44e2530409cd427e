"""A benchmark's candidate optimizers: the ones its sweep folder remembers (``candidates.json``,
with the search path their method files are found on), checking new names and adding them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from experiments.configuration.config import UsageError
from experiments.configuration.search_path import group_choices
from experiments.sweep.experiment import chosen_profile, load_experiment, parts_of, unique
from hpo.data.catalog import unknown_choice_message as _unknown
from runfiles import layout
from runfiles.files import write_json_atomically
from runfiles.layout import RESULTS_ROOT


def _candidates_record(folder: Path) -> dict[str, list[str]]:
    path = Path(folder) / layout.CANDIDATES
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {key: list(record.get(key, [])) for key in ("optimizers", "search_path")}


def read_candidates(folder: Path) -> list[str]:
    """The candidate optimizers a benchmark sweep's folder remembers (none: ``[]``)."""
    return _candidates_record(folder)["optimizers"]


def read_search_path(folder: Path) -> list[str]:
    """Where the candidates' method files are found beside ``conf/`` (Hydra's search path:
    ``pkg://their_package/conf`` or ``file:///abs/conf``), as the sweep folder remembers it."""
    return _candidates_record(folder)["search_path"]


def checked_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path = RESULTS_ROOT,
    search_path: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """(every candidate, the search path): those the sweep folder remembers with ``names``
    added, each found in ``conf/optimizer/`` or on ``search_path``; writes nothing. An unknown
    optimizer, or an experiment without parts marked ``candidates: true``, is one line."""
    return _checked_candidates(experiment, profile, names, results_root, search_path)[:2]


def _checked_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path,
    search_path: Sequence[str],
) -> tuple[list[str], list[str], Path]:
    """:func:`checked_candidates` and the sweep folder that remembers them."""
    config = load_experiment(experiment)
    profile = chosen_profile(config, profile)
    if not any(settings.get("candidates") for _, settings in parts_of(config, profile)):
        raise UsageError(f"experiment {experiment!r} takes no candidates (e.g. benchmark does)")
    folder = layout.sweep_dir(config.get("name", experiment), profile, results_root)
    paths = unique([*read_search_path(folder), *search_path])
    choices = group_choices("optimizer", paths)
    for name in names:
        if name not in choices:
            raise UsageError(_unknown("optimizer", name, choices))
    return unique([*read_candidates(folder), *names]), paths, folder


def add_candidates(
    experiment: str,
    profile: str | None,
    names: Sequence[str],
    results_root: Path = RESULTS_ROOT,
    search_path: Sequence[str] = (),
) -> list[str]:
    """Add optimizer configs ``names`` to the parts of ``experiment`` marked ``candidates:
    true`` (a benchmark) (:func:`checked_candidates`), remembered in its sweep folder so that
    later commands (``run``, ``status``, a cluster shard, the report) plan the same runs;
    returns every candidate."""
    every, paths, folder = _checked_candidates(
        experiment, profile, names, results_root, search_path
    )
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomically(folder / layout.CANDIDATES, {"optimizers": every, "search_path": paths})
    return every
