"""An ad-hoc benchmark folder (``run.py -m`` of an own optimizer beside built-in ones, no
experiment file) gets the benchmark report, which ranks every method and names the candidates
given to ``python -m analysis --candidates``; no cell is left missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.__main__ import main as analysis_main
from experiments.configuration.compose import compose_run
from experiments.run.results import run_filename
from experiments.run.single import run_and_save

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "my_optimizer"
SEARCH = "hydra.searchpath=[pkg://my_optimizer/conf]"


def test_an_own_optimizer_beside_built_in_ones_is_ranked_as_a_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    folder = tmp_path / "adhoc"
    for dataset in ("sklearn-iris", "sklearn-wine"):
        for method in ("rs", "gp", "my_local_search"):
            spec = compose_run([SEARCH, f"optimizer={method}", f"dataset={dataset}", "budget=3"])
            run_and_save(spec, folder / "runs" / "main" / run_filename(spec), None)
    assert analysis_main([str(folder), "--no-figures", "--candidates", "my_local_search"]) == 0
    text = (folder / "report" / "report.md").read_text()
    assert "plug-in `benchmark`" in text
    assert "Candidates: my_local_search; baselines: " in text
    assert "missing" not in text.lower()
