"""Seed 003's 17 classifiers (Appendix A) as learners, and their tree ``conf/space/seed003.yaml``:
every learner of the tree is registered, builds scikit-learn's defaults from ``{}`` (the seed's
baseline), receives every value the tree tunes, and fits the iris data from sampled
configurations (some draws may fail or underfit: each learner must fit well at least once)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid, RadiusNeighborsClassifier
from sklearn.svm import SVC, LinearSVC, NuSVC
from sklearn.tree import DecisionTreeClassifier

from experiments.configuration.spaces import load_prior_space
from hpo.learners import FitGuard, fit_and_predict, learner_names, make_estimator
from hpo.learners.registry import learner_parameters

GUARD = FitGuard()
# The estimator each learner must build from {}: scikit-learn's defaults, plus what the framework
# always sets (seed, one job, the guard's libsvm/liblinear limits, the radius outlier rule).
DEFAULTS = {
    "knn": KNeighborsClassifier(n_jobs=1),
    "radius_neighbors": RadiusNeighborsClassifier(outlier_label="most_frequent", n_jobs=1),
    "nearest_centroid": NearestCentroid(),
    "sgd": SGDClassifier(random_state=7),
    "logistic_regression": LogisticRegression(random_state=7),
    "svm": SVC(),
    "linear_svm": LinearSVC(random_state=7),
    "nu_svm": NuSVC(),
    "decision_tree": DecisionTreeClassifier(random_state=7),
    "random_forest": RandomForestClassifier(random_state=7, n_jobs=1),
    "extra_trees": ExtraTreesClassifier(random_state=7, n_jobs=1),
    "ridge": RidgeClassifier(),
    "lda": LinearDiscriminantAnalysis(),
    "qda": QuadraticDiscriminantAnalysis(),
    "gradient_boosting": GradientBoostingClassifier(random_state=7),
    "passive_aggressive": SGDClassifier(
        loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0, random_state=7
    ),
    "gaussian_nb": GaussianNB(),
}
GUARD_SET = {"max_iter", "cache_size"}  # the fit guard's limits (docs/learners.md)
# Tree parameters given to the estimator under another name or form (hpo/learners/appendix_a.py).
RENAMED = {("logistic_regression", "penalty"), ("passive_aggressive", "loss")}
RENAMED |= {("passive_aggressive", "C"), ("svm", "shrinking"), ("nu_svm", "shrinking")}


def _tree_learners() -> tuple[str, ...]:
    space = load_prior_space("seed003").space
    return space.parameters[space.names.index("classifier")].choices


def test_the_tree_holds_the_17_learners_of_appendix_a_all_registered() -> None:
    learners = _tree_learners()
    assert len(learners) == 17 and set(learners) == set(DEFAULTS)
    assert set(learners) <= set(learner_names())


@pytest.mark.parametrize("learner", sorted(DEFAULTS))
def test_an_empty_configuration_builds_scikit_learns_defaults(learner: str) -> None:
    built = make_estimator(learner, {}, GUARD, seed=7, n_train=100)
    assert type(built) is type(DEFAULTS[learner]) or isinstance(built, type(DEFAULTS[learner]))
    ours = {k: v for k, v in built.get_params().items() if k not in GUARD_SET}
    reference = {k: v for k, v in DEFAULTS[learner].get_params().items() if k not in GUARD_SET}
    assert ours == reference


def test_every_tuned_value_reaches_its_estimator() -> None:
    prior_space = load_prior_space("seed003")
    seen: set[tuple[str, str]] = set()
    for config in prior_space.sample_batch(np.random.default_rng(0), 400):
        config = prior_space.learner_config(config)
        learner = str(config["classifier"])
        params = make_estimator(learner, config, GUARD, seed=1, n_train=100).get_params()
        for name, value in learner_parameters(learner, config).items():
            if name == "classifier" or (learner, name) in RENAMED:
                continue
            assert params[name] == value, (learner, name)
            seen.add((learner, name))
    names = {n for n in prior_space.space.names if "__" in n}
    expected = {tuple(n.split("__", 1)) for n in names} - RENAMED
    assert seen == expected


def test_the_renamed_arguments_map_as_documented() -> None:
    lr = make_estimator("logistic_regression", {"penalty": "l1", "C": 2.0}, GUARD)
    assert (lr.l1_ratio, lr.solver, lr.C) == (1.0, "saga", 2.0)
    pa = make_estimator("passive_aggressive", {"loss": "squared_hinge", "C": 0.3}, GUARD)
    assert (pa.learning_rate, pa.eta0, pa.loss, pa.penalty) == ("pa2", 0.3, "hinge", None)
    assert make_estimator("svm", {"shrinking": "False"}, GUARD).shrinking is False
    with pytest.raises(ValueError, match="valid|must be one of"):
        make_estimator("passive_aggressive", {"loss": "log"}, GUARD)


def test_every_learner_fits_iris_from_sampled_configurations() -> None:
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    rows = np.random.default_rng(0).permutation(len(y))
    train, valid = rows[:100], rows[100:]
    prior_space = load_prior_space("seed003")
    fitted: set[str] = set()
    for config in prior_space.sample_batch(np.random.default_rng(1), 300):
        config = prior_space.learner_config(config)
        learner = str(config["classifier"])
        if learner in fitted:
            continue
        outcome = fit_and_predict(
            learner, config, FitGuard(on_limit="keep"), X[train], y[train], [(X[valid], y[valid])]
        )
        if outcome.failure is None and outcome.errors[0] < 0.5:  # better than chance (1/3 right)
            fitted.add(learner)
    assert fitted == set(DEFAULTS)
