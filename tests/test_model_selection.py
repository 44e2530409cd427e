"""Statistical model selection (seed 003 §3.5, Algorithms 2 and 3) against scipy and
scikit-posthocs called directly on the same scores."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scikit_posthocs
from scipy import stats

from hpo.significance.comparisons import (
    NON_PARAMETRIC,
    PARAMETRIC,
    Candidate,
    ModelSelectionError,
    compare_to_best,
    kmeans_filter,
    rank_models,
    select_hierarchically,
    select_models,
)


def _normal_groups(seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    means = [0.80, 0.79, 0.78, 0.76, 0.74, 0.70, 0.65, 0.81, 0.60, 0.77]
    return [rng.normal(m, 0.02, size=30) for m in means]


def _skewed_groups(seed: int = 2) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shifts = [0.0, 0.05, 0.1, 0.3, 0.5, 0.02, 0.6, 0.01, 0.2, 0.4]
    return [1.0 - s - rng.exponential(0.05 + s / 10, size=30) ** 2 for s in shifts]


def test_normal_equal_variance_scores_take_anova_and_tukey() -> None:
    groups = _normal_groups()
    result = compare_to_best(groups, alpha=0.05)
    best = int(np.argmax([g.mean() for g in groups]))
    assert result.test == PARAMETRIC and result.best == best == 7
    standardised = [(g - g.mean()) / g.std(ddof=1) for g in groups]
    expected_normal = [stats.kstest(z, "norm").pvalue for z in standardised]
    assert result.normality_p == pytest.approx(expected_normal, rel=1e-12)
    assert result.bartlett_p == pytest.approx(stats.bartlett(*groups).pvalue, rel=1e-12)
    assert result.omnibus_p == pytest.approx(stats.f_oneway(*groups).pvalue, rel=1e-12)
    tukey = stats.tukey_hsd(*groups).pvalue[best]
    expected = [1.0 if i == best else tukey[i] for i in range(10)]
    assert result.p_values == pytest.approx(expected, rel=1e-12)
    assert result.tied == tuple(i == best or p > 0.05 for i, p in enumerate(expected))
    assert 1 < sum(result.tied) < 10


def test_skewed_or_unequal_spread_scores_take_kruskal_and_nemenyi() -> None:
    groups = _skewed_groups()
    result = compare_to_best(groups, alpha=0.05)
    best = int(np.argmax([g.mean() for g in groups]))
    assert result.test == NON_PARAMETRIC and result.best == best
    assert min(result.normality_p) <= 0.05 or result.bartlett_p <= 0.05
    assert result.omnibus_p == pytest.approx(stats.kruskal(*groups).pvalue, rel=1e-12)
    nemenyi = scikit_posthocs.posthoc_nemenyi(groups).to_numpy()[best]
    expected = [1.0 if i == best else nemenyi[i] for i in range(10)]
    assert result.p_values == pytest.approx(expected, rel=1e-12)
    assert result.tied == tuple(i == best or p > 0.05 for i, p in enumerate(expected))
    assert 1 < sum(result.tied) < 10


def _bimodal(mean: float, spread: float, rng: np.random.Generator) -> np.ndarray:
    """Scores at mean ± spread (plus a little noise): far from normal, variance ~ spread²."""
    sign = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    return mean + spread * (sign + rng.normal(0, 0.05, 30))


MEANS = (0.80, 0.79, 0.77, 0.75)
EQUAL, UNEQUAL = (0.02,) * 4, (0.005, 0.02, 0.04, 0.06)


@pytest.mark.parametrize(
    "normal, equal_variances, expected",
    [
        (True, True, PARAMETRIC),
        (True, False, NON_PARAMETRIC),  # Bartlett rejects alone
        (False, True, NON_PARAMETRIC),  # Kolmogorov-Smirnov rejects alone
        (False, False, NON_PARAMETRIC),
    ],
)
def test_anova_and_tukey_only_when_no_group_rejects_normality_and_bartlett_does_not_reject(
    normal: bool, equal_variances: bool, expected: str
) -> None:
    """§3.5.2 (Algorithm 2 as its prose reads): the parametric path needs both normal groups
    and equal variances; either failure alone sends the scores to Kruskal-Wallis and Nemenyi.
    Each case's data is checked to lie in its cell with scipy called directly."""
    rng = np.random.default_rng(11)
    spreads = EQUAL if equal_variances else UNEQUAL
    draw = (lambda m, s: rng.normal(m, s, 30)) if normal else (lambda m, s: _bimodal(m, s, rng))
    groups = [draw(m, s) for m, s in zip(MEANS, spreads, strict=True)]
    ks = [stats.kstest((g - g.mean()) / g.std(ddof=1), "norm").pvalue for g in groups]
    assert (min(ks) > 0.05) == normal
    assert (stats.bartlett(*groups).pvalue > 0.05) == equal_variances
    result = compare_to_best(groups, alpha=0.05)
    assert result.test == expected
    omnibus = stats.f_oneway if expected == PARAMETRIC else stats.kruskal
    assert result.omnibus_p == pytest.approx(omnibus(*groups).pvalue, rel=1e-12)


def test_a_non_significant_omnibus_keeps_every_model() -> None:
    rng = np.random.default_rng(4)
    groups = [rng.normal(0.5, 0.1, size=30) for _ in range(4)]
    result = compare_to_best(groups, alpha=0.05)
    assert result.omnibus_p > 0.05 and all(result.tied)


def test_a_larger_alpha_rejects_more_models_on_the_same_path() -> None:
    """§3.5.2: "a larger alpha will generally reject more models", while the cascade keeps its
    path (a larger alpha may also reject normality and switch to the less powerful Nemenyi)."""
    rng = np.random.default_rng(3)
    groups = [rng.normal(m, 0.02, size=30) for m in (0.80, 0.795, 0.79, 0.785, 0.78, 0.77)]
    results = [compare_to_best(groups, alpha) for alpha in (0.01, 0.05, 0.1, 0.2)]
    assert {r.test for r in results} == {PARAMETRIC}
    counts = [sum(r.tied) for r in results]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_constant_scores_are_not_normal_and_equal_ones_are_all_tied() -> None:
    constant = [np.full(30, 1.0), np.linspace(0.5, 0.9, 30)]
    result = compare_to_best(constant)
    assert result.test == NON_PARAMETRIC and result.normality_p[0] == 0.0 and result.best == 0
    equal = compare_to_best([np.full(30, 0.7)] * 3)
    assert equal.tied == (True, True, True) and equal.omnibus_p == 1.0


def test_compound_ranks_by_hand() -> None:
    candidates = [
        Candidate("a", (0.90, 0.80, 0.85), runtime=2.0),  # mean .85, sd .05
        Candidate("b", (0.84, 0.86, 0.85), runtime=1.0),  # mean .85, sd .01
        Candidate("c", (0.70, 0.90, 0.80), runtime=1.0),  # mean .80, sd .10
    ]
    # generalisation ranks (higher mean better): a 1.5, b 1.5, c 3
    # stability ranks (lower sd better): b 1, a 2, c 3; speed (lower runtime): b 1.5, c 1.5, a 3
    ranks = rank_models(candidates, {"generalisation": 2.0, "stability": 1.0, "speed": 0.5})
    np.testing.assert_allclose(
        ranks, [2 * 1.5 + 2 + 0.5 * 3, 2 * 1.5 + 1 + 0.5 * 1.5, 6 + 3 + 0.75]
    )


def test_the_ranked_list_puts_tied_models_first_by_compound_rank() -> None:
    groups = _normal_groups()
    candidates = [Candidate(f"m{i}", tuple(g)) for i, g in enumerate(groups)]
    selection = select_models(candidates, alpha=0.05)
    tied = [m for m in selection.ranked if m.tied]
    assert selection.ranked[: len(tied)] == selection.tied == tuple(tied)
    assert [m.compound_rank for m in tied] == sorted(m.compound_rank for m in tied)
    others = selection.ranked[len(tied) :]
    assert [m.mean for m in others] == sorted((m.mean for m in others), reverse=True)
    assert all(np.isnan(m.compound_rank) for m in others)
    best = selection.comparison.best
    assert {m.name: m.p_value for m in selection.ranked}[f"m{best}"] == 1.0
    by_name = {m.name: m for m in selection.ranked}
    assert by_name["m3"].mean == pytest.approx(groups[3].mean())
    assert by_name["m3"].p_value == pytest.approx(stats.tukey_hsd(*groups).pvalue[best, 3])


def test_tied_models_with_equal_compound_ranks_are_ordered_by_mean_score() -> None:
    z = np.random.default_rng(0).normal(size=30)
    z = (z - z.mean()) / z.std(ddof=1)
    # a: mean rank 1, sd rank 3 -> 2·1 + 3 = 5; b: mean rank 2, sd rank 1 -> 5; c: 2·3 + 2 = 8
    candidates = [
        Candidate("b", tuple(0.79 + 0.01 * z)),
        Candidate("a", tuple(0.80 + 0.06 * z)),
        Candidate("c", tuple(0.78 + 0.03 * z)),
    ]
    selection = select_models(candidates, alpha=0.05)
    assert all(m.tied for m in selection.ranked)  # the omnibus test keeps all three
    assert [(m.name, m.compound_rank) for m in selection.ranked] == [
        ("a", 5.0),
        ("b", 5.0),
        ("c", 8.0),
    ]


def test_interpretability_ranks_higher_values_first() -> None:
    """Table 3.2: interpretability is a predetermined value, higher is better (unlike speed and
    simplicity, where lower is)."""
    candidates = [
        Candidate("opaque", (0.8, 0.9), interpretability=1.0, complexity=1.0),
        Candidate("clear", (0.8, 0.9), interpretability=3.0, complexity=3.0),
    ]
    np.testing.assert_allclose(rank_models(candidates, {"interpretability": 1.0}), [2.0, 1.0])
    np.testing.assert_allclose(rank_models(candidates, {"simplicity": 1.0}), [1.0, 2.0])


def test_kmeans_keeps_the_best_of_each_cluster() -> None:
    rng = np.random.default_rng(0)
    centres = np.array([[0.1, 0.1], [0.9, 0.1], [0.5, 0.9]])
    points = np.concatenate([c + rng.normal(0, 0.02, size=(20, 2)) for c in centres])
    scores = rng.uniform(size=60)
    kept = kmeans_filter(points, scores, k=3)
    expected = sorted(20 * b + int(np.argmax(scores[20 * b : 20 * b + 20])) for b in range(3))
    assert kept == expected
    assert kmeans_filter(points[:5], scores[:5], k=10) == [0, 1, 2, 3, 4]
    same = np.full((12, 2), 0.5)  # one distinct point: one cluster, its best-scoring member
    assert kmeans_filter(same, [0.3, 0.9, 0.1, *[0.5] * 9], k=10) == [1]
    assert len(kmeans_filter(points, scores)) == 10


def test_algorithm_3_promotes_the_top_models_up_the_tree() -> None:
    rng = np.random.default_rng(3)

    def leaf(prefix: str, means: list[float]) -> list[Candidate]:
        return [
            Candidate(f"{prefix}{i}", tuple(rng.normal(m, 0.02, size=30)), point=(i / 10, 0.5))
            for i, m in enumerate(means)
        ]

    tree = {
        "svm": {"rbf": leaf("rbf", [0.9, 0.7, 0.89]), "linear": leaf("lin", [0.6, 0.62])},
        "knn": leaf("knn", [0.5, 0.88, 0.4]),
    }
    result = select_hierarchically(tree, alpha=0.05, top_n=1)
    assert result.promoted[("svm", "rbf")] in (("rbf0",), ("rbf2",))
    assert result.promoted[("svm", "linear")] in (("lin0",), ("lin1",))
    assert result.promoted[("svm",)] == result.promoted[("svm", "rbf")]
    assert {m.name for m in result.selection.ranked} == {
        *result.promoted[("svm",)],
        *result.promoted[("knn",)],
    }
    assert result.promoted[()] == (result.selection.tied[0].name,)


def test_algorithm_3_filters_each_leaf_by_k_means_with_the_run_s_seed_and_k(monkeypatch) -> None:
    """§3.5.1's k-means on a leaf's configurations is seeded from the run (same run, same
    clusters: a selection is reproducible) and keeps ``k`` clusters."""
    from hpo.significance import comparisons

    calls = []
    own = comparisons.kmeans_filter

    def recording(points, scores, k, seed):  # noqa: ANN001, ANN202
        calls.append((len(points), k, seed))
        return own(points, scores, k, seed)

    monkeypatch.setattr(comparisons, "kmeans_filter", recording)
    rng = np.random.default_rng(4)
    leaf = [Candidate(f"m{i}", tuple(rng.normal(0.8, 0.02, 10)), point=(i / 10,)) for i in range(6)]
    select_hierarchically({"only": leaf}, alpha=0.05, top_n=2, k=3, seed=17)
    assert calls == [(6, 3, 17)]


def test_algorithm_3_promotes_only_models_tied_with_the_best() -> None:
    """Algorithm 3 promotes the top ``top_n`` of the models *not significantly worse than the
    best*: a leaf with one clear winner promotes it alone, whatever ``top_n``."""
    rng = np.random.default_rng(5)
    leaf = [
        Candidate(f"m{i}", tuple(rng.normal(m, 0.01, 30))) for i, m in enumerate([0.9, 0.6, 0.5])
    ]
    result = select_hierarchically({"only": leaf}, alpha=0.05, top_n=3)
    assert result.promoted[("only",)] == ("m0",)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, "0.05"])
def test_alpha_outside_the_open_unit_interval_is_refused(alpha: object) -> None:
    with pytest.raises(ModelSelectionError, match=re.escape(f"alpha={alpha!r} must be in (0, 1)")):
        compare_to_best(_normal_groups()[:3], alpha)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("importances", "message"),
    [
        ({"generalisation": -1.0}, "importance generalisation=-1.0 must be a finite number >= 0"),
        ({"generalisation": 0.0}, "importances are all zero"),
        ({"accuracy": 1.0}, "unknown ranking criterion 'accuracy'; valid choices: generalisation"),
        ({"speed": 1.0}, "candidate 'a' has no runtime"),
    ],
)
def test_bad_importances_are_one_line_errors(importances: dict, message: str) -> None:
    candidates = [Candidate("a", (0.5, 0.6)), Candidate("b", (0.4, 0.5))]
    with pytest.raises(ModelSelectionError, match=re.escape(message)) as caught:
        select_models(candidates, 0.05, importances)
    assert "\n" not in str(caught.value)


def test_bad_candidates_are_named() -> None:
    with pytest.raises(ModelSelectionError, match="candidate 1 needs at least 2 finite scores"):
        compare_to_best([[0.5, 0.6], [0.5]])
    with pytest.raises(ModelSelectionError, match=r"candidate 0 needs .* got \[0.5, nan\]"):
        compare_to_best([[0.5, None], [0.5, 0.6]])  # a fold that gave no score
    with pytest.raises(ModelSelectionError, match="candidate name 'a' is used twice"):
        select_models([Candidate("a", (0.5, 0.6)), Candidate("a", (0.4, 0.5))])


def test_one_candidate_is_the_best_with_no_test_run() -> None:
    """Algorithm 2 on a single candidate: nothing to compare, so no test; it is the best, tied
    with itself, and every p-value is 1 (no evidence against it)."""
    comparison = compare_to_best([[0.5, 0.6, 0.7]])
    assert (comparison.best, comparison.test, comparison.tied) == (0, "none", (True,))
    assert (comparison.bartlett_p, comparison.omnibus_p, comparison.p_values) == (1.0, 1.0, (1.0,))


def test_a_constant_group_is_recorded_as_unequal_variances_and_goes_non_parametric() -> None:
    """Bartlett's statistic divides by a group's variance: on a group without spread Algorithm 2
    records p = 0 (variances not equal; scipy gets there too, through log(0) and a warning) and
    takes the non-parametric branch."""
    comparison = compare_to_best([[0.8, 0.8, 0.8, 0.8, 0.8], [0.1, 0.5, 0.3, 0.7, 0.2]])
    assert comparison.bartlett_p == 0.0 and comparison.test == "kruskal+nemenyi"
