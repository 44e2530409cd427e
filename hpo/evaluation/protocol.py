"""The Chapter-3 evaluation protocol (thesis §3.2-3.3, Fig 3.2;
[decide] points in docs/deviations.md).

Per repetition of a dataset:

* one outer test split ``D_G`` shared by every method (the predefined test file, else a stratified
  ``test_frac`` of the data), the rest ``D_TVS`` is training + validation (+ selection) data;
* optionally a selection split ``D_S`` (``selection_frac`` of ``D_TVS``), drawn once and fixed for
  the whole run; ``D_TV = D_TVS minus D_S``;
* inner validation on ``D_TV``: hold-out (``valid_frac`` to validation) or k-fold; with
  ``reshuffle`` a fresh split (or fresh folds) for every *batch* (an iteration, or a CMA-ES
  generation), otherwise the same split throughout;
* the training cap: no training set larger than ``train_cap`` (5000); the surplus goes to the
  validation split and, when there is one, partly (``cap_selection_share``) to the selection split.

Every random stream is derived from ``(seed, dataset, repetition, purpose)`` by
:mod:`hpo.seeding`, so the test split is identical for every method and every reshuffle, and a
run gives the same splits whatever else runs before, after or beside it.

Indices returned here index the concatenation ``[X; X_test]`` of a
:class:`~hpo.data.catalog.Dataset`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hpo import seeding

VALIDATION_KINDS = ("holdout", "cv")
# The splits that can be stratified: the outer test split, the hold-out validation split, the
# k folds, the selection split (each with its share of the training-cap surplus).
STRATIFIABLE_SPLITS = ("test", "validation", "folds", "selection")


@dataclass(frozen=True)
class ProtocolSettings:
    """Settings of the protocol; defaults are the choices of docs/deviations.md [decide]."""

    validation: str = "holdout"  # "holdout" | "cv"
    n_folds: int = 5
    valid_frac: float = 1 / 3  # [decide] hold-out validation share of D_TV
    test_frac: float = 1 / 3  # [thesis] when no predefined test set
    selection_frac: float = 1 / 3  # [decide] share of D_TVS held out for selection
    selection_split: bool = False  # -sel / -pv / -bw / -gv methods
    reshuffle: bool = False  # -r methods
    train_cap: int | None = 5000  # [thesis] training points at most
    cap_selection_share: float = 0.5  # [decide] share of the cap surplus sent to D_S
    # [decide, docs/deviations.md] which splits are stratified: True (all), False (none) or some of
    # STRATIFIABLE_SPLITS; the thesis does not mention stratification.
    stratify: bool | tuple[str, ...] = False
    # [decide] z-score every feature with the mean and standard deviation of each fit's training
    # rows (thesis §5.5, Chapter 5: "every feature standardised"); off for Chapter 3, whose
    # UCI-121 files are already z-scored over the whole dataset.
    standardize: bool = False

    def __post_init__(self) -> None:
        if self.validation not in VALIDATION_KINDS:
            raise ValueError(
                f"unknown validation {self.validation!r}; valid choices: {VALIDATION_KINDS}"
            )
        for name in ("valid_frac", "test_frac", "selection_frac"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"protocol.{name} must be in (0, 1), got {value}")
        if not 0.0 <= self.cap_selection_share <= 1.0:
            raise ValueError(
                f"protocol.cap_selection_share must be in [0, 1], got {self.cap_selection_share}"
            )
        if self.validation == "cv" and self.n_folds < 2:
            raise ValueError(f"n_folds must be >= 2, got {self.n_folds}")
        if not isinstance(self.stratify, bool):
            splits = (self.stratify,) if isinstance(self.stratify, str) else self.stratify
            unknown = sorted(set(splits) - set(STRATIFIABLE_SPLITS))
            if unknown:
                raise ValueError(
                    f"protocol.stratify: unknown split(s) {', '.join(map(str, unknown))}; valid: "
                    f"true, false or a list of {', '.join(STRATIFIABLE_SPLITS)}"
                )
            object.__setattr__(self, "stratify", tuple(sorted(set(splits))))
        if self.train_cap is not None and self.train_cap < 2:
            raise ValueError(f"train_cap must be >= 2 or null, got {self.train_cap}")

    def stratified(self, split: str) -> bool:
        """Whether ``split`` (one of :data:`STRATIFIABLE_SPLITS`) is drawn stratified."""
        return self.stratify if isinstance(self.stratify, bool) else split in self.stratify

    @property
    def train_fraction(self) -> float:
        """Nominal share of D_TV used for training in one fold."""
        if self.validation == "cv":
            return (self.n_folds - 1) / self.n_folds
        return 1.0 - self.valid_frac


@dataclass(frozen=True)
class Fold:
    """One training/validation pair of index arrays."""

    train: np.ndarray
    valid: np.ndarray


def stratified_take(
    indices: np.ndarray,
    labels: np.ndarray,
    n_take: int,
    rng: np.random.Generator,
    stratify: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Split ``indices`` into (taken, rest) with ``len(taken) == n_take``.

    Stratified: each class contributes ``n_take * share`` points, rounded by largest remainder
    (ties broken at random), so tiny classes never make it fail; ``stratify=False`` is a plain
    random draw. Both parts are returned sorted.
    """
    n_take = int(np.clip(n_take, 0, len(indices)))
    if not stratify:
        chosen = rng.permutation(len(indices))[:n_take]
        mask = np.zeros(len(indices), dtype=bool)
        mask[chosen] = True
        return np.sort(indices[mask]), np.sort(indices[~mask])
    classes, class_of = np.unique(labels[indices], return_inverse=True)
    counts = np.bincount(class_of, minlength=len(classes))
    exact = n_take * counts / len(indices)
    quota = np.floor(exact).astype(int)
    remainder = exact - quota
    order = np.lexsort((rng.permutation(len(classes)), -remainder))
    quota[order[: n_take - quota.sum()]] += 1
    mask = np.zeros(len(indices), dtype=bool)
    for cls, q in enumerate(quota):
        members = np.flatnonzero(class_of == cls)
        mask[rng.permutation(members)[:q]] = True
    return np.sort(indices[mask]), np.sort(indices[~mask])


def stratified_folds(
    indices: np.ndarray,
    labels: np.ndarray,
    n_folds: int,
    rng: np.random.Generator,
    stratify: bool = True,
) -> list[np.ndarray]:
    """Partition ``indices`` into ``n_folds`` folds whose sizes differ by at most one.

    Stratified: class members (in random order, classes in random order) are dealt round-robin,
    so every fold gets each class's share up to one point.
    """
    if stratify:
        class_of = np.unique(labels[indices], return_inverse=True)[1]
        class_rank = rng.permutation(class_of.max() + 1)[class_of]
        order = np.lexsort((rng.permutation(len(indices)), class_rank))
    else:
        order = rng.permutation(len(indices))
    fold_of = np.empty(len(indices), dtype=int)
    fold_of[order] = np.arange(len(indices)) % n_folds
    return [np.sort(indices[fold_of == k]) for k in range(n_folds)]


class RepetitionSplits:
    """All splits of one (dataset, repetition, seed) under one set of protocol settings.

    ``labels`` are the labels of ``[X; X_test]``; ``n_main`` the number of rows of ``X`` (rows
    from ``n_main`` on form the predefined test set when ``predefined_test``).
    """

    def __init__(
        self,
        labels: np.ndarray,
        n_main: int,
        predefined_test: bool,
        settings: ProtocolSettings,
        seed: int,
        dataset: str,
        repetition: int,
    ) -> None:
        self.labels = np.asarray(labels)
        self.n_main = n_main
        self.predefined_test = predefined_test
        self.settings = settings
        self._key = (seed, dataset, repetition)
        self._folds_cache: dict[int, list[Fold]] = {}

    def _rng(self, *purpose: object) -> np.random.Generator:
        seed, dataset, repetition = self._key
        return seeding.rng(seed, dataset, repetition, *purpose)

    @cached_property
    def _outer(self) -> tuple[np.ndarray, np.ndarray]:
        everything = np.arange(len(self.labels))
        if self.predefined_test:
            return everything[self.n_main :], everything[: self.n_main]
        n_test = int(round(self.settings.test_frac * len(everything)))
        return stratified_take(
            everything,
            self.labels,
            n_test,
            self._rng("test-split"),
            self.settings.stratified("test"),
        )

    @property
    def test(self) -> np.ndarray:
        """D_G: identical for every method and every reshuffle of this repetition."""
        return self._outer[0]

    @property
    def train_valid_selection(self) -> np.ndarray:
        """D_TVS: every non-test point (what the final model is retrained on)."""
        return self._outer[1]

    @cached_property
    def _selection(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.settings
        tvs = self.train_valid_selection
        if not s.selection_split:
            return tvs[:0], tvs
        n_sel = int(round(s.selection_frac * len(tvs)))
        selection, train_valid = stratified_take(
            tvs, self.labels, n_sel, self._rng("selection-split"), s.stratified("selection")
        )
        surplus = self._cap_surplus(len(train_valid))
        extra = int(round(s.cap_selection_share * surplus))
        if extra > 0:
            moved, train_valid = stratified_take(
                train_valid,
                self.labels,
                extra,
                self._rng("selection-cap"),
                s.stratified("selection"),
            )
            selection = np.sort(np.concatenate([selection, moved]))
        return selection, train_valid

    def _cap_surplus(self, n_train_valid: int) -> int:
        cap = self.settings.train_cap
        if cap is None:
            return 0
        return max(0, int(np.floor(self.settings.train_fraction * n_train_valid)) - cap)

    @property
    def selection(self) -> np.ndarray:
        """D_S: fixed for the whole run (empty without a selection split)."""
        return self._selection[0]

    @property
    def train_valid(self) -> np.ndarray:
        """D_TV = D_TVS minus D_S: what hold-out / k-fold validation splits."""
        return self._selection[1]

    def sizes(self) -> dict[str, int]:
        """Row counts of the splits (of the first fold and batch for training and validation)."""
        first = self.folds(0)[0]
        return {
            "n_rows": len(self.labels),
            "n_test": len(self.test),
            "n_train_valid_selection": len(self.train_valid_selection),
            "n_selection": len(self.selection),
            "n_train": len(first.train),
            "n_valid": len(first.valid),
        }

    def check_sizes(self, dataset: str) -> None:
        """Raise ``ValueError`` (one line, naming the setting) when the settings leave a split
        too small for this dataset: the test split, D_S when used and every validation fold
        need a row, every training fold two."""
        s = self.settings
        problems = []
        if len(self.test) < 1:
            problems.append(f"an empty test split (protocol.test_frac={s.test_frac})")
        if s.selection_split and len(self.selection) < 1:
            problems.append(
                f"an empty selection split (protocol.selection_frac={s.selection_frac})"
            )
        for fold in self.folds(0):
            if len(fold.valid) < 1 or len(fold.train) < 2:
                setting = "n_folds" if s.validation == "cv" else "valid_frac"
                problems.append(
                    f"a fold with {len(fold.train)} training and {len(fold.valid)} validation "
                    f"rows (protocol.{setting}={getattr(s, setting)}, protocol.selection_frac="
                    f"{s.selection_frac if s.selection_split else 'unused'})"
                )
                break
        if problems:
            raise ValueError(
                f"the protocol leaves {'; '.join(problems)} on {dataset} "
                f"({len(self.labels)} rows); need >= 1 test, selection and validation row "
                "and >= 2 training rows"
            )

    def split_key(self, batch: int) -> int:
        """Batches with the same key share their folds (all of them, without reshuffling)."""
        return batch if self.settings.reshuffle else 0

    def folds(self, batch: int) -> list[Fold]:
        """The training/validation folds for ``batch`` (one fold for hold-out).

        Without reshuffling every batch gets the same folds.
        """
        key = self.split_key(batch)
        if key not in self._folds_cache:
            self._folds_cache[key] = self._make_folds(key)
        return self._folds_cache[key]

    def _make_folds(self, key: int) -> list[Fold]:
        s = self.settings
        rng = self._rng("inner-split", key)
        tv = self.train_valid
        if s.validation == "holdout":
            n_valid = int(round(s.valid_frac * len(tv)))
            valid, train = stratified_take(
                tv, self.labels, n_valid, rng, s.stratified("validation")
            )
            folds = [Fold(train, valid)]
        else:
            parts = stratified_folds(tv, self.labels, s.n_folds, rng, s.stratified("folds"))
            folds = [
                Fold(np.sort(np.concatenate(parts[:k] + parts[k + 1 :])), parts[k])
                for k in range(s.n_folds)
            ]
        return [self._apply_cap(fold, rng) for fold in folds]

    def _apply_cap(self, fold: Fold, rng: np.random.Generator) -> Fold:
        cap = self.settings.train_cap
        if cap is None or len(fold.train) <= cap:
            return fold
        split = "folds" if self.settings.validation == "cv" else "validation"
        stratify = self.settings.stratified(split)
        kept, surplus = stratified_take(fold.train, self.labels, cap, rng, stratify)
        return Fold(kept, np.sort(np.concatenate([fold.valid, surplus])))
