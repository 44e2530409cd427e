"""Final-selection rules on hand-made traces with known answers
(thesis §3.2.2, Eqs 3.5-3.8; §3.4.1; [decide] ties and populations, docs/deviations.md)."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.rules.final_selection import (
    NO_ANSWER,
    RULES,
    backwarding,
    best_selection,
    best_validation,
    global_validation,
    partial_validation,
    population_ends,
)

_ = NO_ANSWER

# Three generations of 3 (the last truncated to 2). Indices:   0    1    2 |  3    4    5 |  6    7
CMA_VALID = np.array([0.30, 0.20, 0.20, 0.25, 0.10, 0.40, 0.05, 0.50])
CMA_SEL = np.array([0.40, 0.30, 0.10, 0.30, 0.20, 0.10, 0.35, 0.20])
CMA_BATCH = np.array([1, 1, 1, 2, 2, 2, 3, 3])


def test_best_validation_running_argmin_earliest_tie_and_no_selection_split_needed() -> None:
    valid = [0.3, 0.2, 0.2, 0.1, 0.1, 0.4]
    no_split = [np.nan] * 6
    got = best_validation(valid, no_split, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(got, [0, 1, 1, 3, 3, 3])


def test_best_selection_ignores_validation_and_keeps_earliest_tie() -> None:
    valid = [0.1, 0.2, 0.3, 0.4, 0.5]
    selection = [0.5, 0.3, 0.3, 0.6, 0.2]
    got = best_selection(valid, selection, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(got, [0, 1, 1, 1, 4])


def test_selection_rules_refuse_nan_selection_loss() -> None:
    no_split = np.full(CMA_VALID.size, np.nan)
    for rule in (best_selection, partial_validation, backwarding, global_validation):
        with pytest.raises(ValueError, match="selection_loss is NaN"):
            rule(CMA_VALID, no_split, CMA_BATCH)


def test_validation_rules_refuse_nan_validation_loss() -> None:
    valid = CMA_VALID.copy()
    valid[4] = np.nan
    for rule in (best_validation, backwarding):
        with pytest.raises(ValueError, match=r"valid_loss is NaN at evaluations \[4\]"):
            rule(valid, CMA_SEL, CMA_BATCH)


def test_population_ends_include_truncated_last_generation() -> None:
    np.testing.assert_array_equal(
        population_ends(CMA_BATCH), [0, 0, 1, 0, 0, 1, 0, 1]
    )  # generation ends 2, 5 and the run's last evaluation 7


def test_partial_validation_uses_last_population_only() -> None:
    # b_S per generation: gen 1 -> 2 (0.10), gen 2 -> 5 (0.10), gen 3 -> 7 (0.20, worse: pv forgets)
    got = partial_validation(CMA_VALID, CMA_SEL, CMA_BATCH)
    np.testing.assert_array_equal(got, [_, _, 2, _, _, 5, _, 7])


def test_partial_validation_tie_within_population_earliest() -> None:
    got = partial_validation([0.1] * 4, [0.3, 0.2, 0.2, 0.2], [1, 1, 2, 2])
    np.testing.assert_array_equal(got, [_, 1, _, 2])


def test_backwarding_archive_of_validation_bests() -> None:
    # b_V: gen 1 -> 1 (0.20, tie with 2: earliest), y_sel 0.30; gen 2 -> 4 (0.10), y_sel 0.20 < 0.30
    # gen 3 -> 6 (0.05), y_sel 0.35 > 0.20: archive keeps 4
    got = backwarding(CMA_VALID, CMA_SEL, CMA_BATCH)
    np.testing.assert_array_equal(got, [_, _, 1, _, _, 4, _, 4])


def test_backwarding_keeps_archive_on_equal_selection_loss() -> None:
    valid = [0.2, 0.3, 0.1, 0.3]
    selection = [0.4, 0.1, 0.4, 0.0]  # gen 2's b_V (index 2) only ties the archive's 0.4
    got = backwarding(valid, selection, [1, 1, 2, 2])
    np.testing.assert_array_equal(got, [_, 0, _, 0])


def test_global_validation_archive_of_selection_bests() -> None:
    # b_S: gen 1 -> 2 (0.10); gen 2 -> 5 (0.10, equal: not strict, archive keeps 2); gen 3 -> 7
    got = global_validation(CMA_VALID, CMA_SEL, CMA_BATCH)
    np.testing.assert_array_equal(got, [_, _, 2, _, _, 2, _, 2])


def test_global_validation_is_best_selection_at_population_ends() -> None:
    rng = np.random.default_rng(0)
    batch = np.repeat(np.arange(1, 18), 6)[:100]
    for _trial in range(20):
        valid = rng.integers(0, 5, size=100) / 10  # coarse losses: many ties
        selection = rng.integers(0, 5, size=100) / 10
        ends = population_ends(batch)
        gv = global_validation(valid, selection, batch)
        np.testing.assert_array_equal(gv[ends], best_selection(valid, selection, batch)[ends])
        assert np.all(gv[~ends] == NO_ANSWER)


def test_population_rules_answer_at_6k_and_100_on_a_cma_budget() -> None:
    # (the runner's mask that makes best_validation answer only there too for CMA-ES is checked
    # on real runs in tests/test_dataflow.py)
    rng = np.random.default_rng(1)
    batch = np.repeat(np.arange(1, 18), 6)[:100]  # 16 x 6 + 4
    valid, selection = rng.uniform(size=(2, 100))
    expected = [*range(5, 96, 6), 99]
    for rule in (partial_validation, backwarding, global_validation):
        answered = np.flatnonzero(rule(valid, selection, batch) != NO_ANSWER)
        np.testing.assert_array_equal(answered, expected)


def test_incumbents_only_look_at_the_past() -> None:
    rng = np.random.default_rng(2)
    batch = np.repeat(np.arange(1, 6), 3)
    valid, selection = rng.uniform(size=(2, 15))
    for rule in RULES.values():
        full = rule(valid, selection, batch)
        for t in (2, 5, 8, 11):
            prefix = rule(valid[: t + 1], selection[: t + 1], batch[: t + 1])
            np.testing.assert_array_equal(prefix, full[: t + 1])
            assert full[t] == NO_ANSWER or full[t] <= t


@pytest.mark.parametrize(
    ("valid", "selection", "batch", "message"),
    [
        ([0.1, 0.2], [0.1], [1, 2], "equal lengths"),
        ([0.1, 0.2], [0.1, 0.2], [2, 1], "non-decreasing"),
        ([0.1, 0.2], [0.1, 0.2], [1.0, 2.0], "integers"),
        ([], [], [], "non-empty"),
    ],
)
def test_malformed_traces_are_refused(valid, selection, batch, message) -> None:
    with pytest.raises(ValueError, match=message):
        best_validation(valid, selection, batch)
