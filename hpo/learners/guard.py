"""The fit guard: the deterministic per-fit work limit every iterative learner runs under.

With C up to 1e5 libsvm can run for minutes (measured here: 37 M iterations, 225 s, on 5000
abalone rows), so every fit runs under a deterministic limit instead of a wall-clock limit, which
would make results depend on machine load. A libsvm iteration costs time in proportion to the
training rows, so the limit is on work, iterations x rows (``max_work``), as a time limit would
be, and on iterations (``max_iter``): a fit on ``n`` rows may run ``min(max_iter, max_work / n)``
iterations. Retraining a chosen configuration on all of D_TVS has no work limit (it needs more
iterations than the search's fits on fewer rows, and happens a few times per run).
``benchmarks/fit_cap.py`` measures what the limits change. What a fit that hits the limit scores
is a setting: ``error_one`` (the author's later code: loss 1.0) or ``keep`` (the truncated
model's own predictions); ``on_limit`` for the search's fits (default ``error_one``: a loss of 1.0
steers the search away from a fit that did not finish) and ``retrain_on_limit`` for the final
retraining (default ``keep``: a chosen model scored as wrong on every test row is not a result
anyone obtained; docs/deviations.md). Every hit is recorded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

ON_LIMIT_CHOICES = ("error_one", "keep")


@dataclass(frozen=True)
class FitGuard:
    """The per-fit limit (libsvm iterations, and iterations x training rows), what a fit that
    reaches it scores, and libsvm's memory."""

    max_iter: int = 1_000_000
    max_work: float | None = 5e8  # iterations x training rows; None: max_iter alone
    on_limit: str = "error_one"
    retrain_on_limit: str = "keep"  # the final retraining on D_TVS (never scored 1.0 by default)
    cache_size_mb: float = 500.0  # libsvm kernel cache of at least 500 MB (the author's setting)
    distance_cache_mb: float = 1024.0  # squared distances kept per run; 0: libsvm's own kernel

    def __post_init__(self) -> None:
        for name in ("on_limit", "retrain_on_limit"):
            value = getattr(self, name)
            if value not in ON_LIMIT_CHOICES:
                raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(ON_LIMIT_CHOICES)}")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter}")
        if self.max_work is not None and self.max_work < 1:
            raise ValueError(f"max_work must be >= 1 or null, got {self.max_work}")
        if self.distance_cache_mb < 0:
            raise ValueError(f"distance_cache_mb must be >= 0, got {self.distance_cache_mb}")

    def iteration_limit(self, n_train: int) -> int:
        """libsvm's ``max_iter`` for a fit on ``n_train`` rows."""
        if self.max_work is None:
            return self.max_iter
        return max(1, min(self.max_iter, int(self.max_work // max(1, n_train))))

    def for_retraining(self) -> FitGuard:
        """The guard of the final retraining on all of D_TVS: the iteration limit alone, and
        ``retrain_on_limit`` for a fit that reaches it."""
        return dataclasses.replace(self, max_work=None, on_limit=self.retrain_on_limit)


def libsvm_limits(guard: FitGuard, n_train: int) -> dict[str, float | int]:
    """``SVC`` arguments that put a libsvm fit on ``n_train`` rows under ``guard``."""
    return {"cache_size": guard.cache_size_mb, "max_iter": guard.iteration_limit(n_train)}
