"""Stored references that hold on any CPU: what ``tests/data`` holds, and one comparison.

A stored reference is a value recorded by running the code on one machine and compared with a
fresh run on another: pinned proposals, regression guards, recorded traces. Another CPU's SIMD
paths (NumPy's AVX-512 kernels, another OpenBLAS kernel family, numba's target, PyTorch's CPU
capability) change the last bits of what the code computes, so a reference is compared the way
:func:`differences` does: **decisions exactly** (choices, names, counts, orders, which
configuration: every string, integer and boolean, and the shape of every list) and **floats to a
stated relative tolerance**. A configuration stored as JSON text is parsed and compared the same
way, never as text: the text of a float holds its last digit.

Every test that compares with a stored reference carries the ``reference`` marker (checked by
``tests/test_reference_marks.py``); ``.ci/run`` runs them again under an emulated older CPU
(``tools/older_cpu.py``). ``docs/testing.md`` lists them with their tolerances.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

# tests/data: each file is a reference (compared with a fresh run, its tolerance said where it
# is compared) or an input (data a test reads, never compared with a result).
REFERENCES = {
    "chapter3_regression.json": "tests/test_chapter3_regression.py (relative 1e-9; GP "
    "proposals 1e-3)",
    "cash_reference.json": "tests/test_cash_determinism.py (relative 1e-9)",
}
INPUTS = {
    "eigh_nonconvergent_corr.npy": "a correlation matrix on which LAPACK's eigh does not converge",
    "openml_numeric_target.csv": "an OpenML-style table with a numeric target",
}

ABSOLUTE_TOLERANCE = 1e-12  # for floats that are exactly 0 on one side (a perfect loss)


def _as_structure(value: object) -> object:
    """A string holding a JSON list or object (a configuration's text) parsed; anything else as
    it is."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def differences(
    got: object, expected: object, rel_tol: float, where: str = "", limit: int = 20
) -> list[str]:
    """What differs between ``got`` and the stored ``expected``, one line per value (empty when
    they agree): floats within ``rel_tol`` (or :data:`ABSOLUTE_TOLERANCE` near 0), every other
    value exactly, lists and mappings element by element (a length or a key that differs is a
    difference), JSON text parsed first. At most ``limit`` lines."""
    found: list[str] = []
    _walk(_as_structure(got), _as_structure(expected), rel_tol, where or "value", found, limit)
    return found


def _walk(got: object, expected: object, rel_tol: float, where: str, found: list[str], limit: int):  # noqa: ANN202
    if len(found) >= limit:
        return
    if isinstance(expected, bool) or isinstance(got, bool):
        if not (isinstance(got, bool) and isinstance(expected, bool) and got == expected):
            found.append(f"{where}: {got!r} != recorded {expected!r}")
        return
    if isinstance(expected, float) or isinstance(got, float):
        if not isinstance(got, int | float) or not isinstance(expected, int | float):
            found.append(f"{where}: {got!r} != recorded {expected!r}")
        elif math.isnan(got) or math.isnan(expected):
            if not (math.isnan(got) and math.isnan(expected)):
                found.append(f"{where}: {got!r} != recorded {expected!r}")
        elif not math.isclose(got, expected, rel_tol=rel_tol, abs_tol=ABSOLUTE_TOLERANCE):
            found.append(f"{where}: {got!r} != recorded {expected!r} (relative {rel_tol:g})")
        return
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        if sorted(got) != sorted(expected):
            found.append(f"{where}: keys {sorted(got)} != recorded {sorted(expected)}")
            return
        for key in sorted(expected):
            _walk(
                _as_structure(got[key]),
                _as_structure(expected[key]),
                rel_tol,
                f"{where}.{key}",
                found,
                limit,
            )
        return
    if isinstance(expected, list | tuple) and isinstance(got, list | tuple):
        if len(got) != len(expected):
            found.append(f"{where}: {len(got)} items != recorded {len(expected)}")
            return
        for i, (a, b) in enumerate(zip(got, expected, strict=True)):
            _walk(_as_structure(a), _as_structure(b), rel_tol, f"{where}[{i}]", found, limit)
        return
    if got != expected:
        found.append(f"{where}: {got!r} != recorded {expected!r}")
