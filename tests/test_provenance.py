"""Tests of analysis.provenance: revisions, versions, compute, dates, the mixed-revision warning."""

from __future__ import annotations

import json

import pandas as pd

from analysis import provenance


def outcomes(revisions: list[str]) -> pd.DataFrame:
    rows = []
    for i, revision in enumerate(revisions):
        versions = json.dumps({"numpy": f"2.{i % 2}", "scipy": "1.17"})
        for iteration in (1, 2):  # two rows per run: provenance counted once per run
            rows.append(
                {"run_id": f"r{i}", "iteration": iteration, "git_revision": revision,
                 "versions": versions, "run_seconds": 10.0 * (i + 1),
                 "finished_at": f"2026-11-2{i}T10:00:00+00:00"}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_one_clean_revision_gives_no_warning() -> None:
    summary = provenance.summarise(outcomes(["abc", "abc"]))
    assert summary.runs == 2 and summary.total_run_seconds == 30.0
    assert summary.first_finished.startswith("2026-11-20")
    assert summary.last_finished.startswith("2026-11-21")
    assert summary.versions.loc["numpy", "versions"] == "2.0, 2.1"
    assert not summary.mixed_revisions and not summary.any_dirty
    assert provenance.warning(summary) is None


def test_mixed_and_dirty_revisions_are_warned_about() -> None:
    summary = provenance.summarise(outcomes(["abc", "def-dirty", "abc"]))
    assert summary.revisions.loc["abc", "runs"] == 2
    assert summary.revisions.loc["def-dirty", "dirty"]
    text = provenance.warning(summary)
    assert "mix 2 code revisions" in text and "uncommitted changes" in text


def test_missing_columns_count_as_unknown() -> None:
    summary = provenance.summarise(pd.DataFrame({"run_id": ["a", "b"], "iteration": [1, 1]}))
    assert list(summary.revisions.index) == [provenance.UNKNOWN]
    assert summary.total_run_seconds == 0.0 and not summary.mixed_revisions
