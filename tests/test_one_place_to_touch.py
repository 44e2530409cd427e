"""The "one file to touch" table of docs/architecture.md holds: an optimizer, a selection rule,
a learner, a space, a dataset source and an experiment, each written in a package of its own
(here a scratch one beside the repository), run by name with nothing of the repository edited —
the optimizer and the rule by their classes' dotted paths in a method file, the learner by its
dotted path in a space file, the source as an entry point of the package's distribution
(``hpo.data_sources``), the experiment from the package's conf/ on the search path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from experiments.sweep import plan, run_sweep

FILES = {
    "my_ext/__init__.py": "",
    "my_ext/optimizer.py": '''
        from hpo.optimizers.random_search import RandomSearch

        class EveryOther(RandomSearch):
            """Random search that proposes each point twice (a new optimizer module)."""

            def ask(self):
                if len(self.y) % 2 == 1:
                    return type(self._last)(u=self._last.u, batch=len(self.y) + 1)
                self._last = super().ask()
                return self._last
    ''',
    "my_ext/rules.py": '''
        from hpo.records import Choice
        from hpo.rules.final_selection import SelectionRule

        class LastEvaluated(SelectionRule):
            """The configuration evaluated last, at every iteration (a new rule module)."""

            name = "last_evaluated"

            def choices(self, trace):
                return [Choice((trace.member(i),)) for i in range(len(trace.valid_loss))]
    ''',
    "my_ext/data.py": '''
        import numpy as np

        from hpo.data.sources import Source
        from hpo.data.types import Dataset, DatasetError

        def _check(name):
            if name.partition(":")[2] not in ("blobs",):
                raise DatasetError(f"unknown mine dataset {name!r}; valid: mine:blobs")

        def _load(name, data_dir=None):
            """Two Gaussian blobs, 60 rows (a new data source module)."""
            _check(name)
            rng = np.random.default_rng(0)
            y = np.repeat([0, 1], 30)
            return Dataset(name, rng.normal(size=(60, 2)) + 2.0 * y[:, None], y.astype(np.int64))

        SOURCE = Source(_load, lambda name: "classification", _check)
    ''',
    "my_ext-0.1.dist-info/METADATA": """
        Metadata-Version: 2.1
        Name: my-ext
        Version: 0.1
    """,
    "my_ext-0.1.dist-info/entry_points.txt": """
        [hpo.data_sources]
        mine = my_ext.data:SOURCE
    """,
    "my_ext/conf/optimizer/every_other.yaml": """
        name: every_other
        _target_: my_ext.optimizer.EveryOther
        _partial_: true
        reshuffle: false
        selection_split: false
        rules:
          every_other: best_validation
          every_other-last: my_ext.rules.LastEvaluated
    """,
    "my_ext/conf/space/my_trees.yaml": """
        name: my_trees
        learner: sklearn.tree.DecisionTreeClassifier
        parameters:
          max_depth: {type: integer, low: 1, high: 8}
    """,
    "my_ext/conf/experiment/my_exp.yaml": """
        name: my_exp
        profiles:
          smoke:
            parts:
              main: {datasets: [sklearn-iris, "mine:blobs"], methods: [every_other, rs],
                     space: my_trees, protocols: [holdout], repetitions: 1, budget: 4, seed: 0}
    """,
}


@pytest.fixture
def scratch_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("HPO_SEARCH_PATH", f"file://{tmp_path / 'my_ext' / 'conf'}")
    return tmp_path


def test_an_optimizer_a_rule_a_learner_a_space_a_source_and_an_experiment_run_by_name(
    scratch_package: Path,
) -> None:
    runs = plan("my_exp", "smoke", scratch_package / "results")
    assert len(runs) == 4
    counts = run_sweep(runs, n_jobs=1)
    assert counts["done"] == 4 and counts["failed"] == 0
    ours = [r for r in runs if r.spec.method.optimizer == "my_ext.optimizer.EveryOther"]
    table = pd.read_parquet(ours[0].path)
    trace = table[table["row_type"] == "trace"].sort_values("iteration")
    assert set(trace["learner"]) == {"sklearn.tree.DecisionTreeClassifier"}
    depths = trace["param_max_depth"].tolist()
    assert depths[0] == depths[1] and depths[2] == depths[3]  # each point twice: its ask
    outcomes = table[table["row_type"] == "outcome"]
    last = outcomes[outcomes["method"] == "every_other-last"].sort_values("iteration")
    assert last["incumbent_iteration"].tolist() == [1, 2, 3, 4]  # the rule's choices
    blobs = [r for r in runs if r.spec.task.dataset == "mine:blobs"]
    assert len(blobs) == 2 and all(r.path.exists() for r in blobs)  # the source's dataset ran
    assert pd.read_parquet(blobs[0].path)["dataset"].iloc[0] == "mine:blobs"
    identity = ours[0].spec.outside_code()
    assert {"my_ext.optimizer.EveryOther", "my_ext.rules.LastEvaluated"} <= set(identity)
