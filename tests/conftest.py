"""Shared fixtures and the data-collection marker.

Tests that read a dataset collection say so with ``@pytest.mark.needs_data("uci121")`` (or
``"openml"``, the local OpenML cache), or by asking for the ``uci_dir`` fixture. When the
collection is absent they are skipped with the reason, and the run's summary names each of them;
under CI (``CI`` set, as ``.ci/run`` runs) an absent collection is a failure instead, so that no
test is skipped silently there. ``.ci/run`` also runs the suite as a user without the data would
(``CI`` unset, ``HPO_UCI121_DIR`` an empty folder): a test that needs data and does not say so
errors there, and fails CI.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpo.data.catalog import openml_dir, uci121_dir

SKIP_PREFIX = "data not available: "
REPO = Path(__file__).resolve().parents[1]


def _uci121_present() -> bool:
    return (uci121_dir() / "iris" / "iris_R.dat").is_file()


def _openml_present() -> bool:
    return any(openml_dir().glob("openml-*.npz"))


COLLECTIONS: dict[str, tuple[Callable[[], bool], Callable[[], str]]] = {
    "uci121": (
        _uci121_present,
        lambda: f"UCI-121 collection not found at {uci121_dir()}: set HPO_UCI121_DIR (make data)",
    ),
    "openml": (
        _openml_present,
        lambda: (
            f"no OpenML dataset cached in {openml_dir()}: set HPO_OPENML_DIR or run "
            "`python -m hpo.data fetch-openml <id>` online"
        ),
    ),
}


def require_collection(name: str) -> None:
    """Skip (fail under CI) the current test when collection ``name`` is absent."""
    if name not in COLLECTIONS:
        raise ValueError(f"unknown data collection {name!r}; valid: {', '.join(COLLECTIONS)}")
    present, reason = COLLECTIONS[name]
    if present():
        return
    if os.environ.get("CI"):
        pytest.fail(reason())
    pytest.skip(SKIP_PREFIX + reason())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"needs_data(*collections): the test reads these collections ({', '.join(COLLECTIONS)})",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_data"):
        for name in mark.args:
            require_collection(name)


_skipped_for_data: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
    if report.skipped and str(reason).startswith("Skipped: " + SKIP_PREFIX):
        _skipped_for_data.append(report.nodeid)


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 - pytest's reporter
    if _skipped_for_data:
        write = terminalreporter.write_line
        terminalreporter.section(f"skipped: {len(_skipped_for_data)} tests need data")
        for nodeid in _skipped_for_data:
            write(nodeid)
        write("to run them: make data (or set HPO_UCI121_DIR to a copy), then make test")


@pytest.fixture(scope="session")
def uci_dir() -> Path:
    require_collection("uci121")
    return uci121_dir()


@pytest.fixture()
def isolated_env(tmp_path: Path) -> dict[str, str]:
    """Environment for subprocess runs: this interpreter's, plus the data location."""
    env = dict(os.environ)
    env["HPO_UCI121_DIR"] = str(uci121_dir())
    return env


@pytest.fixture()
def signal_after_first_evaluation(isolated_env: dict[str, str]) -> Callable[..., Any]:
    """Run ``command`` (a ``run.py`` command line) from the repository root with a progress
    line every 0.05 s, send it ``signum`` once a line shows a finished evaluation, and return
    (exit code, stdout, stderr)."""

    def interrupt(command: list[str], signum: int) -> tuple[int, str, str]:
        env = {**isolated_env, "HPO_PROGRESS_SECONDS": "0.05"}
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            seen = []
            while not any("best validation" in line for line in seen):  # in the evaluation loop
                line = process.stderr.readline()
                assert line, f"the run ended before any evaluation: {seen}"
                seen.append(line)
            process.send_signal(signum)
            out, err = process.communicate(timeout=120)
        finally:
            process.kill()
        return process.returncode, out, err

    return interrupt


@pytest.fixture()
def plan_spec() -> Callable[..., Any]:
    """A factory of the small multi-fidelity runs the seed-002 tests share (Hyperband, BOHB,
    their batched networks): ``optimizer`` reported by its best validation, on ``space`` (a
    space's name, ``space_settings`` in place of its fixed settings; or a declaration), R = 4,
    η = 2, one epoch a unit and a budget of 1,000 evaluations (the plan ends first), each
    overridden by ``settings`` (the optimizer's) and ``spec`` (RunSpec's fields)."""

    def make(
        optimizer: str,
        space: str | dict[str, Any],
        dataset: str = "sklearn-digits",
        settings: dict[str, Any] | None = None,
        space_settings: dict[str, Any] | None = None,
        **spec: Any,
    ) -> Any:
        from experiments.configuration.spaces import space_config
        from experiments.configuration.spec import RunSpec

        if isinstance(space, str):
            space = space_config(space)
            if space_settings is not None:
                space = {**space, "settings": dict(space_settings)}
        return RunSpec.of(
            dataset=dataset,
            optimizer=optimizer,
            rules={optimizer: "best_validation"},
            space=space,
            budget=spec.pop("budget", 1000),
            optimizer_settings={"max_resource": 4, "eta": 2, "unit": 1, **(settings or {})},
            **spec,
        )

    return make


# Test ids stay ASCII: a claim's text carries "−" or "≤", and a tool that passes test ids back to
# pytest (mutmut's test selection) cannot name an id that pytest has escaped.
ASCII_ID = str.maketrans({"−": "-", "≤": "<=", "≥": ">=", "≻": ">", "≺": "<", "×": "x", "–": "-"})


def ascii_id(text: str) -> str:
    """``text`` as an ASCII test id (other characters as ``?``)."""
    return text.translate(ASCII_ID).encode("ascii", "replace").decode()


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    return ascii_id(val) if isinstance(val, str) and not val.isascii() else None
