"""SMAC3's facades by dotted path beside the thesis's SMAC (``conf/optimizer/smac_blackbox.yaml``:
the BlackBoxFacade's Gaussian process): reproducible, conformant, and refused in one line when the
path is not a full-evaluation facade."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("smac")

from experiments.configuration.compose import compose_run  # noqa: E402
from experiments.run.runner import run  # noqa: E402
from hpo.optimizers import make_optimizer  # noqa: E402
from hpo.optimizers.smac import SMACOptimizer  # noqa: E402
from hpo.space.search_space import space_from_config  # noqa: E402
from hpo.testing import check_optimizer  # noqa: E402
from runfiles.files import without_timing  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_blackbox_facade_runs_by_configuration_and_reproducibly() -> None:
    spec = compose_run(["optimizer=smac_blackbox", "dataset=sklearn-iris", "budget=6"])
    assert dict(spec.method.settings)["facade"] == "smac.BlackBoxFacade"
    first, again = run(spec), run(spec)
    assert without_timing(first.trace).equals(without_timing(again.trace))
    assert without_timing(first.outcomes).equals(without_timing(again.outcomes))


@pytest.mark.slow
def test_the_blackbox_facade_passes_the_conformance_checks() -> None:
    check_optimizer(SMACOptimizer, budget=6, facade="smac.BlackBoxFacade", impute="smac")


def test_the_facade_is_the_one_named() -> None:
    space = space_from_config(
        {"name": "s", "learner": "svm_rbf",
         "parameters": {"C": {"type": "real", "low": 1e-3, "high": 1e3, "log": True}}}
    )  # fmt: skip
    rng = np.random.default_rng(0)
    blackbox = make_optimizer("smac", space, 5, rng, facade="smac.BlackBoxFacade", impute="smac")
    assert type(blackbox.facade).__name__ == "BlackBoxFacade"
    default = make_optimizer("smac", space, 5, np.random.default_rng(0))
    assert type(default.facade).__name__ == "HyperparameterOptimizationFacade"


@pytest.mark.parametrize(
    ("facade", "message"),
    [
        ("smac.NoSuchFacade", "SMAC facade 'smac.NoSuchFacade' does not import"),
        ("smac.Scenario", "'smac.Scenario' is not a SMAC3 facade"),
        ("smac.HyperbandFacade", "SMAC facade 'HyperbandFacade' is multi-fidelity"),
    ],
)
def test_a_bad_facade_is_one_line(
    tmp_path: Path, isolated_env: dict, facade: str, message: str
) -> None:
    results = tmp_path / "results"
    command = [
        sys.executable, "run.py", "optimizer=smac_blackbox", "dataset=sklearn-iris", "budget=3",
        f"optimizer.settings.facade={facade}", f"results_dir={results}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert not results.exists()


@pytest.mark.parametrize("facade", ["smac.RandomFacade", "smac.AlgorithmConfigurationFacade"])
def test_every_full_evaluation_facade_the_docs_name_runs(facade: str) -> None:
    """The RandomFacade has no local search to order and no random forest to impute in: with
    SMAC's own imputation it proposes and takes results as any other facade."""
    space = space_from_config(
        {"name": "s", "learner": "svm_rbf",
         "parameters": {"C": {"type": "real", "low": 1e-3, "high": 1e3, "log": True}}}
    )  # fmt: skip
    optimizer = make_optimizer(
        "smac", space, 4, np.random.default_rng(0), facade=facade, impute="smac"
    )
    for i in range(4):
        optimizer.tell(optimizer.ask(), float(i))
    assert len(optimizer.y) == 4


def test_the_thesis_imputation_on_a_facade_without_a_forest_is_one_line(
    tmp_path: Path, isolated_env: dict
) -> None:
    results = tmp_path / "results"
    command = [
        sys.executable, "run.py", "optimizer=smac", "dataset=sklearn-iris", "budget=3",
        "+optimizer.settings.facade=smac.RandomFacade", f"results_dir={results}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=isolated_env, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: impute='default' (the thesis's) sets a random forest's imputation table, and this "
        "facade's model (RandomModel) has none: add +optimizer.settings.impute=smac (SMAC's own "
        "imputation)"
    ]
    assert not results.exists()
