"""Where the results come from: code revisions, package versions, compute time, dates.

Reads the provenance columns every results row carries (one value per run): ``git_revision``
(a commit, ``-dirty`` appended when the work tree had uncommitted changes), ``versions`` (JSON
object package → version), ``run_seconds`` and ``finished_at`` (ISO 8601). Owns the
provenance section of every report and the warning shown at the top when results from several
code revisions are mixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from analysis.render import TableWriter

DIRTY_SUFFIX = "-dirty"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Provenance:
    """Per-run provenance summarised: runs per revision, versions per package, compute, dates."""

    revisions: pd.DataFrame  # index git_revision; columns runs, dirty
    versions: pd.DataFrame  # index package; column versions ("a, b" when several)
    total_run_seconds: float
    runs: int
    first_finished: str
    last_finished: str

    @property
    def mixed_revisions(self) -> bool:
        """Results come from more than one recorded code revision."""
        return len(self.revisions.index.drop(UNKNOWN, errors="ignore")) > 1

    @property
    def any_dirty(self) -> bool:
        return bool(self.revisions["dirty"].any())


def _per_run(outcomes: pd.DataFrame) -> pd.DataFrame:
    columns = ["git_revision", "versions", "run_seconds", "finished_at"]
    runs = outcomes.drop_duplicates("run_id").set_index("run_id")
    return runs.reindex(columns=columns)


def _versions(json_strings: pd.Series) -> pd.DataFrame:
    found: dict[str, set[str]] = {}
    for text in json_strings.dropna().unique():
        for package, version in json.loads(text).items():
            found.setdefault(package, set()).add(str(version))
    rows = {package: ", ".join(sorted(v)) for package, v in sorted(found.items())}
    return pd.DataFrame({"versions": pd.Series(rows, dtype=object)}).rename_axis("package")


def summarise(outcomes: pd.DataFrame) -> Provenance:
    """:class:`Provenance` of the outcome rows (runs without a column count as ``unknown``)."""
    runs = _per_run(outcomes)
    revision = runs["git_revision"].astype(object).fillna(UNKNOWN)
    revisions = revision.value_counts().rename("runs").to_frame()
    revisions["dirty"] = revisions.index.str.endswith(DIRTY_SUFFIX)
    finished = runs["finished_at"].dropna().astype(str)
    return Provenance(
        revisions=revisions.rename_axis("git_revision"),
        versions=_versions(runs["versions"]),
        total_run_seconds=float(pd.to_numeric(runs["run_seconds"]).sum()),
        runs=len(runs),
        first_finished=finished.min() if len(finished) else UNKNOWN,
        last_finished=finished.max() if len(finished) else UNKNOWN,
    )


def warning(provenance: Provenance) -> str | None:
    """A visible Markdown warning when revisions are mixed or the code was dirty, else None."""
    lines = []
    if provenance.mixed_revisions:
        names = ", ".join(f"`{r}`" for r in provenance.revisions.index)
        lines.append(
            f"> **Warning: these results mix {len(provenance.revisions)} code revisions** "
            f"({names}); methods may differ by code, not only by design. See Provenance."
        )
    if provenance.any_dirty:
        lines.append(
            "> **Warning: some runs were made from a work tree with uncommitted changes** "
            f"(revision ending in `{DIRTY_SUFFIX}`): their code cannot be recovered exactly."
        )
    return "\n>\n".join(lines) if lines else None


def _hours(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 3600:.2f} h)"


def section(provenance: Provenance, write: TableWriter, unreadable: dict[str, str]) -> str:
    """The provenance section; ``write`` is the report's ``render.TableWriter``."""
    skipped = (
        [f"* {len(unreadable)} unreadable results files left out:"]
        + [f"  * `{path}` ({error})" for path, error in unreadable.items()]
        if unreadable
        else []
    )
    return "\n".join(
        [
            "## Provenance\n",
            f"{provenance.runs} runs, finished between {provenance.first_finished} and "
            f"{provenance.last_finished}; total compute {_hours(provenance.total_run_seconds)} "
            "(sum of each run's `run_seconds`). Dirty work tree: "
            f"{'yes' if provenance.any_dirty else 'no'}.",
            *skipped,
            "",
            write(provenance.revisions, "provenance_revisions", "Runs per code revision"),
            write(provenance.versions, "provenance_versions", "Package versions of the runs"),
        ]
    )
