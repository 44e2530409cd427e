"""Stored references hold on any CPU: every test that compares with one carries the ``reference``
marker (so that ``.ci/run`` runs it again on an emulated older CPU), every file of ``tests/data``
is declared a reference or an input, and the one comparison (``tests/reference.py``) admits
another CPU's last bits while refusing a real change."""

from __future__ import annotations

import ast
import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reference import INPUTS, REFERENCES, differences

TESTS = Path(__file__).parent
PINNED_HASH = re.compile(r"^[0-9a-f]{16}$")  # a results file's config hash, as run identities pin


def _is_reference_mark(node: ast.AST) -> bool:
    """``pytest.mark.reference`` (or a call of it), alone or in a list."""
    if isinstance(node, ast.List | ast.Tuple):
        return any(_is_reference_mark(n) for n in node.elts)
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and node.attr == "reference"


def _mentions_reference(node: ast.AST) -> bool:
    """Whether ``node`` names a stored reference: a file of :data:`REFERENCES` or a pinned hash."""
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            if child.value in REFERENCES or PINNED_HASH.match(child.value):
                return True
            if any(name in child.value for name in REFERENCES):
                return True
    return False


def unmarked_reference_tests(source: str) -> list[str]:
    """The tests of a module (its source) that compare with a stored reference and do not carry
    the marker: all of them when the module's own top level names a reference and the module is
    not marked, else each test function that names one itself and is not marked."""
    tree = ast.parse(source)
    module_marked = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and _is_reference_mark(node.value)
        for node in tree.body
    )
    if module_marked:
        return []
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    top_level = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef)]
    tests = [f for f in functions if f.name.startswith("test_")]
    if any(_mentions_reference(node) for node in top_level):
        return [f.name for f in tests if not any(map(_is_reference_mark, f.decorator_list))]
    return [
        f.name
        for f in tests
        if _mentions_reference(f) and not any(map(_is_reference_mark, f.decorator_list))
    ]


def test_every_file_of_tests_data_is_declared_a_reference_or_an_input() -> None:
    present = {p.name for p in (TESTS / "data").iterdir() if p.is_file()}
    assert present == set(REFERENCES) | set(INPUTS), (
        "declare each file of tests/data in tests/reference.py (REFERENCES or INPUTS)"
    )
    assert not set(REFERENCES) & set(INPUTS)


def test_every_test_that_compares_with_a_stored_reference_is_marked() -> None:
    unmarked = {
        path.name: names
        for path in sorted(TESTS.glob("test_*.py"))
        if path.name != Path(__file__).name  # this module names references to test the check
        and (names := unmarked_reference_tests(path.read_text()))
    }
    assert not unmarked, f"add @pytest.mark.reference (or a module pytestmark) to: {unmarked}"


def test_the_check_finds_an_unmarked_reference_and_accepts_a_marked_one() -> None:
    """Planted: a module reading a reference at its top level, and a pinned hash in one test."""
    module = (
        'import json\nREF = json.loads(open("data/cash_reference.json").read())\n'
        "def test_a(): assert REF\n"
    )
    assert unmarked_reference_tests(module) == ["test_a"]
    marked = "import pytest\npytestmark = [pytest.mark.reference]\n" + module
    assert unmarked_reference_tests(marked) == []
    pinned = (
        "import pytest\ndef test_other(): pass\n"
        'def test_hash(): assert h() == "575ac9b707b1cd12"\n'
        '@pytest.mark.reference\ndef test_marked(): assert h() == "575ac9b707b1cd12"\n'
    )
    assert unmarked_reference_tests(pinned) == ["test_hash"]


def test_the_comparison_admits_another_cpus_last_digit_and_refuses_a_real_change() -> None:
    recorded = [['[["j48.M", 18.5830164154668], ["learner", "j48"]]', 3, 0.0], 0.25]
    last_digit = [['[["j48.M", 18.5830164154667], ["learner", "j48"]]', 3, 0.0], 0.25]
    assert differences(last_digit, recorded, 1e-9) == []
    moved = [['[["j48.M", 18.58302], ["learner", "j48"]]', 3, 0.0], 0.25]
    assert differences(moved, recorded, 1e-9) == [
        "value[0][0][0][1]: 18.58302 != recorded 18.5830164154668 (relative 1e-09)"
    ]
    other_choice = [['[["j48.M", 18.5830164154668], ["learner", "knn"]]', 3, 0.0], 0.25]
    assert differences(other_choice, recorded, 1e-9) == [
        "value[0][0][1][1]: 'knn' != recorded 'j48'"
    ]
    other_instance = [['[["j48.M", 18.5830164154668], ["learner", "j48"]]', 4, 0.0], 0.25]
    assert differences(other_instance, recorded, 1e-9) == ["value[0][1]: 4 != recorded 3"]
    assert differences([*recorded, 1.0], recorded, 1e-9) == ["value: 3 items != recorded 2"]
    assert differences({"a": 1.0}, {"b": 1.0}, 1e-9) == ["value: keys ['a'] != recorded ['b']"]


@pytest.mark.parametrize(
    ("got", "recorded", "same"),
    [
        (0.0, 1e-13, True),  # exactly 0 on one side: the absolute floor
        (0.0, 1e-6, False),
        (float("nan"), float("nan"), True),
        (float("nan"), 0.5, False),
        (True, 1, False),  # a decision is not a number
        ("1.0", 1.0, False),  # text is not a float
    ],
)
def test_the_comparison_of_single_values(got: object, recorded: object, same: bool) -> None:
    assert (differences(got, recorded, 1e-9) == []) is same


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the emulation is for x86-64 only")
def test_the_older_cpu_tool_switches_numpy_openblas_numba_and_pytorch_down() -> None:
    """What ``.ci/run`` relies on: in the command the tool runs, NumPy dispatches nothing above
    x86-64-v2, OpenBLAS runs the family asked for, numba targets a generic CPU and PyTorch its
    default kernels."""
    probe = (
        "import json, numba, threadpoolctl, torch\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
        "print(json.dumps({'above_v2': [k for k in ('X86_V3', 'X86_V4', 'AVX2') if f.get(k)],\n"
        "  'openblas': [i.get('architecture') for i in threadpoolctl.threadpool_info()\n"
        "               if i['internal_api'] == 'openblas'],\n"
        "  'numba': numba.config.CPU_NAME, 'torch': torch.backends.cpu.get_cpu_capability()}))"
    )
    done = subprocess.run(
        [sys.executable, str(TESTS.parent / "tools" / "older_cpu.py"), "--family", "Sandybridge",
         "--", sys.executable, "-c", probe],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    seen = json.loads(done.stdout)
    assert seen["above_v2"] == [] or "AVX2" in seen["above_v2"]  # AVX2 is a feature, not dispatched
    assert not {"X86_V3", "X86_V4"} & set(seen["above_v2"])
    assert seen["openblas"] and set(seen["openblas"]) == {"Sandybridge"}
    assert (seen["numba"], seen["torch"]) == ("generic", "DEFAULT")
    assert done.stderr.startswith("older CPU: NumPy without")


def test_the_older_cpu_tool_refuses_an_unknown_family_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, str(TESTS.parent / "tools" / "older_cpu.py"), "--family", "Zen9", "--",
         "true"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: unknown OpenBLAS family 'Zen9'; valid choices: Sandybridge, Nehalem, Prescott"
    ]
