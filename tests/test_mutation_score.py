"""``tools/mutation_score.py``: scores per module from mutmut's meta files, the reproducible
sample, and ``--modules`` restricting both to some of the mutated modules."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutation_score.py"
spec = importlib.util.spec_from_file_location("mutation_score", TOOL)
mutation_score = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation_score)


@pytest.fixture
def mutmut_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """mutmut's layout: pyproject.toml's only_mutate, one meta file per mutated module."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mutmut]\nonly_mutate = ["hpo/significance/*", "analysis/stats.py"]\n'
    )
    codes = {
        "hpo/significance/stage.py": {f"s__mutmut_{i}": c for i, c in enumerate([1, 0, 36, 1])},
        "analysis/stats.py": {f"t__mutmut_{i}": c for i, c in enumerate([1, None, 5])},
    }
    for module, exit_codes in codes.items():
        meta = tmp_path / "mutants" / f"{module}.meta"
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"exit_code_by_key": exit_codes}))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_scores_count_timeouts_as_caught_and_untested_as_survivors(mutmut_folder, capsys) -> None:
    assert mutation_score.main(["--survivors"]) == 0
    out = capsys.readouterr().out
    (stage,) = [line for line in out.splitlines() if line.startswith("hpo/significance/stage")]
    assert stage.split()[1:] == ["2", "1", "1", "0", "0", "75.0%"]
    (stats,) = [line for line in out.splitlines() if line.startswith("analysis/stats")]
    assert stats.split()[1:] == ["1", "0", "0", "1", "1", "50.0%"]
    assert out.split("surviving mutants:")[1].split() == ["t__mutmut_2", "s__mutmut_1"]


def test_modules_restricts_the_sample_and_the_scores(mutmut_folder, capsys) -> None:
    assert mutation_score.main(["--sample", "2", "--modules", "hpo/*"]) == 0
    assert capsys.readouterr().out.split() == ["s__mutmut_0", "s__mutmut_2"]
    assert mutation_score.main(["--modules", "analysis/*"]) == 0
    out = capsys.readouterr().out
    assert "analysis/stats.py" in out and "hpo/significance" not in out
