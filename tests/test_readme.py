"""The README's examples are what the commands print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _one_run_example() -> tuple[list[str], list[str]]:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## One run") :]
    command, output = re.findall(r"```(?:bash)?\n(.*?)```", section, flags=re.S)[:2]
    arguments = command.split("run.py", 1)[1].split()
    return arguments, output.strip().splitlines()


def _without_seconds(line: str) -> list[str]:
    return line.split()[:-1]


def test_readme_one_run_example_is_what_the_command_prints(tmp_path: Path) -> None:
    arguments, expected = _one_run_example()
    result = subprocess.run(
        [sys.executable, str(REPO / "run.py"), *arguments],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()
    assert _without_seconds(printed[0]) == _without_seconds(expected[0])  # header
    assert _without_seconds(printed[1]) == _without_seconds(expected[1])  # the numbers
    path = re.sub(r"__[0-9a-f]{16}\.parquet", "__<hash>.parquet", printed[2])
    assert path == expected[2]
