"""Every command shown in README.md and docs/*.md works, so a documented command cannot rot.

Each command line of a fenced shell block is checked by what it runs, without the hours some of
them take: a run (``run.py``) is composed into its run specification and its optimizer built on
its space, exactly as the run would start (a multirun: each listed value checked, the first
combination composed); a sweep's ``run`` or ``consolidate`` is planned (``plan``, ``cost`` and
``status`` run as they are, on an empty results folder); ``python -m analysis`` is parsed by its
own parser; a ``make`` target is dry-run (``make -n``); any other module or script must exist and
know every option the command gives it; a ``python -c`` snippet runs. Shell set-up lines (pip,
export, git, SLURM's tools) name only files that exist. A command of another form fails here
until this file knows how to check it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.cluster import check_launcher_overrides, check_shards
from experiments.configuration.command_line import check_overrides
from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError, check_method
from hpo.data.catalog import DatasetError, uci121_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_optimizer"
MANUALS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What a line of a shell block starts with when it is a command (the rest are outputs).
STARTS = ("python", ".venv/bin/python", "make ", "pip ", "export ", "git ", "cp ", "taskset ",
          "squeue ", "tail ", "tools/", "HPO_")  # fmt: skip
# A documented command's placeholders, and the value each is checked with.
PLACEHOLDERS = {"space.settings.device=D": "space.settings.device=cpu",
                "batch_networks=B": "batch_networks=off", "<id>": "1"}  # fmt: skip
# Shell set-up: the command words allowed, each line's repository paths must exist.
SHELL = ("pip", "export", "git", "cp", "taskset", "squeue", "tail", "tools/slurm-local.sh")


def documented_commands() -> list[tuple[str, str]]:
    """(where, command) for every command line of a fenced shell block of the manuals."""
    found = []
    for manual in MANUALS:
        text = manual.read_text()
        for block in re.finditer(r"```(?:bash|sh|console|shell)\n(.*?)```", text, re.S):
            lines = block.group(1).replace("\\\n", " ").splitlines()
            for number, line in enumerate(lines):
                line = line.strip().removeprefix("$ ")
                if line.startswith(STARTS):
                    found.append((f"{manual.name}:{len(found)}:{number}", line))
    return found


COMMANDS = documented_commands()


def words_of(line: str) -> list[str]:
    """The command's words, its comment and trailing ``&`` dropped, placeholders filled."""
    for placeholder, value in PLACEHOLDERS.items():
        line = line.replace(placeholder, value)
    words = shlex.split(line, comments=True)
    return [w for w in words if w != "&"]


@pytest.fixture
def in_a_scratch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the manuals' example data file, the example package importable, no
    session search path and results kept apart."""
    table = "sepal,petal,species\n" + "\n".join(
        f"{i % 7}.{i % 3},{i % 5}.{i % 4},{['a', 'b', 'c'][i % 3]}" for i in range(60)
    )
    (tmp_path / "my_data.csv").write_text(table + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setenv("HPO_SEARCH_PATH", "")  # restored after the test, whatever a command sets
    monkeypatch.setenv("HPO_RESULTS_ROOT", str(tmp_path / "results"))
    return tmp_path


def _needs_data(err: Exception) -> None:
    """A dataset of the UCI-121 collection while the collection is absent: skipped with the
    reason, as the ``needs_data`` marker skips (a failure under CI); any other error raised."""
    if (uci121_dir() / "iris" / "iris_R.dat").is_file():
        raise err
    if os.environ.get("CI"):
        pytest.fail(f"UCI-121 collection not found at {uci121_dir()}: {err}")
    pytest.skip(f"data not available: UCI-121 collection not found at {uci121_dir()} ({err})")


def check_run(words: list[str]) -> None:
    """``run.py``: a single run composed and its optimizer built; a multirun's every value
    checked and its first combination composed; a sweep shard's experiment and profile."""
    overrides = [w for w in words if w != "-m"]
    check_overrides(overrides)
    check_shards(overrides)
    check_launcher_overrides(overrides)
    kept = [o for o in overrides if not o.startswith(("hydra/", "hydra.launcher", "+hydra."))]
    kept = [o for o in kept if not o.startswith("hydra.sweep")]
    if any(o.startswith("experiment=") for o in kept):
        from experiments.sweep import plan

        settings = dict(o.split("=", 1) for o in kept)
        try:
            plan(settings["experiment"], settings.get("profile"), Path("results"))
        except UsageError as err:
            _needs_data(err)
        return
    first = [_first_value(o) for o in kept]
    try:
        check_method(compose_run(first))
    except DatasetError as err:
        _needs_data(err)


def _first_value(override: str) -> str:
    """``key=a,b`` -> ``key=a``; ``glob(...)`` and ``range(...)`` as Hydra's sweep would start."""
    key, _, value = override.partition("=")
    if key.startswith(("hydra.", "space.learners")) or value.startswith("["):
        return override
    if value.startswith("glob("):
        from experiments.configuration.search_path import group_choices

        pattern = value[len("glob(") : -1]
        return f"{key}={next(c for c in group_choices(key) if _glob(pattern, c))}"
    return f"{key}={value.split(',')[0]}"


def _glob(pattern: str, name: str) -> bool:
    import fnmatch

    return fnmatch.fnmatch(name, pattern)


def check_sweep(words: list[str]) -> None:
    """``python -m experiments.sweep``: ``run``/``consolidate`` planned, the rest run."""
    from experiments.sweep.cli import main

    command = ["plan" if words[0] in ("run", "consolidate") else words[0], *words[1:]]
    if "--results-root" not in command:
        command += ["--results-root", "results"]
    code = main(command)
    if code != 0:
        _needs_data(AssertionError(f"exit {code}: {command}"))


def check_reproduce(words: list[str]) -> None:
    """``python -m experiments.reproduce``: what it would run is planned."""
    from experiments.sweep import plan

    profile = words[words.index("--profile") + 1] if "--profile" in words else "smoke"
    try:
        plan(words[0], profile, Path("results"))
    except UsageError as err:
        _needs_data(err)


def check_analysis(words: list[str]) -> None:
    """``python -m analysis``: parsed by the command's own parser."""
    from analysis.__main__ import _parser

    _parser().parse_args(words)


def check_module(module: str, words: list[str]) -> None:
    """Another module or script: it exists, and its source knows every option given to it and
    (for a subcommand) the subcommand's name."""
    if module.endswith(".py"):
        path = ROOT / module
    else:
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin, f"{module} does not import"
        path = Path(spec.origin)
        if path.name == "__init__.py" and (path.parent / "__main__.py").exists():
            path = path.parent / "__main__.py"
    assert path.exists(), path
    source = path.read_text()
    for word in words:
        if word.startswith("--") and word != "--help":
            assert f'"{word.split("=")[0]}"' in source, f"{module} has no option {word}"
    if words and words[0].isidentifier() and words[0].islower():  # RUN_FILE: a placeholder
        assert f'"{words[0]}"' in source, f"{module} has no subcommand {words[0]}"


def check_make(words: list[str]) -> None:
    done = subprocess.run(["make", "-n", *words], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def check_shell(words: list[str]) -> None:
    """Set-up lines: an allowed command whose repository paths exist."""
    assert words[0] in SHELL or words[0].startswith("HPO_"), f"unknown command {words[0]}"
    for word in words[1:]:
        for candidate in (word, word.split("=", 1)[-1]):
            if candidate.startswith(("examples/", "tools/", "conf/")):
                assert (ROOT / candidate).exists(), candidate


def check_snippet(code: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr


def check_command(line: str) -> None:
    """Check one documented command line by what it runs (the module's docstring)."""
    words = words_of(line)
    if words[0] in ("python", ".venv/bin/python"):
        words = words[1:]
        if words[:1] == ["-c"]:
            return check_snippet(words[1])
        if words[:1] == ["run.py"]:
            return check_run(words[1:])
        if words[:2] == ["-m", "pip"]:
            return check_shell(["pip", *words[2:]])
        if words[:1] == ["-m"]:
            module, rest = words[1], words[2:]
            checks = {
                "experiments.sweep": check_sweep,
                "experiments.reproduce": check_reproduce,
                "analysis": check_analysis,
            }
            if module == "carps.run":
                return check_carps(rest)
            if module in checks:
                return checks[module](rest)
            return check_module(module, rest)
        return check_module(words[0], words[1:])
    if words[0] == "make":
        return check_make(words[1:])
    return check_shell(words)


def check_carps(words: list[str]) -> None:
    """CARP-S's runner: this repository's task file it names exists, and the search path."""
    for word in words:
        if word.startswith("+task/HPOThesis="):
            name = word.split("=", 1)[1]
            assert (ROOT / "experiments" / "carps_tasks" / "task" / "HPOThesis" /
                    f"{name}.yaml").exists(), name  # fmt: skip
    assert "hydra.searchpath=[pkg://experiments.carps_tasks]" in words


def test_the_manuals_show_commands() -> None:
    assert len(COMMANDS) > 100
    assert len({where.split(":")[0] for where, _ in COMMANDS}) >= 10


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_works(where: str, line: str, in_a_scratch_folder: Path) -> None:
    try:
        check_command(line)
    except UsageError as err:
        pytest.fail(f"{where}: {line}\n  refused: {err}")


@pytest.mark.parametrize(
    "line",
    [
        "python run.py optimizer=gp budget=-3",  # a value the run refuses
        "python run.py optimizer=no_such_method",
        "python -m experiments.sweep plan no_such_experiment",
        "python -m analysis results --no-such-option",
        "make no-such-target",
        "python -m benchmarks.reshuffle_c31 --no-such-option",
        "curl https://example.org",
    ],
)
def test_a_command_that_would_fail_is_caught(line: str, in_a_scratch_folder: Path) -> None:
    """The planted mistakes: each check fails on a command that would not run."""
    with pytest.raises((UsageError, AssertionError, SystemExit, ValueError)):
        check_command(line)


def test_every_value_of_a_multirun_is_checked() -> None:
    with pytest.raises(UsageError, match="no_such_method"):
        check_run(["-m", "optimizer=gp,no_such_method", "dataset=sklearn-iris"])
