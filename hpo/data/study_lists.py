"""The studies' dataset lists, read once from ``conf/datasets/studies.yaml`` (and seed 004's
regression sets from ``conf/autoweka/datasets.yaml``, which names every seed-004 set's source).

Python holds no dataset name here: the lists are the files' entries, typed as the catalog uses
them (tuples, Seed 003's mapping ``seed name -> (name run or None, how it maps)``).
:data:`hpo.data.catalog.DATASET_LISTS` names the lists an experiment's ``datasets:`` may give.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from hpo.data.sklearn_sets import SKLEARN_REGRESSION
from hpo.data.types import REPO_ROOT

STUDIES_FILE = REPO_ROOT / "conf" / "datasets" / "studies.yaml"
AUTOWEKA_DATASETS_FILE = REPO_ROOT / "conf" / "autoweka" / "datasets.yaml"


def _read(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


_STUDIES = _read(STUDIES_FILE)

# Chapters 4 and 5 (thesis Tables 4.4, 4.6, 5.2): 18 UCI-121 sets and six OpenML ids.
CHAPTER45_UCI: tuple[str, ...] = tuple(_STUDIES["chapter45_uci"])
CHAPTER5_OPENML: tuple[str, ...] = tuple(_STUDIES["chapter5_openml"])
# Chapter 5's OpenML ids -> UCI-121's copy of the same problem (offline stand-ins).
OPENML_SUBSTITUTES: dict[str, str] = dict(_STUDIES["openml_substitutes"])
# ESMBO (UAI 2014): binary classification sets; regression: scikit-learn's and Torgo's sets.
ESMBO_CLASSIFICATION: tuple[str, ...] = tuple(_STUDIES["esmbo_classification"])
TORGO_OPENML: dict[str, str] = dict(_STUDIES["torgo_openml"])
ESMBO_REGRESSION = (*SKLEARN_REGRESSION, *TORGO_OPENML.values())
# Seed 004's regression sets (Thornton 2014, Table 4.6) that have an OpenML id: name -> id.
AUTOWEKA_OPENML_REGRESSION: dict[str, str] = {
    name: f"openml:{entry['openml']}"
    for name, entry in _read(AUTOWEKA_DATASETS_FILE)["regression"].items()
    if entry.get("openml") is not None
}
# The OpenML sets this project runs as regression (their targets are numbers).
OPENML_REGRESSION = frozenset([*TORGO_OPENML.values(), *AUTOWEKA_OPENML_REGRESSION.values()])
# Seed 003 (Bermúdez-Chacón 2014, Appendix B): seed name -> (name run or None, how it maps).
SEED003_DATASETS: dict[str, tuple[str | None, str]] = {
    name: (entry["run"], entry["how"])
    for part in ("seed003_standard", "seed003_biological")
    for name, entry in _STUDIES[part].items()
}
SEED003_STANDARD = tuple(_STUDIES["seed003_standard"])  # Appendix B's 29 standard sets
SEED003_BIOLOGICAL = tuple(_STUDIES["seed003_biological"])


def seed003_names(seed_names: Iterable[str]) -> list[str]:
    """The names run for seed 003's ``seed_names`` (those with a name; the others are listed
    as not run by :func:`seed003_notes`)."""
    return [run for name in seed_names if (run := SEED003_DATASETS[name][0]) is not None]


def seed003_notes(seed_names: Iterable[str] = SEED003_DATASETS) -> dict[str, str]:
    """Seed name -> how it maps (``name run: how``, or ``not run: why``) for the report."""
    return {
        name: how if run is None else f"{run}: {how}"
        for name in seed_names
        for run, how in [SEED003_DATASETS[name]]
    }
