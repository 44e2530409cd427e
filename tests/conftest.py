"""Shared fixtures: where the UCI-121 copy is (``HPO_UCI121_DIR``; CI points it at
``../shared/uci121``). Tests that need it are skipped, with the reason printed, when it is
absent; under CI (``CI`` set, as ``.ci/run`` runs) an absent copy is a failure instead, so that no
test is skipped silently there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hpo.datasets import uci121_dir


@pytest.fixture(scope="session")
def uci_dir() -> Path:
    path = uci121_dir()
    if not (path / "iris" / "iris_R.dat").is_file():
        message = f"UCI-121 collection not found at {path}: set HPO_UCI121_DIR (make data)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture()
def isolated_env(tmp_path: Path) -> dict[str, str]:
    """Environment for subprocess runs: this interpreter's, plus the data location."""
    env = dict(os.environ)
    env["HPO_UCI121_DIR"] = str(uci121_dir())
    return env
