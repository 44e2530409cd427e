"""Random forests: Table 2.1's space (Chapter 2) and the random forest of thesis Table 5.1.

``RandomForestClassifier(random_state=seed, n_jobs=1)`` with the configuration's arguments among
:data:`FOREST_ARGUMENTS`; the others keep scikit-learn's defaults (Table 5.1 does not tune the
split criterion: Gini).
"""

from __future__ import annotations

from collections.abc import Mapping

from sklearn.ensemble import RandomForestClassifier

from hpo.learners.guard import FitGuard
from hpo.learners.registry import Value, given, register_learner

TREE_ARGUMENTS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf")
FOREST_ARGUMENTS = ("n_estimators", *TREE_ARGUMENTS, "max_features")  # max_features: seed 003


@register_learner("random_forest")
def random_forest(
    config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int
) -> RandomForestClassifier:
    """A random forest drawing its bootstrap samples and features from ``seed``."""
    return RandomForestClassifier(random_state=seed, n_jobs=1, **given(config, FOREST_ARGUMENTS))
