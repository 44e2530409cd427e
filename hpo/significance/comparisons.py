"""Statistical model selection of seed 003 (Bermúdez-Chacón 2014, §3.5, Algorithms 2 and 3).

The seed does not return the argmax: it returns the models that are *not significantly worse
than the best* on a hold-out part, ranked by several criteria. Given each candidate's scores
(higher is better; 3 x 10-fold CV on the hold-out part gives 30, §3.3):

* :func:`kmeans_filter` — per numeric leaf, k-means (k = 10) on the evaluated configurations,
  the best-scoring one of each cluster kept (§3.5.1);
* :func:`compare_to_best` — Algorithm 2 (MULTICOMP): each group's standardised scores against
  N(0, 1) by Kolmogorov-Smirnov, Bartlett's test of equal variances; if neither rejects, one-way
  ANOVA then Tukey's HSD (Tukey-Kramer) against the best, else Kruskal-Wallis then Nemenyi
  against the best; a non-significant omnibus test keeps every model (§3.5.2). The printed
  Algorithm 2 inverts the condition; the prose is implemented (spec A1.7);
* :func:`rank_models` — the criteria of Table 3.2 (generalisation, speed, stability, simplicity,
  interpretability) as fractional ranks, summed with user importances;
* :func:`select_models` — both together: the ranked list with mean scores, p-values against the
  best and tied-with-best flags; :func:`select_hierarchically` — Algorithm 3, promoting the top
  models of each subtree up to the root.

Pure functions of the scores (scipy and scikit-posthocs); nothing here fits a model.
Decisions and defaults: ``docs/hierarchical.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

CRITERIA = ("generalisation", "speed", "stability", "simplicity", "interpretability")
DEFAULT_IMPORTANCES: Mapping[str, float] = {"generalisation": 2.0, "stability": 1.0}
DEFAULT_ALPHA = 0.05
DEFAULT_K = 10  # §3.5.1
ROUNDING = 12  # decimals a criterion is rounded to before ranking, so that equal means tie
PARAMETRIC = "anova+tukey"
NON_PARAMETRIC = "kruskal+nemenyi"


class ModelSelectionError(ValueError):
    """Bad settings or input; the one-line message names the value and the valid choices."""


@dataclass(frozen=True)
class Candidate:
    """A model and its hold-out scores (higher is better).

    ``runtime``: its mean measured runtime on the hold-out part (speed, lower is better);
    ``complexity``: a predetermined value per family, lower is simpler (simplicity);
    ``interpretability``: a predetermined value per family, higher is better (Table 3.2);
    ``point``: its numeric hyperparameters in the unit cube, for :func:`kmeans_filter`.
    """

    name: str
    scores: tuple[float, ...]
    runtime: float | None = None
    complexity: float | None = None
    interpretability: float | None = None
    point: tuple[float, ...] | None = None

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores))

    @property
    def std(self) -> float:
        return float(np.std(self.scores, ddof=1)) if len(self.scores) > 1 else 0.0


@dataclass(frozen=True)
class Comparison:
    """The outcome of Algorithm 2 on a set of candidates (in their given order).

    ``test``: :data:`PARAMETRIC`, :data:`NON_PARAMETRIC` or ``"none"`` (one candidate);
    ``normality_p``: the KS p-value of each group; ``bartlett_p``; ``omnibus_p`` (ANOVA's F or
    Kruskal-Wallis's H); ``p_values``: the post-hoc p-value of each candidate against the best
    (1 for the best itself); ``tied``: not significantly worse than the best at ``alpha``.
    """

    best: int
    test: str
    alpha: float
    normality_p: tuple[float, ...]
    bartlett_p: float
    omnibus_p: float
    p_values: tuple[float, ...]
    tied: tuple[bool, ...]


@dataclass(frozen=True)
class RankedModel:
    """One line of the output: the candidate, its mean and spread, its p-value against the best,
    whether it is tied with the best, and its compound rank (NaN when not tied)."""

    candidate: Candidate
    mean: float
    std: float
    p_value: float
    tied: bool
    compound_rank: float

    @property
    def name(self) -> str:
        return self.candidate.name


@dataclass(frozen=True)
class Selection:
    """The ranked list: the tied models by compound rank, then the others by mean score."""

    ranked: tuple[RankedModel, ...]
    comparison: Comparison

    @property
    def tied(self) -> tuple[RankedModel, ...]:
        return tuple(m for m in self.ranked if m.tied)


def check_alpha(alpha: float) -> float:
    """``alpha`` if it lies in (0, 1), else :class:`ModelSelectionError`."""
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise ModelSelectionError(f"alpha={alpha!r} must be in (0, 1)")
    return float(alpha)


def _groups(scores: Sequence[Sequence[float]]) -> list[np.ndarray]:
    groups = [np.asarray(s, dtype=float) for s in scores]
    for i, g in enumerate(groups):
        if g.ndim != 1 or len(g) < 2 or not np.isfinite(g).all():
            raise ModelSelectionError(
                f"candidate {i} needs at least 2 finite scores, got {g.tolist()!r}"
            )
    return groups


def normality_p(group: np.ndarray) -> float:
    """KS p-value of the standardised scores against N(0, 1) (§3.5.2 step 3); 0 for constant
    scores, which no normal law gives [decision]."""
    sd = float(np.std(group, ddof=1))
    if sd == 0:
        return 0.0
    return float(stats.kstest((group - group.mean()) / sd, "norm").pvalue)


def compare_to_best(scores: Sequence[Sequence[float]], alpha: float = DEFAULT_ALPHA) -> Comparison:
    """Algorithm 2: which candidates are statistically indistinguishable from the best (the
    highest mean; the first on ties). ``scores[i]``: candidate ``i``'s scores."""
    alpha = check_alpha(alpha)
    groups = _groups(scores)
    if not groups:
        raise ModelSelectionError("compare_to_best needs at least one candidate")
    means = np.array([g.mean() for g in groups])
    best = int(np.argmax(means))
    k = len(groups)
    if k == 1:
        return Comparison(best, "none", alpha, (normality_p(groups[0]),), 1.0, 1.0, (1.0,), (True,))
    normal = tuple(normality_p(g) for g in groups)
    constant = any(np.ptp(g) == 0 for g in groups)
    bartlett = 0.0 if constant else float(stats.bartlett(*groups).pvalue)
    if min(normal) > alpha and bartlett > alpha:
        test = PARAMETRIC
        omnibus = float(stats.f_oneway(*groups).pvalue)
        p_matrix = _tukey_against_best(groups, best)
    else:
        test = NON_PARAMETRIC
        if np.ptp(np.concatenate(groups)) == 0:  # every score equal: nothing to tell apart
            omnibus, p_matrix = 1.0, np.ones((k, k))
        else:
            omnibus = float(stats.kruskal(*groups).pvalue)
            # imported here: scikit-posthocs imports matplotlib and seaborn, about a third of
            # the start-up time of every run that never reaches this line
            import scikit_posthocs

            p_matrix = scikit_posthocs.posthoc_nemenyi(groups).to_numpy()
    p_values = tuple(1.0 if i == best else float(p_matrix[best, i]) for i in range(k))
    significant = omnibus <= alpha
    tied = tuple(i == best or not significant or p > alpha for i, p in enumerate(p_values))
    return Comparison(best, test, alpha, normal, bartlett, omnibus, p_values, tied)


def _tukey_against_best(groups: Sequence[np.ndarray], best: int) -> np.ndarray:
    """Tukey-Kramer HSD p-values of every group against ``best`` (row ``best`` of the matrix
    ``scipy.stats.tukey_hsd`` gives, same formula): only the k - 1 pairs the cascade reads, since
    each studentized-range tail is a numerical integral (all 45 pairs of 10 groups take ~2 s)."""
    k = len(groups)
    sizes = np.array([len(g) for g in groups], dtype=float)
    means = np.array([g.mean() for g in groups])
    df = float(sizes.sum() - k)
    mse = sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df
    q = np.abs(means - means[best]) / np.sqrt(mse / 2 * (1 / sizes + 1 / sizes[best]))
    others = [i for i in range(k) if i != best]
    p_matrix = np.ones((k, k))
    p_matrix[best, others] = stats.studentized_range.sf(q[others], k, df)
    return p_matrix


def check_importances(importances: Mapping[str, float]) -> dict[str, float]:
    """The criteria with a positive importance; one-line errors for unknown criteria, negative
    importances or all zero."""
    for name, value in importances.items():
        if name not in CRITERIA:
            raise ModelSelectionError(
                f"unknown ranking criterion {name!r}; valid choices: {', '.join(CRITERIA)}"
            )
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise ModelSelectionError(f"importance {name}={value!r} must be a finite number >= 0")
    active = {n: float(v) for n, v in importances.items() if v > 0}
    if not active:
        raise ModelSelectionError(
            f"importances are all zero; give one of {', '.join(CRITERIA)} a positive importance"
        )
    return active


def _criterion(candidates: Sequence[Candidate], name: str) -> np.ndarray:
    """Each candidate's value of criterion ``name``, oriented so that lower is better."""
    if name == "generalisation":
        return -np.array([c.mean for c in candidates])
    if name == "stability":
        return np.array([c.std for c in candidates])
    attribute = {"speed": "runtime", "simplicity": "complexity"}.get(name, name)
    values = []
    for c in candidates:
        value = getattr(c, attribute)
        if value is None:
            raise ModelSelectionError(
                f"criterion {name!r} has a positive importance but candidate {c.name!r} has no "
                f"{attribute}; give it one or set the importance to 0"
            )
        values.append(float(value))
    return -np.array(values) if name == "interpretability" else np.array(values)


def rank_models(
    candidates: Sequence[Candidate], importances: Mapping[str, float] = DEFAULT_IMPORTANCES
) -> np.ndarray:
    """The compound rank of each candidate: ``sum_c importance_c * rank_c``, each ``rank_c`` a
    fractional rank (1 = best, ties averaged) under criterion ``c`` (Table 3.2). Lower is
    better."""
    active = check_importances(importances)
    compound = np.zeros(len(candidates))
    for name, importance in active.items():
        values = np.round(_criterion(candidates, name), ROUNDING)  # float noise is not a rank
        compound += importance * stats.rankdata(values, method="average")
    return compound


def select_models(
    candidates: Sequence[Candidate],
    alpha: float = DEFAULT_ALPHA,
    importances: Mapping[str, float] = DEFAULT_IMPORTANCES,
) -> Selection:
    """Algorithm 2 then the ranking: the models tied with the best, ordered by compound rank
    (ties by mean score, then input order), followed by the others by mean score."""
    if not candidates:
        raise ModelSelectionError("select_models needs at least one candidate")
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise ModelSelectionError(f"candidate name {duplicate!r} is used twice")
    check_importances(importances)
    comparison = compare_to_best([c.scores for c in candidates], alpha)
    tied = [i for i, t in enumerate(comparison.tied) if t]
    compound = np.full(len(candidates), math.nan)
    compound[tied] = rank_models([candidates[i] for i in tied], importances)
    means = [c.mean for c in candidates]
    order = sorted(tied, key=lambda i: (compound[i], -means[i], i))
    order += sorted((i for i in range(len(candidates)) if i not in tied), key=lambda i: -means[i])
    ranked = tuple(
        RankedModel(
            candidates[i],
            means[i],
            candidates[i].std,
            comparison.p_values[i],
            comparison.tied[i],
            float(compound[i]),
        )
        for i in order
    )
    return Selection(ranked, comparison)


def kmeans_filter(
    points: np.ndarray | Sequence[Sequence[float]],
    scores: Sequence[float],
    k: int = DEFAULT_K,
    seed: int = 0,
) -> list[int]:
    """§3.5.1: cluster the evaluated configurations of one leaf (``points``, shape ``(n, d)``,
    the unit cube [decision]) into ``k`` clusters by k-means and keep the best-scoring
    configuration of each (first on ties). Returns their indices, sorted. ``n <= k`` keeps all.
    """
    from sklearn.cluster import KMeans

    if not (isinstance(k, int) and k >= 1):
        raise ModelSelectionError(f"k={k!r} must be an integer >= 1")
    x = np.asarray(points, dtype=float)
    y = np.asarray(scores, dtype=float)
    if x.ndim != 2 or len(x) != len(y):
        raise ModelSelectionError(
            f"points must have shape (n, d) with n = {len(y)} scores, got {x.shape}"
        )
    distinct = len(np.unique(x, axis=0))
    if len(x) <= k or distinct <= 1:
        return list(range(len(x))) if len(x) <= k else [int(np.argmax(y))]
    clusters = min(k, distinct)
    labels = KMeans(n_clusters=clusters, n_init=10, random_state=seed).fit_predict(x)
    kept = []
    for cluster in range(clusters):
        members = np.flatnonzero(labels == cluster)
        kept.append(int(members[np.argmax(y[members])]))
    return sorted(kept)


Tree = Mapping[str, "Tree"] | Sequence[Candidate]


@dataclass(frozen=True)
class HierarchicalSelection:
    """Algorithm 3's outcome: the root's selection and each node's promoted models (by path)."""

    selection: Selection
    promoted: Mapping[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)


def select_hierarchically(
    tree: Tree,
    alpha: float = DEFAULT_ALPHA,
    top_n: int = 3,
    importances: Mapping[str, float] = DEFAULT_IMPORTANCES,
    k: int = DEFAULT_K,
    seed: int = 0,
) -> HierarchicalSelection:
    """Algorithm 3 (SELECT_MODELS): a leaf (a sequence of candidates) is k-means filtered when
    its candidates have points, a node unites its children's promoted models; at each, the
    models tied with the best are ranked and the first ``top_n`` promoted (Fig. 3.4). The root's
    selection ranks every model that reached it."""
    if not (isinstance(top_n, int) and top_n >= 1):
        raise ModelSelectionError(f"top_n={top_n!r} must be an integer >= 1")
    promoted: dict[tuple[str, ...], tuple[str, ...]] = {}

    def visit(node: Tree, path: tuple[str, ...]) -> tuple[list[Candidate], Selection]:
        if isinstance(node, Mapping):
            pool = [c for key, child in node.items() for c in visit(child, (*path, key))[0]]
        else:
            pool = list(node)
            if pool and all(c.point is not None for c in pool):
                points = [c.point for c in pool]
                pool = [pool[i] for i in kmeans_filter(points, [c.mean for c in pool], k, seed)]
        if not pool:
            raise ModelSelectionError(f"node {'/'.join(path) or '(root)'} has no candidates")
        selection = select_models(pool, alpha, importances)
        top = [m.candidate for m in selection.tied[:top_n]]
        promoted[path] = tuple(c.name for c in top)
        return top, selection

    _, root = visit(tree, ())
    return HierarchicalSelection(root, promoted)
