"""Seed 004's runs through the one pipeline (``run.py``: Hydra, ``RunSpec``, the runner) propose
bit for bit what they proposed before the methods were configs: for every method of
``conf/optimizer/aw_*.yaml``, a 20-evaluation run on iris gives the trace (configuration,
instance, loss), trajectory, CV and test error of ``tests/data/cash_reference.json``, recorded
with the seed's first command line (``experiments.autoweka run --budget 20 --budget-kind
evaluations --learners knn,j48,bagging,vote --max-ensemble 2``). A budget in evaluations makes a
run bit-identical for the same seed on one machine; one in seconds depends on the machine
(docs/autoweka.md).

The reference holds on any CPU (``tests/reference.py``): every decision exactly (each proposed
configuration's choices and integers, each instance, the incumbent, the number of evaluations)
and every float to a relative :data:`RELATIVE_TOLERANCE` of 1e-9 (a proposal's continuous values,
the losses, the CV and test errors). Another CPU's SIMD paths move a continuous proposal's last
digit: with NumPy's AVX-512 kernels, SMAC's 55th proposal of ``aw_smac_long`` reads
``ens_base_1.j48.M`` 18.5830164154667 where the reference recorded 18.5830164154668 (5e-15
relative); a real change of an optimizer moves a proposal by far more than 1e-9, and its
decisions with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference import differences

from analysis.autoweka.report import in_table_units
from experiments.configuration.compose import compose_run
from experiments.configuration.search_path import group_choices
from experiments.run.runner import run
from hpo.cash import paper_method_name

REFERENCE = json.loads((Path(__file__).parent / "data" / "cash_reference.json").read_text())
METHODS = [name for name in group_choices("optimizer") if name.startswith("aw_")]
RELATIVE_TOLERANCE = 1e-9
pytestmark = pytest.mark.reference
TINY = [
    "dataset=sklearn-iris",
    "budget=20",
    "time_budget=null",
    "space.learners=[knn,j48,bagging,vote]",
    "space.max_ensemble=2",
]


def test_every_paper_method_has_a_config():
    assert sorted(paper_method_name(m) for m in METHODS) == sorted(REFERENCE)


@pytest.mark.parametrize("method", METHODS)
def test_each_method_runs_by_name_and_proposes_what_it_proposed(method):
    spec = compose_run([f"optimizer={method}", *TINY])
    result = run(spec)
    reference = REFERENCE[paper_method_name(method)]
    trace = result.trace
    got = [
        [c, int(i), float(loss)]
        for c, i, loss in zip(trace["config"], trace["instance"], trace["valid_loss"], strict=True)
    ]
    outcomes = result.outcomes
    final = outcomes[outcomes["rule"] == "final"].iloc[0]
    trajectory = outcomes[outcomes["rule"] == "trajectory"]
    fresh = {
        "trace": got,
        "cv_error": in_table_units(final["incumbent_valid_loss"], "classification"),
        "test_error": in_table_units(final["test_error"], "classification"),
        "incumbent": final["config"],
        "trajectory": [
            [c, float(e), float(d)]
            for c, e, d in zip(
                trajectory["config"],
                trajectory["incumbent_valid_loss"],
                trajectory["incumbent_selection_loss"],
                strict=True,
            )
        ],
    }
    recorded = {key: reference[key] for key in fresh}
    found = differences(fresh, recorded, RELATIVE_TOLERANCE, where=method)
    assert not found, f"{len(found)} values differ from the reference; " + "; ".join(found)
