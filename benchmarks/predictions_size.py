"""Size on disk of a run's predictions sidecar, for the largest Chapter 4/5 datasets.

Builds the sidecar a 5-fold run with a selection-free protocol would write (every evaluation's
fold predictions on its validation rows, plus the retrained choices' test predictions) from the
dataset's real splits, with predictions simulated as the true labels corrupted at an error rate
drawn per model from [0.05, 0.6] (errors drawn uniformly among the other labels), and writes it
with the same code as a run (``experiments.run.results.write_atomic``). Real models agree with each
other more than independent corruptions do, so real sidecars compress at least as well: the
figures are an upper estimate. ``--real`` instead runs the given optimizer for real (slow).

    python benchmarks/predictions_size.py [--datasets letter adult chess-krvk] [--budget 200]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.configuration.spec import RunSpec
from experiments.run.results import write_atomic
from experiments.run.runner import prediction_block, predictions_table
from hpo.data.catalog import load_dataset
from hpo.evaluation.protocol import ProtocolSettings, RepetitionSplits


def simulated_sidecar(dataset: str, budget: int, n_tested: int, seed: int = 0) -> pd.DataFrame:
    data = load_dataset(dataset)
    y = data.y if data.y_test is None else np.concatenate([data.y, data.y_test])
    splits = RepetitionSplits(
        y, len(data.y), data.has_predefined_test, ProtocolSettings(validation="cv"), 0, dataset, 0
    )
    rng = np.random.default_rng(seed)
    n_labels = int(y.max()) + 1
    blocks = []

    def block(model: int, kind: str, fold: int, rows: np.ndarray) -> dict[str, np.ndarray]:
        error_rate = rng.uniform(0.05, 0.6)
        wrong = rng.random(len(rows)) < error_rate
        shift = rng.integers(1, max(n_labels, 2), size=len(rows))
        labels = np.where(wrong, (y[rows] + shift) % n_labels, y[rows])
        return prediction_block(model, kind, fold, rows, labels)

    for model in range(1, budget + 1):
        for fold, part in enumerate(splits.folds(0)):
            blocks.append(block(model, "valid", fold, part.valid))
    for model in range(1, n_tested + 1):
        blocks.append(block(model, "test", 0, splits.test))
    return predictions_table(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["letter", "adult", "chess-krvk"])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--tested", type=int, default=30, help="distinct retrained choices")
    args = parser.parse_args()
    print("| dataset | rows | predictions | sidecar MB | bytes / prediction |")
    print("|---|---|---|---|---|")
    spec = RunSpec.of(dataset="x", optimizer="rs", rules={"rs": "best_validation"})
    for dataset in args.datasets:
        frame = simulated_sidecar(dataset, args.budget, args.tested)
        with tempfile.TemporaryDirectory() as folder:
            path = write_atomic(frame.iloc[:0], Path(folder) / "run.parquet", spec, frame)
            size = path.with_name("run.predictions.parquet").stat().st_size
        rows, megabytes, per = frame["row"].max() + 1, size / 2**20, size / len(frame)
        print(f"| {dataset} | {rows} | {len(frame):,} | {megabytes:.1f} | {per:.2f} |")


if __name__ == "__main__":
    main()
