"""The seed-002 report's inputs, computed once per report: each run's final errors, the traces,
best-so-far curves and Hyperband's configurations, by part (the report's sections and the claims
read this object; :mod:`analysis.surrogates.data` holds the computations)."""

from __future__ import annotations

import pandas as pd

from analysis import load
from analysis.plugins import ReportContext
from analysis.surrogates import data


class Results:
    """Everything the sections and claims read, computed once from the outcomes and traces."""

    def __init__(self, context: ReportContext) -> None:
        self.errors = data.final_errors(context.outcomes)
        self.traces = load.load_traces(context.source)
        has_traces = not self.traces.empty
        self.curves = data.best_so_far(self.traces) if has_traces else pd.DataFrame()
        self.configs = data.hyperband_configurations(self.traces) if has_traces else pd.DataFrame()
        self.parts = [p for p in data.PARTS if p in set(self.errors["part"])]  # the seed's
        self.outcomes = context.outcomes

    def part_errors(self, part: str) -> pd.DataFrame:
        return self.errors[self.errors["part"] == part]

    def part_traces(self, part: str) -> pd.DataFrame:
        return self.traces[self.traces["part"] == part] if not self.traces.empty else self.traces

    def part_curves(self, part: str) -> pd.DataFrame:
        return self.curves[self.curves["part"] == part] if not self.curves.empty else self.curves

    def brackets(self, part: str) -> pd.DataFrame:
        if self.configs.empty:
            return pd.DataFrame()
        return data.best_finished_per_bracket(self.configs[self.configs["part"] == part])

    def datasets(self, part: str) -> list[str]:
        return sorted(set(self.part_errors(part)["dataset"]))
