"""Per-module mutation scores from mutmut's results (``mutants/**/*.py.meta``): `make mutation`.

Score = (killed + timeout) / checked. A timeout (the mutant made the tests run past mutmut's limit,
usually an endless loop) counts as caught, as in PIT and Stryker: CI's time limit would catch it.
Mutants no test covers ("no tests") count as survivors. Run from the directory mutmut ran in;
``--survivors`` also lists the surviving mutants' names, ``--sample K`` draws a reproducible
1-in-K sample of mutant names for ``mutmut run``; ``--modules PATTERN ...`` restricts both to
some of the mutated modules (e.g. ``'hpo/significance/*'``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pytest's own TOML reader
    import tomli as tomllib

KILLED = {1, 3, 37}  # pytest failed, pytest internal error (mutmut counts both), type check
TIMEOUT = {36, 24, -24, 152, 255}
NO_TESTS = {5, 33}
UNCHECKED = {None, 2, 34}  # not checked yet, interrupted, skipped
COLUMNS = ("killed", "timeout", "survived", "no_tests", "unchecked")


def mutated_modules() -> list[str]:
    return tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]


def _metas(patterns: list[str]) -> list[tuple[str, Path]]:
    found = []
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        module = str(meta.relative_to("mutants"))[: -len(".meta")]
        if any(fnmatch(module, pattern) for pattern in patterns):
            found.append((module, meta))
    return found


def sample(patterns: list[str], every: int) -> list[str]:
    """Every ``every``-th mutant of each module, in sorted order (the same sample on any code
    whose mutants have the same names)."""
    names = []
    for _, meta in _metas(patterns):
        keys = sorted(json.loads(meta.read_text())["exit_code_by_key"])
        names.extend(keys[::every])
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--survivors", action="store_true", help="list the surviving mutants")
    parser.add_argument(
        "--sample",
        type=int,
        metavar="K",
        help="print every K-th mutant name (sorted, per module) instead: a reproducible sample",
    )
    parser.add_argument(
        "--modules",
        nargs="+",
        metavar="PATTERN",
        help="only these of the mutated modules (fnmatch patterns on their paths)",
    )
    args = parser.parse_args(argv)
    patterns = args.modules or mutated_modules()
    if args.sample:
        print(" ".join(sample(patterns, args.sample)))
        return 0
    rows, survivors = [], []
    total = Counter()
    for module, meta in _metas(patterns):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        counts = Counter()
        for name, code in codes.items():
            if code in UNCHECKED:
                counts["unchecked"] += 1
            elif code in KILLED:
                counts["killed"] += 1
            elif code in TIMEOUT:
                counts["timeout"] += 1
            else:
                counts["no_tests" if code in NO_TESTS else "survived"] += 1
                survivors.append(name)
        total.update(counts)
        rows.append((module, counts))
    if not rows:
        print("no mutmut results: run `mutmut run` first", file=sys.stderr)
        return 1
    print(f"{'module':36}" + "".join(f"{c:>10}" for c in COLUMNS) + f"{'score':>8}")
    for module, counts in [*rows, ("total", total)]:
        caught = counts["killed"] + counts["timeout"]
        checked = caught + counts["survived"] + counts["no_tests"]
        score = f"{100 * caught / checked:7.1f}%" if checked else "       -"
        print(f"{module:36}" + "".join(f"{counts[c]:10d}" for c in COLUMNS) + score)
    if args.survivors:
        print("\n".join(["", "surviving mutants:", *survivors]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
