"""Chapter 3 must not drift: six methods, three datasets, both protocols, bit for bit.

The reference values in ``tests/data/chapter3_regression.json`` were recorded from the code as it
was before the pipeline redesign (issue 13) by running this module as a script::

    python -m tests.test_chapter3_regression --record

Every trace loss, every incumbent's configuration, validation loss and test error must equal the
recorded ones exactly (floats are compared by their repr, so a last-bit change fails). A change
that is *meant* to change results re-records the file in a commit of its own that says why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.compose import compose_run
from experiments.runner import execute_run

REFERENCE = Path(__file__).parent / "data" / "chapter3_regression.json"
METHODS = ("grid", "rs", "gp", "gp_r", "cma_pv_r", "gp_pm")
DATASETS = ("sklearn-iris", "sklearn-wine", "sklearn-breast-cancer")
PROTOCOLS = ("holdout", "cv5")
BUDGET = 14  # CMA-ES: two generations of 6 and a truncated one of 2


def _jsonable(value: object) -> object:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else repr(float(value))
    if isinstance(value, np.integer | int) and not isinstance(value, bool):
        return int(value)
    return str(value) if not isinstance(value, bool | np.bool_) else bool(value)


def _record(method: str, dataset: str, protocol: str) -> dict[str, list]:
    spec = compose_run(
        [f"optimizer={method}", f"dataset={dataset}", f"protocol={protocol}", f"budget={BUDGET}"]
    )
    trace, outcomes = execute_run(spec)
    params = sorted(c for c in outcomes.columns if c.startswith("param_"))
    trace_columns = ["iteration", "batch", "valid_loss", "selection_loss", *params]
    outcome_columns = [
        "method",
        "iteration",
        "incumbent_iteration",
        "incumbent_valid_loss",
        "incumbent_selection_loss",
        "test_error",
        *params,
    ]
    return {
        "trace": [[_jsonable(v) for v in row] for row in trace[trace_columns].itertuples(False)],
        "outcomes": [
            [_jsonable(v) for v in row] for row in outcomes[outcome_columns].itertuples(False)
        ],
    }


CASES = [(m, d, p) for m in METHODS for d in DATASETS for p in PROTOCOLS]


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, list]]:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize(("method", "dataset", "protocol"), CASES)
def test_chapter3_results_are_bit_identical(
    method: str, dataset: str, protocol: str, reference: dict
) -> None:
    expected = reference[f"{method}:{dataset}:{protocol}"]
    assert _record(method, dataset, protocol) == expected


if __name__ == "__main__" and "--record" in sys.argv:
    recorded = {f"{m}:{d}:{p}": _record(m, d, p) for m, d, p in CASES}
    REFERENCE.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n")
    print(f"recorded {len(recorded)} runs into {REFERENCE}")
