"""The manuals hold no dangling reference: every relative link in ``README.md`` and ``docs/*.md``
resolves to a file of the repository (and its anchor to a heading of that file), every repository
path cited in backticks exists, and the text reads as a manual, not a work log (no issue numbers,
no "this stop", no "in progress", no paths outside the repository).

The checks read the working tree as it is, so a module moved or a doc renamed without updating
the manuals fails here with the file and the reference named.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MANUALS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", flags=re.M)
# Top-level files a manual may cite by name alone.
TOP_FILES = ("README.md", "Makefile", "run.py", "pyproject.toml")
# Files a report writes (not in the repository) that a manual names by their bare name.
GENERATED = ("report.md",)
# A work log's marks, which a manual does not carry.
WORK_LOG = re.compile(
    r"issue [0-9]|this stop|in progress|\.\./shared|DESIGN\.md|\bseed 00[0-9]\b"
    r"|\b(?:main|commit) at [0-9a-f]{7}",
    flags=re.IGNORECASE,
)


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _ignored_prefixes(root: Path = REPO) -> tuple[str, ...]:
    """Folders ``.gitignore`` names (generated outputs such as ``results/``): a fresh clone has
    none of them, so a manual may name them without their existing."""
    lines = (root / ".gitignore").read_text().splitlines()
    return tuple(line.lstrip("/") for line in lines if line.endswith("/") and "*" not in line)


def _tracked_roots(root: Path = REPO) -> set[str]:
    ignored = {prefix.rstrip("/") for prefix in _ignored_prefixes(root)}
    return {p.name for p in root.iterdir() if p.is_dir() and p.name not in ignored | {".git"}}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to
    hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\w)|(?<=\w)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        result.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """The relative links of one manual that lead nowhere, as ``target (why)``."""
    problems = []
    for target in LINK.findall(FENCE.sub("", path.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if root.resolve() not in linked.parents:
            problems.append(f"{target} (outside the repository)")
        elif not linked.exists():
            problems.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{target} (no heading with anchor #{anchor})")
    return problems


def cited_paths(path: Path, root: Path = REPO) -> list[str]:
    """Repository paths a manual cites in backticks: one token whose first folder is a tracked
    top-level folder (``hpo/rules/ensemble.py``, ``analysis/chapter3/``), a top-level file, or
    a bare ``name.md`` (a manual beside this one, given relative to the repository root).
    Patterns (``<name>``, ``*``, ``{a,b}``, ``…``) are not paths and are left out."""
    roots = _tracked_roots(root)
    found = []
    for span in CODE_SPAN.findall(path.read_text()):
        token = span.strip()
        if " " in token or re.search(r"[<>*{}…]|\.\.\.|=", token):
            continue
        token = re.sub(r":\d+$", "", token)  # path:line
        if token in TOP_FILES or ("/" in token and token.split("/", 1)[0] in roots):
            found.append(token)
        elif re.fullmatch(r"[\w.-]+\.md", token) and token not in GENERATED:
            found.append((path.parent / token).relative_to(root).as_posix())
    return found


def _exists(token: str, root: Path) -> bool:
    """A path exists; a pytest node id (``tests/test_x.py::test_y``) names a file that defines
    that test."""
    file_part, _, test = token.partition("::")
    file = root / file_part
    if not file.exists():
        return False
    return not test or re.search(rf"def {re.escape(test.split('[')[0])}\b", file.read_text())


def missing_paths(path: Path, root: Path = REPO) -> list[str]:
    ignored = _ignored_prefixes(root)
    return sorted(
        {
            token
            for token in cited_paths(path, root)
            if not (token.rstrip("/") + "/").startswith(ignored) and not _exists(token, root)
        }
    )


def work_log_lines(path: Path) -> list[str]:
    return [
        f"{path.name}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if WORK_LOG.search(line)
    ]


@pytest.mark.parametrize("manual", MANUALS, ids=_relative)
def test_every_relative_link_resolves(manual: Path) -> None:
    assert broken_links(manual) == []


@pytest.mark.parametrize("manual", MANUALS, ids=_relative)
def test_every_cited_repository_path_exists(manual: Path) -> None:
    assert missing_paths(manual) == []


@pytest.mark.parametrize("manual", MANUALS, ids=_relative)
def test_the_manual_reads_as_a_manual_not_a_work_log(manual: Path) -> None:
    assert work_log_lines(manual) == []


def test_the_checks_see_what_they_check(tmp_path: Path) -> None:
    """The checks find what they are meant to find (a link, an anchor, a path, a log phrase) in a
    small repository of their own."""
    root = tmp_path / "repo"
    for folder in ("docs", "hpo", "results"):
        (root / folder).mkdir(parents=True)
    (root / ".gitignore").write_text("results/\n*.pyc\n")
    (root / "README.md").write_text("# Readme\n")
    (root / "docs" / "testing.md").write_text("# Testing\n\n    def test_testing():\n")
    doc = root / "docs" / "probe.md"
    doc.write_text(
        "# A title\n\n## Part `one`: two\n\n[ok](../README.md) [here](#part-one-two) "
        "[there](testing.md#testing) [bad](missing.md) [anchor](#nowhere) "
        "[out](../../elsewhere.md) [web](https://x.org)\n\n"
        "`hpo/` `docs/testing.md` `hpo/no_such_module.py` `conf/optimizer/<name>.yaml` "
        "`results/chapter3/` `results` `python -m hpo.x` `docs/testing.md::test_a` "
        "`docs/testing.md::test_testing` `testing.md` `gone.md` `report.md`\n\n"
        "See issue 12; done in this stop.\n"
    )
    assert broken_links(doc, root) == [
        "missing.md (no such file)",
        "#nowhere (no heading with anchor #nowhere)",
        "../../elsewhere.md (outside the repository)",
    ]
    assert cited_paths(doc, root) == [
        "hpo/",
        "docs/testing.md",
        "hpo/no_such_module.py",
        "docs/testing.md::test_a",
        "docs/testing.md::test_testing",
        "docs/testing.md",
        "docs/gone.md",
    ]
    assert missing_paths(doc, root) == [
        "docs/gone.md",
        "docs/testing.md::test_a",
        "hpo/no_such_module.py",
    ]
    assert work_log_lines(doc) == ["probe.md:9: See issue 12; done in this stop."]


def test_every_manual_is_listed_in_the_readme() -> None:
    """A reader finds every page of ``docs/`` from the README's link to it."""
    readme = REPO / "README.md"
    linked = {(readme.parent / target).resolve() for target in LINK.findall(readme.read_text())}
    assert [_relative(doc) for doc in MANUALS[1:] if doc.resolve() not in linked] == []
