"""Plant one mistake by hand, run the tests that should catch it, and restore the file.

    python tools/plant.py FILE OLD NEW TEST [TEST ...]

``OLD`` must occur exactly once in ``FILE``; it is replaced by ``NEW``, the tests run in one
process (``pytest -x``), and the file is restored whatever happens. Prints ``CAUGHT`` (the tests
failed) or ``SURVIVED`` with pytest's last line; exits 1 on a survivor. The tables of planted
mistakes in ``docs/testing.md`` are rows of such calls.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    file, old, new, *tests = argv
    path = Path(file)
    text = path.read_text()
    if text.count(old) != 1:
        print(f"error: {old!r} occurs {text.count(old)} times in {file}; it must occur once")
        return 2
    path.write_text(text.replace(old, new))
    try:
        command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider"]
        result = subprocess.run([*command, "-q", "-x", *tests], capture_output=True, text=True)
    finally:
        path.write_text(text)
    lines = result.stdout.strip().splitlines()
    verdict = "CAUGHT" if result.returncode else "SURVIVED"
    print(f"{verdict} {file}: {old!r} -> {new!r} :: {lines[-1] if lines else result.stderr[-200:]}")
    return 0 if result.returncode else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
