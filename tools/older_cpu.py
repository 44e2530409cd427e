"""Run a command as if on an older x86-64 CPU: what ``.ci/run`` runs the stored-reference tests
under (``pytest -m reference``), so that a reference compared too tightly fails on the developers'
machine and not first on a user's.

    python tools/older_cpu.py [--family Sandybridge] -- python -m pytest -m reference

The command runs with

* ``NPY_DISABLE_CPU_FEATURES``: every CPU feature NumPy finds on this machine above x86-64-v2
  (AVX, FMA3, AVX2, AVX-512 …; read from ``numpy._core._multiarray_umath.__cpu_features__``), so
  NumPy's dispatched kernels (X86_V3, X86_V4, AVX512_ICL, AVX512_SPR) fall back to its x86-64-v2
  baseline;
* ``OPENBLAS_CORETYPE``: an older OpenBLAS kernel family (``--family``) for NumPy's and SciPy's
  OpenBLAS: Sandybridge (AVX without FMA), Nehalem (SSE4.2: x86-64-v2) or Prescott (SSE3; the
  scipy-openblas 0.3.31 that NumPy 2.4 ships runs its Katmai kernels for it, as threadpoolctl
  reports);
* ``NUMBA_CPU_NAME=generic``: numba compiles for a generic x86-64 instead of this CPU;
* ``ATEN_CPU_CAPABILITY=default``: PyTorch's CPU kernels without AVX2 or AVX-512, and
  ``MKL_ENABLE_INSTRUCTIONS=SSE4_2`` for an MKL that PyTorch may use.

What it does **not** emulate: a CPU *newer* than this one (its features cannot be switched on),
another libm, another vendor's microcode or a compiler's other choices; nor a non-x86 machine
(elsewhere the command runs unchanged, with a line saying so). The references' tolerances
(``docs/testing.md``) are what protects there.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

# x86-64-v2 (and what every x86-64 has): NumPy's baseline, never disabled.
X86_64_V2 = {"MMX", "SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "X86_V2", "LAHF",
             "CX16"}  # fmt: skip
FAMILIES = ("Sandybridge", "Nehalem", "Prescott")


def numpy_features_above_v2() -> list[str]:
    """The CPU features NumPy finds on this machine above x86-64-v2, in NumPy's order."""
    from numpy._core._multiarray_umath import __cpu_features__

    return [name for name, present in __cpu_features__.items() if present and name not in X86_64_V2]


def older_cpu_environment(family: str) -> dict[str, str]:
    """The variables that make NumPy, OpenBLAS, numba and PyTorch run as on an older CPU."""
    if family not in FAMILIES:
        raise ValueError(
            f"unknown OpenBLAS family {family!r}; valid choices: {', '.join(FAMILIES)}"
        )
    return {
        "NPY_DISABLE_CPU_FEATURES": " ".join(numpy_features_above_v2()),
        "OPENBLAS_CORETYPE": family,
        "NUMBA_CPU_NAME": "generic",
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="Sandybridge", help=f"one of {', '.join(FAMILIES)}")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS …]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given: python tools/older_cpu.py -- COMMAND [ARGS …]")
    try:
        extra = older_cpu_environment(args.family)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if platform.machine() in ("x86_64", "AMD64"):
        env.update(extra)
        disabled = extra["NPY_DISABLE_CPU_FEATURES"] or "nothing (no feature above x86-64-v2)"
        print(
            f"older CPU: NumPy without {disabled}; OpenBLAS {args.family}; numba generic; "
            "PyTorch default",
            file=sys.stderr,
        )
    else:
        print(f"older CPU: not emulated on {platform.machine()} (x86-64 only)", file=sys.stderr)
    sys.stderr.flush()
    os.execvpe(command[0], command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
