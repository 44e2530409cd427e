"""A sampled mutation run of a named set of modules and their tests: `make mutation-sample`.

mutmut reads which modules to mutate and which tests to run from ``pyproject.toml`` only
(``[tool.mutmut]``). A set (``[tool.hpo-mutation.sets.NAME]`` in ``pyproject.toml``: its
``only_mutate`` and its ``tests``) is run in a copy of the working tree whose ``pyproject.toml``
says that set instead, so the repository's own settings (the whole ``make mutation``) stay as
they are. In the copy: the mutants are generated (a run that matches no mutant), a reproducible
1-in-K sample is run (``tools/mutation_score.py --sample K``), and the scores are printed with
the survivors (``docs/testing.md``, "Mutation testing").

    python tools/mutation_set.py newer --sample 25 --jobs 2       # about 15 min on 2 cores
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pytest's own TOML reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
# [tool.mutmut]'s list -> the set's list that replaces it
REPLACED = {"only_mutate": "only_mutate", "pytest_add_cli_args_test_selection": "tests"}
NO_SUCH_MUTANT = "hpo.nonexistent__mutmut_1"  # a run of it makes the mutants, then stops


def mutation_sets(pyproject: str) -> dict[str, dict[str, list[str]]]:
    """The named sets of ``pyproject`` (its text): name -> ``only_mutate`` and ``tests``."""
    return tomllib.loads(pyproject).get("tool", {}).get("hpo-mutation", {}).get("sets", {})


def with_set(pyproject: str, chosen: dict[str, list[str]]) -> str:
    """``pyproject`` (its text) with ``[tool.mutmut]``'s modules and tests those of ``chosen``."""
    for key, name in REPLACED.items():
        items = "".join(f'    "{item}",\n' for item in chosen[name])
        replacement = f"{key} = [\n{items}]\n"
        pattern = re.compile(rf"^{key} = \[\n.*?^\]\n", re.MULTILINE | re.DOTALL)
        pyproject, count = pattern.subn(lambda _, text=replacement: text, pyproject, count=1)
        if count != 1:
            raise ValueError(f"pyproject.toml has no '{key} = [' list to replace")
    return pyproject


def copy_tree(folder: Path) -> None:
    """The working tree's tracked files (as they are now, edits included) into ``folder``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the set's name in pyproject.toml")
    parser.add_argument("--sample", type=int, default=25, metavar="K", help="every K-th mutant")
    parser.add_argument("--jobs", type=int, default=1, help="mutmut's workers")
    parser.add_argument(
        "--dir", type=Path, default=None, help="the copy (default build/mutation-NAME; replaced)"
    )
    args = parser.parse_args(argv)
    pyproject = (ROOT / "pyproject.toml").read_text()
    sets = mutation_sets(pyproject)
    if args.name not in sets:
        parser.error(f"unknown set {args.name!r}; valid: {', '.join(sorted(sets)) or '(none)'}")
    if args.sample < 1 or args.jobs < 1:
        parser.error(f"--sample and --jobs must be >= 1, got {args.sample} and {args.jobs}")
    folder = (args.dir or ROOT / "build" / f"mutation-{args.name}").resolve()
    if folder.exists():
        shutil.rmtree(folder)
    copy_tree(folder)
    (folder / "pyproject.toml").write_text(with_set(pyproject, sets[args.name]))
    # one OpenMP/BLAS thread: a fork of a process whose OpenMP pool is running deadlocks
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}  # fmt: skip
    mutmut = [str(Path(sys.executable).with_name("mutmut")), "run", "--max-children"]
    mutmut.append(str(args.jobs))
    score = [sys.executable, "tools/mutation_score.py"]
    log = folder / "mutmut-generate.log"
    print(f"generating the mutants in {folder} (mutmut's output: {log.name})", flush=True)
    with log.open("w") as output:
        subprocess.run([*mutmut, NO_SUCH_MUTANT], cwd=folder, env=env, stdout=output, stderr=output)
    names = subprocess.run(
        [*score, "--sample", str(args.sample)], cwd=folder, env=env, check=True,
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    if not names:
        print(f"no mutants were generated (mutmut's output: {log})", file=sys.stderr)
        return 1
    print(f"running {len(names)} sampled mutants", flush=True)
    ran = subprocess.run([*mutmut, *names], cwd=folder, env=env, stdout=subprocess.DEVNULL)
    if ran.returncode != 0:  # e.g. the set's tests fail before any mutant: no score to give
        print(f"mutmut failed (exit {ran.returncode}): its error is above", file=sys.stderr)
        return 1
    return subprocess.run([*score, "--survivors"], cwd=folder, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
