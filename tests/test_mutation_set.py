"""tools/mutation_set.py: a named set's copy says the set's modules and tests to mutmut and
nothing else changes; every module and test file a set names exists (a moved module must be
renamed there too); an unknown set is one line naming the sets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import mutation_set  # noqa: E402

tomllib = mutation_set.tomllib  # the standard library's, or tomli on Python 3.10

PYPROJECT = (ROOT / "pyproject.toml").read_text()


def test_the_copy_mutates_the_set_and_runs_its_tests_and_keeps_everything_else() -> None:
    chosen = mutation_set.mutation_sets(PYPROJECT)["newer"]
    rewritten = tomllib.loads(mutation_set.with_set(PYPROJECT, chosen))
    original = tomllib.loads(PYPROJECT)
    mutmut = rewritten["tool"]["mutmut"]
    assert mutmut["only_mutate"] == chosen["only_mutate"]
    assert mutmut["pytest_add_cli_args_test_selection"] == chosen["tests"]
    for key in ("source_paths", "also_copy"):
        assert mutmut[key] == original["tool"]["mutmut"][key]
    rewritten["tool"]["mutmut"] = original["tool"]["mutmut"]
    assert rewritten == original  # nothing else of the file changed


def test_every_module_and_test_file_of_a_set_exists() -> None:
    sets = mutation_set.mutation_sets(PYPROJECT)
    assert sets
    for name, chosen in sets.items():
        for pattern in chosen["only_mutate"]:
            assert list(ROOT.glob(pattern)), f"set {name}: no module matches {pattern}"
        for test in chosen["tests"]:
            assert (ROOT / test).is_file(), f"set {name}: no test file {test}"


def test_a_pyproject_without_the_list_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'only_mutate = \\[' list"):
        mutation_set.with_set("[tool.mutmut]\n", {"only_mutate": [], "tests": []})


def test_an_unknown_set_is_one_line_naming_the_sets(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        mutation_set.main(["older"])
    assert stopped.value.code == 2
    assert "unknown set 'older'; valid: analysis, newer" in capsys.readouterr().err
