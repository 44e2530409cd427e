"""The ESMBO report sections: Tables 2–3 per space (ρ with both significance marks, E[rank]),
the PB and sign-test matrices, Figures 1–2 and the claims of UAI 2014 §6.4 as a checklist.

Statistics: :mod:`analysis.bayes_comparison` (per iteration, averaged over the last
:data:`~analysis.bayes_comparison.LAST_ITERATIONS` iterations; fewer when the budget is
smaller). Without predictions sidecars the PB columns are "–" and the claims that need them are
"not evaluated". The paper's numbers are printed next to ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import bayes_comparison as bc
from analysis.claims import Claim, MissingInput, Outcome, decided, records_frame, run_claim
from analysis.esmbo import data
from analysis.esmbo.data import PAPER_ORDER, SPACES
from analysis.plugins import ReportContext
from analysis.power import Underpowered, all_can_decide, any_can_decide, power
from analysis.render import FigureSet, format_number

# The paper's E[rank] (Tables 2-3), for the side-by-side column.
PAPER_RANKS = {
    "svr": {"ESMBO": 1.66, "ERS": 2.38, "SMBO": 2.68, "RS": 3.27},
    "gbr": {"ERS": 1.84, "ESMBO": 1.85, "RS": 3.12, "SMBO": 3.19},
    "rf_regression": {"ESMBO": 1.80, "ERS": 1.81, "SMBO": 2.82, "RS": 3.57},
    "svm": {"ESMBO": 2.35, "RS": 2.52, "SMBO": 2.54, "ERS": 2.59},
    "gbc": {"ESMBO": 2.25, "ERS": 2.28, "RS": 2.64, "SMBO": 2.83},
    "rf": {"ERS": 2.24, "ESMBO": 2.25, "RS": 2.63, "SMBO": 2.89},
    "mlp": {"ESMBO": 1.92, "SMBO": 2.21, "ERS": 2.91, "RS": 2.96},
}
FIGURE_PAIRS = (("ESMBO", "SMBO"), ("ESMBO", "ERS"), ("ERS", "RS"), ("SMBO", "RS"))
EASY_SPACES, HARD_SPACES = ("rf", "rf_regression", "gbr", "gbc"), ("svr", "mlp")
SIGNIFICANT = 0.9  # PB "significant" (•): Pr(A ≻ B) above it, i.e. 1 − Pr below PB_ALPHA
SIGN_ALPHA = 0.05  # the sign test's level for the same mark
PB_ALPHA = round(1 - SIGNIFICANT, 12)
SEED = 0  # the Bayesian bootstrap of regression p_j


@dataclass
class SpaceResult:
    """One space's statistics."""

    part: str
    risks: pd.DataFrame
    losses: pd.DataFrame | None
    last: int
    table: pd.DataFrame = field(init=False)
    pb_curves: pd.DataFrame | None = field(init=False)
    rank_curves: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(SEED)
        self.table = bc.comparison_table(self.risks, self.losses, self.last, rng)
        self.rank_curves = bc.rank_by_iteration(self.risks)
        self.pb_curves = None if self.losses is None else pb_by_iteration(self.losses, rng)

    @property
    def n_datasets(self) -> int:
        return int(self.risks.dataset.nunique())

    def cell(self, row: str, column: str) -> pd.Series:
        match = self.table[(self.table.row == row) & (self.table.column == column)]
        if match.empty:
            raise MissingInput(f"{self.part} lacks methods {row} or {column}")
        return match.iloc[0]

    def ranks(self) -> pd.Series:
        return self.table.groupby("row", sort=False)["row_expected_rank"].first()


def pb_by_iteration(losses: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``Pr(A ≻ B)`` per iteration (rows) for the :data:`FIGURE_PAIRS` present (columns)."""
    methods = set(losses.method.unique())
    curves = {}
    for a, b in FIGURE_PAIRS:
        if {a, b} <= methods:
            p = bc.dataset_probabilities(losses, a, b, rng)
            curves[f"{a} ≻ {b}"] = p.groupby(level=0).apply(lambda g: bc.pb_probability(g))
    return pd.DataFrame(curves)


def compute(context: ReportContext) -> dict[str, SpaceResult]:
    """Every space's statistics, in the paper's order of spaces."""
    risks = data.risks(context.outcomes)
    losses = data.example_losses_by_part(context.source, context.options.get("data_dir"))
    results = {}
    for part in [p for p in SPACES if p in risks] + sorted(set(risks) - set(SPACES)):
        frame = risks[part]
        last = min(bc.LAST_ITERATIONS, int(frame.iteration.nunique()))
        results[part] = SpaceResult(part, frame, losses.get(part), last)
    return results


# ------------------------------------------------------------------------------------ tables


def paper_table(result: SpaceResult) -> pd.DataFrame:
    """ρ with marks (PB first, then the sign test), E[rank], the paper's E[rank]."""
    ranks = result.ranks()
    table = pd.DataFrame(index=ranks.index, columns=[*ranks.index, "E[rank]", "paper E[rank]"])
    for cell in result.table.itertuples(index=False):
        table.loc[cell.row, cell.column] = f"{cell.rho:.2f} {cell.marks}".strip()
    table["E[rank]"] = [format_number(v) for v in ranks]
    paper = PAPER_RANKS.get(result.part, {})
    table["paper E[rank]"] = [format_number(paper.get(m, float("nan"))) for m in ranks.index]
    return table


def _matrix(result: SpaceResult, column: str, digits: int) -> pd.DataFrame:
    pivot = result.table.pivot(index="row", columns="column", values=column)
    order = list(result.ranks().index)
    return pivot.loc[order, order].map(lambda v: format_number(v, digits))


# ----------------------------------------------------------------------------------- figures


def figure(results: dict[str, SpaceResult], task: str) -> tuple[object, dict[str, pd.DataFrame]]:
    """Figure 1 (regression) or 2 (classification): per space, PB curves and E[rank] curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = [p for p, r in results.items() if SPACES.get(p, ("", ""))[1] == task]
    fig, axes = plt.subplots(len(parts), 2, figsize=(10, 2.8 * len(parts)), squeeze=False)
    plotted: dict[str, pd.DataFrame] = {}
    for (left, right), part in zip(axes, parts, strict=True):
        result = results[part]
        if result.pb_curves is not None and not result.pb_curves.empty:
            for name in result.pb_curves:
                left.plot(result.pb_curves.index, result.pb_curves[name], label=name)
            for threshold in bc.PB_THRESHOLDS:
                left.axhline(threshold, color="grey", lw=0.5, ls=":")
            left.legend(fontsize=7)
            plotted[f"{part}_pb"] = result.pb_curves
        else:
            left.text(0.5, 0.5, "no predictions sidecars: no PB test", ha="center")
        left.set_ylim(0, 1)
        left.set_ylabel(f"{SPACES.get(part, (part,))[0]}\nPr(A ≻ B)", fontsize=8)
        for method in result.rank_curves:
            right.plot(result.rank_curves.index, result.rank_curves[method], label=method)
        right.set_ylabel("E[rank]")
        right.legend(fontsize=7)
        plotted[f"{part}_rank"] = result.rank_curves
    for ax in axes[-1]:
        ax.set_xlabel("iteration")
    fig.tight_layout()
    return fig, plotted


# ------------------------------------------------------------------------------------ claims


def _spaces(results: dict[str, SpaceResult], parts: tuple[str, ...]) -> list[SpaceResult]:
    missing = [p for p in parts if p not in results]
    if missing:
        raise MissingInput(f"spaces {missing} have no results")
    return [results[p] for p in parts]


def _needs_pb(result: SpaceResult) -> None:
    if result.losses is None:
        raise MissingInput(f"{result.part} has no predictions sidecars (the PB test's input)")


def _significantly_better(result: SpaceResult, a: str, b: str) -> bool:
    cell = result.cell(a, b)
    return bool(cell.pb > SIGNIFICANT or cell.sign_p < SIGN_ALPHA)


def _sign_power(result: SpaceResult) -> Underpowered | None:
    """The engine's power rule for the one-sided sign test over the space's datasets (its p, a
    mean over the last iterations, is never below one iteration's floor, 1/2^n)."""
    return power("sign", result.n_datasets, SIGN_ALPHA, alternative="greater")


def _pb_power(result: SpaceResult) -> Underpowered | None:
    """The power rule for the PB test over the space's datasets: Pr(A ≻ B) is at most
    1 − 1/2^(n+1) (uniform prior), so 1 − Pr cannot go below PB_ALPHA with 2 datasets or fewer."""
    return power("pb", result.n_datasets, PB_ALPHA)


def _either_power(result: SpaceResult) -> Underpowered | None:
    """ "Significant by the PB or the sign test" (:func:`_significantly_better`): a finding of
    no significant difference needs one test that could have found one."""
    return any_can_decide(_pb_power(result), _sign_power(result))


def never_beaten(results: dict[str, SpaceResult]) -> Outcome:
    spaces = _spaces(results, tuple(SPACES))
    conditions = []
    for r in spaces:
        _needs_pb(r)
        beaters = [m for m in PAPER_ORDER if m != "ESMBO" and _significantly_better(r, m, "ESMBO")]
        holds = decided(_either_power(r) if not beaters else None, not beaters)
        conditions.append((f"{r.part}: nothing beats ESMBO (beaten by {beaters})", holds))
    return Outcome(
        "; ".join(f"{r.part} {format_number(r.ranks()['ESMBO'])}" for r in spaces), conditions
    )


def first_or_behind_ers(results: dict[str, SpaceResult]) -> Outcome:
    spaces = _spaces(results, tuple(SPACES))
    conditions, values = [], []
    for r in spaces:
        order = list(r.ranks().index)
        values.append(f"{r.part}: {'>'.join(order)}")
        ok = order[0] == "ESMBO" or order[:2] == ["ERS", "ESMBO"]
        conditions.append((f"{r.part}: ESMBO first or second behind ERS", ok))
    return Outcome("; ".join(values), conditions)


def close_to_ers_on_easy(results: dict[str, SpaceResult]) -> Outcome:
    conditions, values = [], []
    for r in _spaces(results, EASY_SPACES):
        _needs_pb(r)
        rho = r.cell("ESMBO", "ERS").rho
        values.append(f"{r.part} ρ={rho:.2f}")
        apart = _significantly_better(r, "ESMBO", "ERS") or _significantly_better(r, "ERS", "ESMBO")
        holds = decided(_either_power(r) if not apart else None, not apart)
        conditions.append((f"{r.part}: no significant ESMBO-ERS difference", holds))
    return Outcome("; ".join(values), conditions)


def wins_on_hard(results: dict[str, SpaceResult]) -> Outcome:
    conditions, values = [], []
    for r in _spaces(results, HARD_SPACES):
        _needs_pb(r)
        others = ["ERS", "RS"] + (["SMBO"] if r.part == "svr" else [])
        for other in others:
            cell = r.cell("ESMBO", other)
            values.append(f"{r.part} vs {other}: ρ={cell.rho:.2f} PB={cell.pb:.2f}")
            ok = decided(
                all_can_decide(_pb_power(r), _sign_power(r)),
                cell.pb > SIGNIFICANT and cell.sign_p < SIGN_ALPHA,
            )
            conditions.append((f"{r.part}: ESMBO significantly beats {other} (both tests)", ok))
    return Outcome("; ".join(values), conditions)


def temporal(results: dict[str, SpaceResult]) -> Outcome:
    conditions, values = [], []
    for r in _spaces(results, tuple(SPACES)):
        _needs_pb(r)
        curve = r.pb_curves.get("ESMBO ≻ SMBO")
        if curve is None:
            raise MissingInput(f"{r.part} lacks ESMBO or SMBO")
        above = curve.index[curve.to_numpy() > SIGNIFICANT]
        first = int(above[0]) if len(above) else None
        values.append(f"{r.part}: {first}")
        weak = _pb_power(r)
        if r.part == "mlp":
            at_end = decided(weak, curve.iloc[-1] > SIGNIFICANT)
            conditions.append(("mlp: ESMBO ≻ SMBO significant at the end", at_end))
        else:
            early = first is not None and first <= max(3, int(0.1 * curve.index.max()))
            conditions.append(
                (f"{r.part}: significant within the first 10 % of iterations", decided(weak, early))
            )
    return Outcome("first significant iteration: " + "; ".join(values), conditions)


CLAIMS: list[Claim[dict[str, SpaceResult]]] = [
    Claim("U1", "ESMBO is never significantly beaten", "all 7 spaces", never_beaten),
    Claim("U2", "ESMBO is ranked first or just behind ERS", "all 7 spaces", first_or_behind_ers),
    Claim("U3", "ESMBO ≈ ERS on easy spaces (RF, GBR/GBC)", "ρ 0.48–0.53", close_to_ers_on_easy),
    Claim("U4", "ESMBO clearly wins on hard spaces (SVR, MLP)", "•• cells", wins_on_hard),
    Claim(
        "U5",
        "Pr(ESMBO ≻ SMBO) becomes significant within a few iterations (MLP: SMBO first, then "
        "ESMBO overtakes)",
        "Figures 1–2",
        temporal,
    ),
]


# ---------------------------------------------------------------------------------- sections


def sections(context: ReportContext) -> list[str]:
    """The report's Markdown sections, title first."""
    results = compute(context)
    write = context.write
    out = [
        "# ESMBO: Sequential Model-Based Ensemble Optimization (UAI 2014) — reproduction\n",
        "Methods: ESMBO = `esmbo`, SMBO = `smbo`, ERS = `ers`, RS = `ers-argmin` (the same "
        "random-search run as ERS). Marks: PB test first, then sign test; "
        f"{', '.join(bc.MARKS[1:])} = lightly significant, significant, highly significant "
        f"(PB > {bc.PB_THRESHOLDS}, sign p < {bc.SIGN_THRESHOLDS}). Statistics per iteration, "
        "averaged over the last 15 iterations (fewer when the budget is smaller).\n",
    ]
    for part, result in results.items():
        label, task, paper = SPACES.get(part, (part, "?", "–"))
        pb_note = "" if result.losses is not None else " (no predictions sidecars: PB not computed)"
        out.append(
            f"## {label} ({task}; the paper's {paper})\n\n{result.n_datasets} datasets, last "
            f"{result.last} iterations{pb_note}.\n"
        )
        out.append(write(paper_table(result), f"esmbo_{part}", f"{label}: ρ(row beats column)"))
        out.append(write(_matrix(result, "pb", 2), f"esmbo_{part}_pb", f"{label}: Pr(row ≻ col)"))
        out.append(
            write(_matrix(result, "sign_p", 3), f"esmbo_{part}_sign", f"{label}: sign-test p")
        )
        write(result.table, f"esmbo_{part}_cells", f"{label}: every cell")
    figures = FigureSet(context.out_dir)
    for number, task in ((1, "regression"), (2, "classification")):
        if any(SPACES.get(p, ("", ""))[1] == task for p in results):
            fig, plotted = figure(results, task)
            figures.add(
                fig,
                f"esmbo_figure{number}",
                f"Figure {number} ({task}): left Pr(A ≻ B) by the PB test, right E[rank], "
                "against the iteration",
                plotted,
            )
    out.append("## Figures 1–2\n\n" + "\n".join(figures.markdown))
    claims = records_frame(run_claim(claim, results) for claim in CLAIMS)
    shown = claims[["statement", "thesis_value", "our_value", "status", "reason"]]
    out.append("## Claims (UAI 2014 §6.4)\n\n" + write(shown, "esmbo_claims", "Claims checklist"))
    return out
