"""Tables that set our statistics beside a thesis table of the same shape, shared by the chapter
plug-ins: the thesis's pairwise-Wilcoxon tables (Tables 4.3, 4.5, 5.3) read into numbers, the
"ours / thesis" cells in the thesis's conventions, and the per-dataset "significantly worse than
the best method" marks (the underlines or text counts of Tables 4.4, 4.6 and 5.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.stats import average_ranks, wilcoxon_pvalue, wilcoxon_pvalues

ALPHA = 0.05
DASH = "–"


def read_wilcoxon_table(
    path: Path, names: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A thesis Wilcoxon table (TSV; rows ``"<n> - <method>"``, cells ``0.01`` or ``(0.01)``):
    the printed p-values (NaN on the diagonal) and ``worse``, True where the cell is in
    parentheses, i.e. the row method has the worse average rank. ``names`` renames methods."""
    raw = pd.read_csv(path, sep="\t", dtype=str)
    methods = [label.split(" - ", 1)[1] for label in raw["method"]]
    methods = [(names or {}).get(m, m) for m in methods]
    cells = raw.drop(columns="method")
    cells.index, cells.columns = methods, methods
    worse = cells.apply(lambda column: column.str.startswith("("))
    numbers = cells.apply(lambda column: column.str.strip("()").replace("-", np.nan).astype(float))
    return numbers, worse


def p_cell(p: float, worse: bool, alpha: float = ALPHA) -> str:
    """A p-value as the thesis prints it: ``(0.03)`` when the row is worse, bold below alpha."""
    if pd.isna(p):
        return DASH
    text = f"({p:.2f})" if worse else f"{p:.2f}"
    return f"**{text}**" if p < alpha else text


def wilcoxon_beside_thesis(
    scores: pd.DataFrame | None,
    their_p: pd.DataFrame,
    their_worse: pd.DataFrame,
    alpha: float = ALPHA,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Cells ``ours / thesis`` over the thesis table's methods (``scores``: datasets × methods
    errors, complete rows; None or fewer than two methods: ours are dashes), our p-values alone,
    and a sentence counting the pairs whose significance and better-ranked side agree."""
    methods = list(their_p.index)
    if scores is not None and scores.shape[1] >= 2:
        our_p = wilcoxon_pvalues(scores).reindex(index=methods, columns=methods)
        ranks = average_ranks(scores).reindex(methods)
    else:
        our_p = pd.DataFrame(np.nan, index=methods, columns=methods)
        ranks = pd.Series(np.nan, index=methods)
    our_worse = pd.DataFrame(
        ranks.to_numpy()[:, None] > ranks.to_numpy()[None, :], index=methods, columns=methods
    )
    cells = pd.DataFrame(DASH, index=methods, columns=methods)
    for a in methods:
        for b in methods:
            if a != b:
                cells.loc[a, b] = (
                    f"{p_cell(our_p.loc[a, b], our_worse.loc[a, b], alpha)} / "
                    f"{p_cell(their_p.loc[a, b], their_worse.loc[a, b], alpha)}"
                )
    upper = np.triu(np.ones((len(methods),) * 2, dtype=bool), k=1) & our_p.notna().to_numpy()
    same_sig = ((our_p < alpha) == (their_p < alpha)).to_numpy() & upper
    same_dir = (our_worse == their_worse).to_numpy() & upper
    sentence = (
        f"Of {upper.sum()} method pairs with a p-value, significance at {alpha:g} agrees with the "
        f"thesis's in {same_sig.sum()} and the better-ranked side in {same_dir.sum()}."
    )
    return cells.rename_axis("method"), our_p.rename_axis("method"), sentence


def significantly_worse_than_best(
    repetitions: pd.DataFrame, methods: Sequence[str], alpha: float = ALPHA
) -> pd.DataFrame:
    """Datasets × methods: True where the method is significantly worse than the dataset's best
    (lowest mean) method — two-sided Wilcoxon signed-rank over the repetitions, paired by
    repetition, p < ``alpha``. ``repetitions``: columns dataset, method, repetition, error.
    Datasets where fewer than two methods share two repetitions are left out."""
    rows = repetitions[repetitions["method"].isin(methods)]
    marks = {}
    for dataset, block in rows.groupby("dataset"):
        table = block.pivot_table(index="repetition", columns="method", values="error").dropna()
        if table.shape[1] < 2 or len(table) < 2:
            continue
        best = table.mean().idxmin()
        marks[dataset] = {
            m: bool(
                m != best
                and table[m].mean() > table[best].mean()
                and wilcoxon_pvalue(table[m].to_numpy(), table[best].to_numpy()) < alpha
            )
            for m in table.columns
        }
    return pd.DataFrame.from_dict(marks, orient="index").reindex(columns=list(methods))
