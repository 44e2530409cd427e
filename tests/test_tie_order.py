"""Decisions among equal values do not depend on the CPU.

NumPy's default sort (``argsort``, and pandas' ``sort_values``, which uses it) puts equal values
in an order that depends on the SIMD kernels it dispatches: with AVX2 or AVX-512 it is another
order than its scalar sort's (losses (0.09, 0.27, 0.73, 0.23, 0, 0): individuals 5, 4 first
with AVX2, 4, 5 without). Error rates and ranks tie often, so every sort in the library that
orders rows or picks among them is stable (the earlier first among equals), and CMA-ES gives
pycma, which sorts with the default, ranks without ties.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from experiments.configuration.spaces import load_space
from hpo.optimizers.cmaes import CMAESOptimizer, ranks_in_evaluation_order

REPO = Path(__file__).resolve().parents[1]
SORTS = ("argsort", "sort_values", "argpartition")


def unstable_sorts(source: str) -> list[int]:
    """The lines of ``source`` that call a sort of :data:`SORTS` without ``kind="stable"``.

    Exempt, as no tie can be reordered there: ``sort_values`` on a list of several keys (pandas
    sorts those with a lexsort, which is stable), and a ``Categorical``'s ``categories`` (unique).
    ``sort_index`` is not checked: the indexes sorted here are groupby and pivot labels (unique).
    """
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in SORTS:
            continue
        keys = node.args[0] if node.args else None
        if isinstance(keys, ast.List | ast.Tuple) and len(keys.elts) > 1:
            continue
        receiver = node.func.value
        if isinstance(receiver, ast.Attribute) and receiver.attr == "categories":
            continue
        kinds = [k.value for k in node.keywords if k.arg == "kind"]
        stable = (
            kinds
            and isinstance(kinds[0], ast.Constant)
            and kinds[0].value in ("stable", "mergesort")
        )
        if not stable:
            lines.append(node.lineno)
    return lines


def test_every_sort_in_the_library_is_stable() -> None:
    found = {
        str(path.relative_to(REPO)): lines
        for package in ("hpo", "runfiles", "experiments", "analysis")
        for path in sorted((REPO / package).rglob("*.py"))
        if (lines := unstable_sorts(path.read_text()))
    }
    assert not found, f'pass kind="stable" (the order among equal values is the CPU\'s): {found}'


def test_the_check_finds_a_default_sort() -> None:
    planted = (
        'order = np.argsort(x)\nframe.sort_values("rank")\nnp.argsort(x, kind="stable")\n'
        'frame.sort_values(["run", "iteration"])\nframe.sort_values(["rank"])\n'
    )
    assert unstable_sorts(planted) == [1, 2, 5]


def test_ranks_break_ties_by_evaluation_order() -> None:
    losses = [0.09, 0.27, 0.73, 0.23, 0.0, 0.0]
    assert ranks_in_evaluation_order(losses) == [2.0, 4.0, 5.0, 3.0, 0.0, 1.0]
    assert ranks_in_evaluation_order([0.5, 0.5, 0.5]) == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("losses", [[0.3, 0.1, 0.2, 0.6, 0.5, 0.4], [0.2, 0.0, 0.2, 0.0, 0.9, 0.0]])
def test_pycma_is_told_the_ranks_in_evaluation_order(monkeypatch, losses: list[float]) -> None:
    optimizer = CMAESOptimizer(load_space("svm_rbf"), budget=12, rng=np.random.default_rng(0))
    told = []
    monkeypatch.setattr(optimizer.strategy, "tell", lambda xs, fs, **_: told.append(list(fs)))
    for loss in losses:
        optimizer.tell(optimizer.ask(), loss)
    assert told == [ranks_in_evaluation_order(losses)]
    assert len(set(told[0])) == len(losses)  # no tie left for pycma's default sort
