"""Every optimizer family of the registry follows the public protocol (``docs/optimizers.md``),
checked by :func:`hpo.testing.check_optimizer`; and the checker itself catches the classic
breaks (a clock-seeded optimizer, a proposal outside the cube, a tell that refuses a failed
evaluation, proposals that change when asked ahead), each with a message naming the check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from experiments.configuration.spaces import load_cash_library
from hpo.cash.space import build_cash_space
from hpo.optimizers import CLASSES, Optimizer, Proposal
from hpo.optimizers.random_search import RandomSearch
from hpo.testing import ConformanceError, check_optimizer, plain

# Small settings for the families whose defaults make a check slow; what they check is the same.
SETTINGS = {
    "grid": {"points_per_dim": 2},  # the default grid for 8 evaluations in 4-D is one point
    "gp": {"n_samples": 2, "burnin": 2, "grid_size": 200},
}
BUDGETS = {"smac": 5, "gp": 5, "esmbo": 5, "surrogate": 5}
NEEDS = {"smac": "smac", "bohb": "smac", "tpe": "hyperopt", "cash_smac": "smac"}
NEEDS |= {"cash_smac_batch": "smac", "cash_tpe": "hyperopt", "optuna": "optuna", "carps": "carps"}


@pytest.fixture(scope="module")
def cash_space():
    return build_cash_space(load_cash_library(), "classification", nonnegative_inputs=True)


@pytest.mark.parametrize("family", sorted(CLASSES))
def test_every_family_of_the_registry_passes_the_conformance_checks(family, request) -> None:
    if family in NEEDS:
        pytest.importorskip(NEEDS[family])
    cls = CLASSES[family]
    extra = {}
    if cls.races_instances:
        extra["cash_space"] = request.getfixturevalue("cash_space")
    check_optimizer(cls, budget=BUDGETS.get(family, 8), **extra, **SETTINGS.get(family, {}))


class ClockSeeded(RandomSearch):
    """Broken: draws from a fresh unseeded generator, not from the rng it is given."""

    def ask(self) -> Proposal:
        return Proposal(u=np.random.default_rng().uniform(size=self.space.dim), batch=1)


class OutOfCube(RandomSearch):
    """Broken: proposes points up to 2 on every axis."""

    def ask(self) -> Proposal:
        return Proposal(u=2 * self.rng.uniform(size=self.space.dim), batch=len(self.y) + 1)


class RefusesFailures(RandomSearch):
    """Broken: a failed evaluation's loss (1.0) makes tell raise."""

    def tell(self, proposal: Proposal, loss: float) -> None:
        if loss >= 1.0:
            raise ValueError("a loss of 1.0 is not a loss")
        super().tell(proposal, loss)


class SeedBlind(RandomSearch):
    """Broken: seeds itself with a constant, so every run proposes the same points."""

    def __init__(self, space, budget, rng) -> None:
        super().__init__(space, budget, np.random.default_rng(0))


class CountsTells(RandomSearch):
    """Broken: says it can be asked ahead (``asks_ahead``), but numbers its batches by the
    losses told, so proposals asked ahead share one batch (one split when reshuffling)."""

    def ask(self) -> Proposal:
        return Proposal(u=self.rng.uniform(size=self.space.dim), batch=len(self.y) + 1)


class InactiveGiven(Optimizer):
    """Broken: proposes configurations that keep values for inactive conditional parameters."""

    def ask(self) -> Proposal:
        u = self.rng.uniform(size=self.space.dim)
        config = {
            p.name: p.from_unit(float(v)) for p, v in zip(self.space.parameters, u, strict=True)
        }
        return Proposal(None, len(self.y) + 1, config=config)

    def tell(self, proposal: Proposal, loss: float) -> None:
        self.X.append(self.space.encode(proposal.config or {}))
        self.y.append(loss)


class KeepsNoPoint(RandomSearch):
    """Broken: keeps the losses it is told but not the points (the selection rules read both)."""

    def tell(self, proposal: Proposal, loss: float) -> None:
        self.X.append(None)
        self.y.append(loss)


class KeepsARaggedPoint(RandomSearch):
    """Broken: keeps each point as a nested list that is no point (a ragged sequence)."""

    def tell(self, proposal: Proposal, loss: float) -> None:
        self.X.append([list(proposal.u[:1]), *proposal.u[1:]])
        self.y.append(loss)


@pytest.mark.parametrize(
    ("cls", "check", "detail"),
    [
        (ClockSeeded, "same seed, same proposals", "two runs with seed 11 differ at proposal 1"),
        (OutOfCube, "proposals lie in the space", "outside the unit cube"),
        (RefusesFailures, "failed evaluations accepted", "ValueError: a loss of 1.0 is not"),
        (SeedBlind, "another seed, other proposals", "seeds 11 and 12 give the same"),
        (KeepsNoPoint, "tell keeps the history", "the last point kept is None"),
        (KeepsARaggedPoint, "tell keeps the history", "not a finite point of shape"),
        (InactiveGiven, "proposals lie in the space", "inactive parameter"),
        (CountsTells, "asked ahead, same proposals", "changes proposal 2"),
    ],
)
def test_a_broken_optimizer_fails_with_the_check_named(cls, check, detail) -> None:
    with pytest.raises(ConformanceError, match=f"check '{check}' failed for {cls.__name__}") as e:
        check_optimizer(cls)
    assert detail in str(e.value) and "\n" not in str(e.value)
    assert "np." not in str(e.value)  # numbers as a reader writes them, not NumPy's reprs


def test_a_passing_optimizer_says_what_passed() -> None:
    report = check_optimizer(RandomSearch)
    assert report.spaces == ("toy", "toy_conditional")
    assert {"same seed, same proposals", "proposals lie in the space", "tell keeps the history",
            "failed evaluations accepted"} <= set(report.checks)  # fmt: skip
    assert str(report).startswith(f"RandomSearch passed {len(report.checks)} checks on spaces ")


def test_numbers_in_messages_are_plain() -> None:
    assert plain(np.float64(0.25)) == "0.25" and plain(np.int64(3)) == "3"
    assert plain([np.float64(1.5), np.array([0.5, 2.0])]) == "[1.5, [0.5, 2.0]]"
    assert plain((np.float64(1.0),)) == "(1.0,)"


def test_a_class_that_is_not_an_optimizer_is_named() -> None:
    with pytest.raises(ConformanceError, match="check 'protocol' failed: .*not a subclass"):
        check_optimizer(dict)  # type: ignore[arg-type]


def _family_files() -> list:
    """conf/optimizer files named after their family (``bohb.yaml`` for ``family: bohb``)."""
    folder = Path(__file__).resolve().parents[1] / "conf" / "optimizer"
    configs = {path.stem: yaml.safe_load(path.read_text()) for path in folder.glob("*.yaml")}
    return [
        pytest.param(stem, config, id=stem)
        for stem, config in sorted(configs.items())
        if config.get("family") == stem
    ]


@pytest.mark.parametrize(("family", "config"), _family_files())
def test_a_family_s_python_defaults_are_its_configuration_file_s_settings(family, config) -> None:
    """``make_optimizer("bohb", …)`` from Python and ``optimizer=bohb`` from the command line
    run the same optimizer: the class's keyword defaults equal the settings its own file sets
    (interpolated ones, which depend on the space, left out)."""
    import inspect

    if family in NEEDS:
        pytest.importorskip(NEEDS[family])
    defaults = inspect.signature(CLASSES[family].__init__).parameters
    for name, value in (config.get("settings") or {}).items():
        if isinstance(value, str) and "${" in value:
            continue
        assert defaults[name].default == value, f"{family}: {name}"
