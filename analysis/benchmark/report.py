"""The benchmark report's sections (see the plug-in's docstring).

Entry point: :func:`sections`, called by the engine (``analysis.report.write_report``) through
the plug-in ``analysis.benchmark.PLUGIN``. The candidates are the ones the sweep folder remembers
(``candidates.json``, written by ``--candidates``), or those ``python -m analysis --candidates``
names; every other method is a baseline.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import load, render, stats
from analysis.demo.report import (
    ScoreTables,
    _label,
    error_tables,
    errors_section,
    figures_section,
    winloss_section,
)
from analysis.plugins import ReportContext
from analysis.power import power
from runfiles import layout

ALPHA = 0.05


def candidates_of(source: Path) -> list[str]:
    """The candidate optimizers' config names the sweep folder remembers."""
    path = Path(source) / layout.CANDIDATES
    return list(json.loads(path.read_text())["optimizers"]) if path.is_file() else []


def _method_names(outcomes: pd.DataFrame, configs: list[str]) -> list[str]:
    """The results' method names (``GP-cond``) of optimizer config names (``gp_cond``)."""
    names = set(outcomes["method"].astype(str).unique())
    found = []
    for config in configs:
        spelled = [n for n in names if n.replace("-", "_").lower() == config.lower()]
        found += spelled or [config]
    return [n for n in found if n in names]


def title_section(source: Path, outcomes: pd.DataFrame, candidates: list[str]) -> str:
    baselines = [m for m in load.method_order(outcomes["method"].unique()) if m not in candidates]
    parts = sorted(outcomes["part"].astype(str).unique())
    return "\n".join(
        [
            "# Benchmark report\n",
            f"Results: `{source}` — {outcomes['dataset'].nunique()} datasets, task families "
            f"(parts): {', '.join(parts)}.",
            f"Candidates: {', '.join(candidates) or 'none (name them with --candidates)'}; "
            f"baselines: {', '.join(baselines)}.\n",
            "Each method's error is the test error of the configuration it chose at the end of "
            "its budget, averaged over repetitions; lower is better.\n",
        ]
    )


def versus_section(tables: ScoreTables, candidates: list[str], write: render.TableWriter) -> str:
    """Each candidate against each baseline: datasets won, tied and lost, the two-sided
    Wilcoxon signed-rank p (not evaluated when the datasets cannot reach p < α), and Friedman's
    test over all methods."""
    parts = ["## Candidates against the baselines\n"]
    for key, means in tables.items():
        scores, _ = load.complete(means)
        label = _label(key, list(tables))
        present = [c for c in candidates if c in scores.columns]
        parts.append(f"### {label}\n")
        if not present or len(scores) < 2:
            parts.append("Needs a candidate and 2 datasets with finished runs.\n")
            continue
        # the p is the normal approximation's (analysis.stats): the rule's floor is the larger of
        # the exact test's and the approximation's at the most extreme data
        weak = power("wilcoxon", len(scores), ALPHA, method="asymptotic")
        rows = []
        for candidate in present:
            for baseline in [m for m in scores.columns if m not in present]:
                difference = scores[candidate] - scores[baseline]
                p = stats.wilcoxon_pvalue(scores[candidate], scores[baseline])
                verdict = (
                    f"not evaluated: underpowered (smallest attainable p {weak.smallest_p:.3g})"
                    if weak is not None
                    else ("better" if p < ALPHA and difference.median() < 0 else
                          "worse" if p < ALPHA else "no significant difference")
                )  # fmt: skip
                rows.append(
                    {
                        "candidate": candidate,
                        "baseline": baseline,
                        "wins": int((difference < 0).sum()),
                        "ties": int((difference == 0).sum()),
                        "losses": int((difference > 0).sum()),
                        "mean difference (points)": round(float(difference.mean()), 3),
                        "Wilcoxon p": np.nan if np.isnan(p) else round(p, 4),
                        "verdict": verdict,
                    }
                )
        table = pd.DataFrame(rows).set_index(["candidate", "baseline"])
        parts.append(write(table, f"versus_{key[0]}_{key[1]}", f"Candidates vs baselines, {label}"))
        if scores.shape[1] > 2:
            friedman = stats.friedman(scores)
            weak = power("friedman", len(scores), ALPHA, scores.shape[1], method="asymptotic")
            parts.append(
                f"Friedman over {scores.shape[1]} methods and {len(scores)} datasets: "
                f"χ² = {friedman.statistic:.2f}, p = {friedman.pvalue:.3g}"
                + (
                    f" (not evaluated: underpowered, smallest attainable p {weak.smallest_p:.3g})"
                    if weak is not None
                    else ""
                )
                + ".\n"
            )
    return "\n".join(parts)


def overfitting_section(outcomes: pd.DataFrame, write: render.TableWriter) -> str:
    """Per task family and method: the chosen configuration's validation error (what the method
    optimised) against its test error, means over datasets and repetitions, in %."""
    final = load.final_outcomes(outcomes)
    final = final[final["incumbent_valid_loss"].notna()]
    parts = [
        "## Overfitting of the chosen configuration\n",
        "Validation error (what the optimizer saw) and test error of the configuration each "
        "method chose, in %, means over datasets and repetitions; the gap is test − "
        "validation. A method whose choice need not be an evaluated point has no validation "
        "error and is left out.\n",
    ]
    if final.empty:
        return "\n".join([*parts, "No chosen configuration with a validation error.\n"])
    grouped = final.groupby(["part", "method"], observed=True)
    table = pd.DataFrame(
        {
            "validation error %": 100 * grouped["incumbent_valid_loss"].mean(),
            "test error %": 100 * grouped["test_error"].mean(),
        }
    )
    table["gap (points)"] = table["test error %"] - table["validation error %"]
    parts.append(write(table.round(2), "overfitting", "Overfitting"))
    return "\n".join(parts)


def timing_section(source: Path, write: render.TableWriter) -> str:
    """Median seconds an optimizer spent per proposal (its ask and tell, not the fit)."""
    traces = load.load_traces(source)
    parts = ["## Time per proposal\n"]
    if traces.empty or "optimizer_seconds" not in traces.columns:
        return "\n".join([*parts, "No traces with the optimizer's seconds.\n"])
    grouped = traces.groupby(["part", "method"], observed=True)
    table = pd.DataFrame(
        {
            "median ms per proposal": 1e3 * grouped["optimizer_seconds"].median(),
            "median fit s per evaluation": grouped["fit_seconds"].median(),
        }
    ).round(3)
    parts.append(
        "The optimizer's own seconds per evaluation (ask + tell), median over every "
        "evaluation, beside the median seconds of the fits it asked for:\n"
    )
    parts.append(write(table, "time_per_proposal", "Time per proposal"))
    return "\n".join(parts)


def sections(context: ReportContext) -> list[str]:
    """The benchmark's sections, title first (the engine adds runs, overtuning and provenance)."""
    outcomes = context.outcomes
    named = context.options.get("candidates") or candidates_of(context.source)
    candidates = _method_names(outcomes, list(named))
    errors, tables = error_tables(outcomes)
    return [
        title_section(context.source, outcomes, candidates),
        errors_section(tables, errors, context.write),
        versus_section(tables, candidates, context.write),
        winloss_section(tables, context.write),
        overfitting_section(outcomes, context.write),
        timing_section(context.source, context.write),
        figures_section(outcomes, tables, context.out_dir),
    ]
