"""Seed 003 inside a run (``docs/hierarchical.md``): class probabilities in the evaluation and the
sidecar, the performance index as the objective, budgets in seconds, the prior-sampling
optimisers by name, and the model-selection stage whose ranked list comes back from the results
file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.configuration.compose import compose_run
from experiments.configuration.config import UsageError
from experiments.configuration.spaces import load_prior_space, space_config
from experiments.configuration.spec import RunSpec
from experiments.run.runner import run
from experiments.run.single import run_and_save
from hpo.data.catalog import load_dataset
from hpo.evaluation.evaluator import Evaluator
from hpo.evaluation.objective import IndexLoss
from hpo.evaluation.performance_index import PerformanceIndex, class_frequencies
from hpo.evaluation.protocol import ProtocolSettings
from hpo.learners import FitGuard, fit_and_predict
from hpo.optimizers import make_optimizer
from hpo.significance.comparisons import Candidate, select_models
from runfiles.files import read_predictions, read_run

FAST = ["dataset=sklearn-iris", "optimizer.model_selection.repeats=2"]
FAST += ["optimizer.model_selection.folds=5", "protocol.n_folds=3"]


@pytest.fixture(scope="module")
def iris():
    return load_dataset("sklearn-iris")


def test_probabilities_are_predict_proba_or_one_hot_and_change_no_error(iris) -> None:
    X, y = iris.X, iris.y
    sets = [(X[100:], y[100:])]
    for learner, config, gives in (("knn", {"n_neighbors": 5}, True), ("svm", {}, False)):
        plain = fit_and_predict(learner, config, FitGuard(), X[:100], y[:100], sets)
        with_p = fit_and_predict(learner, config, FitGuard(), X[:100], y[:100], sets, n_classes=3)
        assert plain.errors == with_p.errors and plain.probabilities is None
        np.testing.assert_array_equal(plain.predictions[0], with_p.predictions[0])
        p = with_p.probabilities[0]
        assert p.shape == (len(y) - 100, 3) and with_p.gives_probabilities is gives
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        if not gives:
            np.testing.assert_array_equal(p.argmax(axis=1), with_p.predictions[0])
            assert set(np.unique(p)) <= {0.0, 1.0}


def test_the_index_objective_is_one_minus_the_mean_fold_index(iris) -> None:
    protocol = ProtocolSettings(validation="cv", n_folds=3, train_cap=None, stratify=True)
    index = PerformanceIndex()
    args = (iris, protocol, lambda c: "knn", FitGuard(), 0, 0)
    evaluator = Evaluator(
        *args, keep_predictions=True, objective=IndexLoss(index), keep_probabilities=True
    )
    scored = evaluator.validate({"n_neighbors": 7}, batch=0)
    by_hand = []
    for fold, kept in zip(evaluator.splits.folds(0), scored.predictions, strict=True):
        classes = np.arange(3)
        by_hand.append(
            index.score(
                evaluator.y[fold.valid],
                classes,
                class_frequencies(evaluator.y[fold.train], classes),
                labels=kept.valid,
                probabilities=kept.valid_probabilities,
            ).index
        )
    assert scored.valid_loss == pytest.approx(1.0 - np.mean(by_hand), abs=1e-12)
    zero_one = Evaluator(*args).validate({"n_neighbors": 7}, batch=0)
    assert zero_one.valid_loss != scored.valid_loss  # the index, not the error


def test_prior_random_search_draws_the_priors_sequence() -> None:
    prior_space = load_prior_space("seed003")
    optimizer = make_optimizer("prior_rs", prior_space.space, 50, np.random.default_rng(4))
    optimizer.use_priors(prior_space)
    drawn = [dict(optimizer.ask().config) for _ in range(50)]
    rng = np.random.default_rng(4)
    assert drawn == [prior_space.sample(rng) for _ in range(50)]


def test_the_parametric_density_sampler_falls_back_to_uniform_when_the_prior_misfits() -> None:
    prior_space = load_prior_space("seed003")
    for sign, expected in ((+1, "prior"), (-1, "uniform")):
        optimizer = make_optimizer("pds", prior_space.space, 40, np.random.default_rng(0))
        optimizer.use_priors(prior_space)
        for _ in range(15):
            proposal = optimizer.ask()
            density = prior_space.log_density(proposal.config)
            optimizer.tell(proposal, -sign * density)  # score rises (+1) or falls with density
        optimizer.ask()
        assert optimizer.sources[-1] == expected
        assert optimizer.sources[:10] == ["prior"] * 10  # before min_evaluations: the prior


def test_a_time_budget_stops_the_run_within_one_evaluation(iris) -> None:
    spec = RunSpec.of(
        dataset="sklearn-iris",
        optimizer="rs",
        rules={"rs": "best_validation"},
        budget=100000,
        time_budget=0.3,
        space=space_config("svm_rbf"),
    )
    result = run(spec, data=iris)
    elapsed = result.trace["elapsed_seconds"].to_numpy()
    assert 1 <= len(elapsed) < 100000
    # every evaluation but the last ended inside the budget, the last one past it (it started
    # inside); on a slow machine the first one alone may spend it
    assert np.all(elapsed[:-1] < 0.3) and elapsed[-1] >= 0.3
    assert np.all(np.diff(elapsed) > 0)


def test_old_runs_keep_their_identity() -> None:
    spec = compose_run(["optimizer=gp", "dataset=iris"])
    identity = spec.identity()
    assert not {"performance_index", "probabilities", "time_budget", "model_selection"} & set(
        identity
    )


@pytest.mark.slow
def test_a_17_learner_run_returns_the_ranked_tied_set_and_the_file_gives_it_back(
    tmp_path: Path,
) -> None:
    spec = compose_run(
        ["optimizer=hrs", "budget=8", "predictions=true", "probabilities=true"] + FAST
    )
    assert spec.task.space_name == "seed003" and spec.task.objective["name"] == "performance_index"
    result = run(spec)
    ranked = result.stage_rows["selection"][result.stage_rows["selection"]["ms_rank"].notna()]
    assert len(ranked) >= 1 and ranked["ms_tied"].iloc[0] and ranked["ms_rank"].iloc[0] == 1
    # the root's p-values are the cascade's on the same stored scores
    candidates = [
        Candidate(f"it{r.iteration}", tuple(json.loads(r.ms_holdout_scores)))
        for r in ranked.itertuples()
    ]
    again = {m.name: m for m in select_models(candidates, 0.05).ranked}
    for r in ranked.itertuples():
        assert again[f"it{r.iteration}"].p_value == pytest.approx(r.ms_p_value, abs=1e-12)
        assert again[f"it{r.iteration}"].tied == r.ms_tied
    path = run_and_save(spec, tmp_path / "run.parquet")
    table = read_run(path)
    stored = table[table["row_type"] == "selection"].reset_index(drop=True)
    columns = ["iteration", "learner", "ms_rank", "ms_p_value", "ms_tied", "ms_holdout_mean"]
    expected = result.stage_rows["selection"][columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(stored[columns], expected, check_dtype=False)
    sidecar = read_predictions(path)
    proba = sidecar[[f"proba_{c}" for c in range(3)]].to_numpy()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["pds", "hypercube"])
def test_the_seed_optimisers_run_by_name(method: str) -> None:
    spec = compose_run(
        [f"optimizer={method}", "budget=4", "optimizer.model_selection=null"] + FAST[:1]
    )
    result = run(spec)
    assert len(result.trace) == 4 and "selection" not in result.stage_rows
    assert set(result.trace["learner"]) <= set(load_prior_space("seed003").space.learners)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("time_budget=0", "time_budget must be a number of seconds > 0"),
        ("optimizer.model_selection.alpha=1.5", "alpha=1.5 must be in \\(0, 1\\)"),
        ("optimizer.performance_index.weights.accuracy=-1", "must be a finite number >= 0"),
        ("++optimizer.performance_index.weights.auc=1", "'auc' needs predicted probabilities"),
    ],
)
def test_bad_seed003_settings_are_one_line(override: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        compose_run(["optimizer=hrs", "dataset=sklearn-iris", override])


def test_the_defaults_baseline_is_each_bare_estimator_scored_by_the_index(iris) -> None:
    """The defaults baseline (Bermúdez-Chacón 2014, §5): every learner at scikit-learn's
    defaults, on the same folds of H as the candidates, scored by the same index; checked against
    the bare classes by hand."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.naive_bayes import GaussianNB

    from hpo.evaluation.fitting import standardize_features
    from hpo.significance.stage import SelectionSettings, holdout_folds, score_defaults
    from hpo.space.search_space import space_from_config

    protocol = ProtocolSettings(validation="cv", n_folds=3, test_frac=0.5, standardize=True)
    space = space_from_config(
        {
            "name": "two",
            "learner": {"choice": "classifier"},
            "parameters": {
                "classifier": {"type": "categorical", "choices": ["lda", "gaussian_nb"]}
            },
        }
    )
    index = PerformanceIndex()
    evaluator = Evaluator(
        iris, protocol, space.learner_of, FitGuard(), 0, 0, objective=IndexLoss(index)
    )
    folds = holdout_folds(evaluator, SelectionSettings(repeats=1, folds=3), (0, iris.name, 0))
    rows, seconds = score_defaults(evaluator, space, folds)
    assert [r["learner"] for r in rows] == ["lda", "gaussian_nb"] and seconds > 0
    classes = np.arange(3)
    for row, estimator in zip(rows, (LinearDiscriminantAnalysis, GaussianNB), strict=True):
        assert row["ms_kind"] == "default" and row["iteration"] == 0
        by_hand = []
        for fold in folds:
            X_train, (X_valid,) = standardize_features(iris.X[fold.train], [iris.X[fold.valid]])
            model = estimator().fit(X_train, iris.y[fold.train])
            by_hand.append(
                index.score(
                    iris.y[fold.valid],
                    classes,
                    class_frequencies(iris.y[fold.train], classes),
                    labels=model.predict(X_valid),
                    probabilities=model.predict_proba(X_valid),
                ).index
            )
        np.testing.assert_allclose(json.loads(row["ms_holdout_scores"]), by_hand, atol=1e-12)


def test_a_seed003_run_by_name_has_the_defaults_rows_outside_the_ranking() -> None:
    spec = compose_run(["optimizer=hrs", "budget=3"] + FAST)
    assert spec.method.stages["model_selection"]["defaults"] is True
    selection = run(spec).stage_rows["selection"]
    defaults = selection[selection["ms_kind"] == "default"]
    assert sorted(defaults["learner"]) == sorted(load_prior_space("seed003").space.learners)
    assert defaults["ms_rank"].isna().all() and (defaults["iteration"] == 0).all()
    assert (selection[selection["ms_rank"].notna()]["ms_kind"] == "optimized").all()
    # the table reads as Algorithm 3's answer: the ranked models first, best first, then the rest
    ranks = selection["ms_rank"].to_numpy(dtype=float)
    n_ranked = int(np.isfinite(ranks).sum())
    assert n_ranked >= 1 and list(ranks[:n_ranked]) == list(range(1, n_ranked + 1))


def _stub_evaluator(scores: dict[float, float] | None = None) -> object:
    """What the stage reads of an evaluator: the rows of H and their labels, and a
    ``holdout_scores`` that gives each configuration ``scores[x]`` (+ 0.01 on every other fold)
    at 0.25 s per fold."""
    from types import SimpleNamespace

    def holdout_scores(config: dict, folds: list) -> tuple[list[float], float]:
        return [scores[config["x"]] + 0.01 * (i % 3) for i in range(len(folds))], 0.25

    return SimpleNamespace(
        splits=SimpleNamespace(test=np.arange(10, 70)),
        y=np.tile([0, 1, 2], 40),
        holdout_scores=holdout_scores,
    )


def test_each_repetition_of_the_cv_on_h_draws_its_own_folds() -> None:
    """Bermúdez-Chacón 2014 §3.3: m = 3 repetitions of 10-fold CV on H, each shuffled anew (the
    same folds three times would be one CV counted thrice)."""
    from hpo.significance.stage import SelectionSettings, holdout_folds

    folds = holdout_folds(_stub_evaluator(), SelectionSettings(repeats=3, folds=5), (0, "d", 0))
    assert len(folds) == 15
    partitions = []
    for repeat in range(3):
        valid = [tuple(f.valid) for f in folds[5 * repeat : 5 * (repeat + 1)]]
        assert sorted(np.concatenate(valid)) == list(range(10, 70))  # a partition of H
        partitions.append(frozenset(valid))
    assert len(set(partitions)) == 3


def _one_real_parameter_space():  # noqa: ANN202
    """LDA with one real parameter ``x`` in [0, 1]: a single leaf of Algorithm 3's tree."""
    from hpo.space.search_space import space_from_config

    return space_from_config(
        {
            "name": "one",
            "learner": "lda",
            "parameters": {"x": {"type": "real", "low": 0, "high": 1}},
        }
    )


def test_the_kmeans_filter_keeps_each_clusters_best_configuration() -> None:
    """§3.5.1: k-means on a leaf's configurations keeps the one with the best optimisation score
    (1 − validation loss) of each cluster; with k = 1, the leaf's lowest loss."""
    from hpo.significance.stage import SelectionSettings, run_stage

    space = _one_real_parameter_space()
    xs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    losses = [0.5, 0.4, 0.3, 0.2, 0.1, 0.6]
    configs = [{"x": x} for x in xs]
    evaluator = _stub_evaluator({x: 1 - loss for x, loss in zip(xs, losses, strict=True)})
    result = run_stage(
        evaluator, space, configs, configs, np.array([[x] for x in xs]), losses,
        SelectionSettings(k=1, repeats=1, folds=2), (0, "d", 0),
    )  # fmt: skip
    assert [row["iteration"] for row in result.rows] == [5]
    (row,) = result.rows  # its spread is the sample SD (n − 1) of its 2 fold scores
    assert row["ms_holdout_std"] == pytest.approx(
        np.std(json.loads(row["ms_holdout_scores"]), ddof=1)
    )
    assert result.fit_seconds == pytest.approx(0.25 * 2)  # 0.25 s per fold, 2 folds
    # a configuration evaluated twice is one model (its first evaluation), scored once
    again = run_stage(
        evaluator, space, configs + configs[4:5], configs + configs[4:5],
        np.array([[x] for x in xs + xs[4:5]]), losses + losses[4:5],
        SelectionSettings(k=10, repeats=1, folds=2), (0, "d", 0),
    )  # fmt: skip
    assert sorted(row["iteration"] for row in again.rows) == [1, 2, 3, 4, 5, 6]


def test_the_selection_table_lists_the_ranked_models_first_then_the_rest_by_iteration() -> None:
    """Algorithm 3's answer reads from the top of the stage's table: the models the root ranks,
    best first, then the models no node promoted, in the order they were evaluated."""
    from hpo.significance.stage import SelectionSettings, run_stage

    space = _one_real_parameter_space()
    xs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    holdout = {0.1: 0.5, 0.2: 0.9, 0.3: 0.6, 0.4: 0.95, 0.5: 0.3, 0.6: 0.7}
    configs = [{"x": x} for x in xs]
    result = run_stage(
        _stub_evaluator(holdout), space, configs, configs, np.array([[x] for x in xs]),
        [0.5] * 6, SelectionSettings(k=10, repeats=1, folds=3, top_n=2), (0, "d", 0),
    )  # fmt: skip
    ranks = [row["ms_rank"] for row in result.rows]
    n_ranked = sum(rank is not None for rank in ranks)
    assert 1 <= n_ranked < len(ranks) and ranks[:n_ranked] == list(range(1, n_ranked + 1))
    assert result.rows[0]["iteration"] == 4  # x = 0.4: the best hold-out score
    rest = [row["iteration"] for row in result.rows[n_ranked:]]
    assert rest == sorted(rest)


def test_the_stage_s_folds_come_from_their_own_named_seed_stream() -> None:
    """docs/hierarchical.md's decision: repetition r of the CV on H is ``StratifiedKFold
    (shuffle=True)`` seeded from (seed, dataset, repetition, "selection-cv", r), a stream named
    for it, so the folds can be rebuilt from the run's key."""
    from sklearn.model_selection import StratifiedKFold

    from hpo import seeding
    from hpo.significance.stage import SelectionSettings, holdout_folds

    evaluator = _stub_evaluator()
    folds = holdout_folds(evaluator, SelectionSettings(repeats=2, folds=5), (0, "d", 0))
    rows = evaluator.splits.test
    for r in range(2):
        seed = seeding.int_seed(seeding.seed_sequence(0, "d", 0, "selection-cv", r)) % 2**32
        rebuilt = StratifiedKFold(5, shuffle=True, random_state=seed).split(rows, evaluator.y[rows])
        for fold, (_, valid) in zip(folds[5 * r : 5 * (r + 1)], rebuilt, strict=True):
            assert fold.valid.tolist() == rows[valid].tolist()
