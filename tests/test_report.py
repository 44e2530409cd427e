"""The Chapter-3 report (``analysis.load``, ``analysis.report``, ``python -m analysis``) on a
synthetic results set written directly in the results schema (no optimization runs): score tables
average the final iteration over repetitions, the report opens with the summary and the claims,
every table has its CSV and LaTeX, every figure its PNG and PDF, and missing methods degrade.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import figures, load, stats
from analysis.__main__ import main
from analysis.chapter3.claims import MAIN_METHODS
from analysis.report import write_report

REPO = Path(__file__).resolve().parents[1]
DATASETS = ("iris", "glass", "breast-cancer-wisc", "abalone", "adult")  # one per size bin, +1
PARTS = {
    "main": ("grid", "rs", "gp", "gp-r", "cma", "cma-r"),
    "pm": ("grid", "rs", "gp", "gp-pm", "gp-r", "gp-pm-r"),
}
RUN_METHOD = {"gp-pm": "gp", "gp-pm-r": "gp-r"}  # rules read from another method's run
BUDGET, REPETITIONS = 12, 2


def _iterations(method: str) -> list[int]:
    return [6, 12] if method.startswith("cma") else list(range(1, BUDGET + 1))


def final_error(part: str, protocol: str, dataset: str, method: str, repetition: int) -> float:
    """The synthetic final test error (fraction): distinct per cell, reproducible."""
    key = "|".join((part, protocol, dataset, method))
    rng = np.random.default_rng([sum(map(ord, key)), len(key)])
    return float(rng.uniform(0.05, 0.4)) + 0.01 * repetition


def _run_rows(part: str, protocol: str, dataset: str, method: str, rep: int) -> list[dict]:
    run_method = RUN_METHOD.get(method, method)
    final = final_error(part, protocol, dataset, method, rep)
    rows = []
    for t in _iterations(method):
        test = final + 0.02 * (BUDGET - t) / BUDGET  # earlier incumbents are worse
        rows.append(
            {
                "run_id": f"{run_method}:{dataset}:{protocol}:0:{rep}:cafe",
                "row_type": "outcome",
                "method": method,
                "rule": "best_validation",
                "dataset": dataset,
                "protocol": protocol,
                "repetition": rep,
                "seed": 0,
                "iteration": t,
                "incumbent_iteration": t,
                "incumbent_valid_loss": test - 0.03 * t / BUDGET,  # the gap grows: overfitting
                "test_error": test,
                "test_fit_limit_hit": False,
                "budget": BUDGET,
                "part": part,
            }
        )
    return rows


def outcome_rows(drop_methods: tuple[str, ...] = ()) -> pd.DataFrame:
    rows = [
        row
        for part, methods in PARTS.items()
        for protocol, dataset, method, rep in itertools.product(
            ("holdout", "cv5"), DATASETS, methods, range(REPETITIONS)
        )
        if method not in drop_methods
        for row in _run_rows(part, protocol, dataset, method, rep)
    ]
    return pd.DataFrame(rows).astype({"iteration": "Int64", "incumbent_iteration": "Int64"})


def write_consolidated(folder: Path, frame: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(folder / "outcomes.parquet", index=False)
    return folder


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep folder with only ``consolidated/outcomes.parquet``."""
    root = tmp_path_factory.mktemp("sweep")
    write_consolidated(root / "consolidated", outcome_rows())
    return root


@pytest.fixture(scope="module")
def report(sweep: Path) -> Path:
    return write_report(sweep / "consolidated")


# ---------------------------------------------------------------------------- score tables


def test_score_tables_average_the_final_iteration_over_repetitions(sweep: Path) -> None:
    tables = load.score_tables(load.per_dataset_errors(load.load_outcomes(sweep)))
    assert set(tables) == {(p, part) for p in ("holdout", "cv5") for part in PARTS}
    for (protocol, part), table in tables.items():
        assert list(table.columns) == list(PARTS[part])
        for dataset, method in itertools.product(DATASETS, PARTS[part]):
            expected = np.mean(
                [final_error(part, protocol, dataset, method, r) for r in range(REPETITIONS)]
            )
            assert table.loc[dataset, method] == pytest.approx(100 * expected)


def test_sweep_runs_are_merged_in_memory_like_the_consolidated_file(tmp_path: Path) -> None:
    frame = outcome_rows()
    frame = frame[frame["dataset"].isin(DATASETS[:2]) & (frame["protocol"] == "holdout")]
    for (part, dataset, run_id), rows in frame.groupby(["part", "dataset", "run_id"]):
        path = tmp_path / "runs" / part / dataset / f"{run_id.replace(':', '_')}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows.drop(columns="part").to_parquet(path, index=False)
    from_runs = load.per_dataset_errors(load.load_outcomes(tmp_path))
    from_file = load.per_dataset_errors(load.load_outcomes(write_consolidated(tmp_path, frame)))
    pd.testing.assert_frame_equal(from_runs.sort_index(), from_file.sort_index())


def test_rank_curves_at_multiples_of_six_carry_early_finishers_forward() -> None:
    index = pd.MultiIndex.from_product([["a", "b"], range(1, 13)], names=["dataset", "iteration"])
    errors = pd.DataFrame({"x": 1.0, "y": 2.0, "cma": np.nan}, index=index)
    errors.loc[(slice(None), [6, 12]), "cma"] = 0.5
    errors.loc[(slice(None), [10, 11, 12]), "x"] = np.nan  # x stopped after 9 evaluations
    curves = load.rank_curves(errors, budget=12)
    assert list(curves.index) == [6, 12]
    assert curves.loc[12].to_dict() == {"x": 2.0, "y": 3.0, "cma": 1.0}


def test_dataset_sizes_follow_the_protocol() -> None:
    sizes = load.dataset_sizes(["iris", "adult", "no-such-dataset"])
    assert sizes["iris"] == 150 - 50  # 1/3 test split
    assert sizes["adult"] == 32561  # predefined test file: D_TVS = the training file
    assert np.isnan(sizes["no-such-dataset"])


# --------------------------------------------------------------------------------- report


def test_report_opens_with_the_summary_then_the_claims_checklist(report: Path) -> None:
    text = report.read_text()
    headings = re.findall(r"^## .*$", text, flags=re.MULTILINE)
    assert headings[0].startswith("## 1. Summary")
    assert headings[1].startswith("## 2. Claims checklist")
    summary = text[text.index(headings[0]) : text.index(headings[1])]
    assert "ours: rank" in summary and "thesis (Table 3.1): rank" in summary
    assert "thesis (Table 3.5): win rate" in summary
    claims = text[text.index(headings[1]) :]
    for claim in range(1, 21):
        assert f"| C3.{claim} |" in claims


def test_every_report_ends_with_overtuning_and_provenance(report: Path) -> None:
    text = report.read_text()
    assert text.index("## Overtuning") < text.index("## Provenance")
    assert "Schneider, Bischl & Feurer" in text and "Report written by the plug-in" in text
    tables = report.parent / "tables"
    table = pd.read_csv(tables / "overtuning.csv", index_col=[0, 1])
    assert {"share_positive", "mean", "q90", "share_worse_than_reference"} <= set(table.columns)
    assert (tables / "overtuning_by_size.csv").is_file()
    assert (report.parent / "figures" / "fig_overtuning_curves.png").is_file()


def test_summary_pairs_our_numbers_with_the_thesis(sweep: Path, report: Path) -> None:
    summary = pd.read_csv(report.parent / "tables" / "summary_main_holdout.csv", index_col=0)
    assert summary.loc["gp-r", "thesis_rank"] == pytest.approx(5.58)  # Table 3.1, hold-out
    assert summary.loc["cma-gv", ["ours_rank", "ours_median"]].isna().all()  # not in our runs
    errors = load.per_dataset_errors(load.load_outcomes(sweep))
    scores = load.score_tables(errors)[("holdout", "main")]
    ours = stats.summary_table(scores[[m for m in MAIN_METHODS if m in scores.columns]])
    for metric in ("rank", "winrate", "median"):  # each of our numbers, in the thesis's row
        pd.testing.assert_series_equal(
            summary[f"ours_{metric}"].dropna(), ours[metric], check_names=False, check_like=True
        )


def test_every_table_has_csv_and_latex(report: Path) -> None:
    tables = report.parent / "tables"
    names = {p.stem for p in tables.glob("*.csv")}
    assert {"claims", "summary_main_holdout", "summary_pm_cv5", "friedman_nemenyi"} <= names
    assert {"table3.2_winloss_holdout", "table3.4b_winloss_cv5", "appendix_b_pm_cv5"} <= names
    figure_data = {n for n in names if n.startswith("fig")}  # numbers behind the figures
    assert {"fig3_3_convergence_rank_cv5", "fig3_4_rank_by_size_holdout"} <= figure_data
    for name in names - figure_data - {"per_dataset_errors"}:
        assert (tables / f"{name}.tex").read_text().startswith(r"\begin{table}")
    links = re.findall(r"\(tables/([^)]+)\)", report.read_text())
    assert all((tables.parent / "tables" / link).is_file() for link in links)


def test_figures_exist_as_png_and_pdf(report: Path) -> None:
    figures = report.parent / "figures"
    expected = [
        "fig3_1_overfitting",
        "fig3_3_convergence",
        "fig3_4_rank_by_size",
        "fig3_5_posterior_mean",
        "main_holdout_cd_nemenyi",
        "pm_cv5_cd_wilcoxon_holm",
    ]
    for name in expected:
        for suffix in (".png", ".pdf"):
            assert (figures / f"{name}{suffix}").stat().st_size > 1000, name
    for link in re.findall(r"\(figures/([^)]+)\)", report.read_text()):
        assert (figures / link).is_file()


def test_no_pdf_writes_every_figure_as_png_only(tmp_path: Path) -> None:
    folder = write_consolidated(tmp_path / "consolidated", outcome_rows())
    assert main([str(folder), "--out", str(tmp_path / "out"), "--no-pdf"]) == 0
    figures = tmp_path / "out" / "figures"
    assert (figures / "main_holdout_cd_nemenyi.png").is_file()
    assert (figures / "fig3_3_convergence.png").is_file()
    assert not list(figures.glob("*.pdf"))


def test_figure_formats_must_start_with_the_png_the_report_links() -> None:
    with pytest.raises(ValueError, match="must start with png"), figures.formats("pdf"):
        pass
    with pytest.raises(ValueError, match="must start with png"), figures.formats("png", "jpeg"):
        pass


def test_missing_methods_runs_and_protocols_degrade_gracefully(tmp_path: Path) -> None:
    frame = outcome_rows(drop_methods=("cma-r", "gp-pm-r"))
    lost_run = (frame["method"] == "gp") & (frame["dataset"] == "iris") & (frame["part"] == "main")
    kept = frame[~lost_run & (frame["protocol"] == "holdout")]  # and no 5-fold runs at all
    folder = write_consolidated(tmp_path / "consolidated", kept)
    assert main([str(folder), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    claims = pd.read_csv(tmp_path / "out" / "tables" / "claims.csv", index_col=0)
    assert claims.loc["C3.1", "status"] != "not evaluated"  # hold-out gp vs gp-r: all there
    assert claims.loc["C3.2", "status"] == "not evaluated"  # needs 5-fold
    assert claims.loc["C3.15", "status"] == "not evaluated"  # needs gp-pm-r
    assert "| cma-r | missing |" in text
    assert "No 5-fold results for this experiment." in text
    assert "left out iris" in text  # gp has no run on iris: the dataset leaves the main tables
    summary = pd.read_csv(tmp_path / "out" / "tables" / "summary_main_holdout.csv", index_col=0)
    assert summary["ours_rank"].notna().sum() == len(PARTS["main"]) - 1


def test_command_line_rejects_a_folder_without_results(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 2


def test_markdown_cells_may_contain_pipes() -> None:
    from analysis.render import markdown

    frame = pd.DataFrame({"condition": ["|a − b| ≤ 0.3"], "status": ["fails"]}, index=["C3.12"])
    lines = markdown(frame).splitlines()
    assert len(lines) == 3
    # every line splits into the same 3 cells on the unescaped separators
    assert {len(re.split(r"(?<!\\)\|", line)) - 2 for line in lines} == {3}


def test_no_figures_writes_every_table_and_no_figure(tmp_path: Path) -> None:
    """``--no-figures`` (the lean report): the same tables and plotted data as the full
    report, no figure file and no link to one, and a note where each figure would be."""
    folder = write_consolidated(tmp_path / "consolidated", outcome_rows())
    assert main([str(folder), "--out", str(tmp_path / "full")]) == 0
    assert main([str(folder), "--out", str(tmp_path / "lean"), "--no-figures"]) == 0
    assert not (tmp_path / "lean" / "figures").exists()
    full_tables = sorted(path.name for path in (tmp_path / "full" / "tables").iterdir())
    assert full_tables == sorted(path.name for path in (tmp_path / "lean" / "tables").iterdir())
    for name in full_tables:
        full, lean = (tmp_path / kind / "tables" / name for kind in ("full", "lean"))
        assert full.read_bytes() == lean.read_bytes(), name
    report = (tmp_path / "lean" / "report.md").read_text()
    assert "(figures/" not in report
    assert report.count(figures.NOT_DRAWN) >= 5  # Figs 3.1, 3.3, 3.4, 3.5 and the CD diagrams


def test_no_figures_imports_neither_matplotlib_nor_the_gp(tmp_path: Path) -> None:
    """The lean report's time is mostly imports once nothing is drawn."""
    folder = write_consolidated(tmp_path / "consolidated", outcome_rows())
    script = (
        "import sys\n"
        "from analysis.__main__ import main\n"
        f"assert main([{str(folder)!r}, '--out', {str(tmp_path / 'out')!r}, '--no-figures']) == 0\n"
        "loaded = {name.split('.')[0] for name in sys.modules}\n"
        "heavy = sorted(loaded & {'matplotlib', 'numba', 'torch'})\n"
        "print('heavy:', *heavy)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert finished.stdout.strip().splitlines()[-1] == "heavy:"
