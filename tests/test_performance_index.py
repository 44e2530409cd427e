"""The performance index of seed 003 (§3.2, Table 3.1, eq. 3.7) against hand computations."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC, LinearSVC

from hpo.evaluation.performance_index import (
    PerformanceIndex,
    PerformanceIndexError,
    class_frequencies,
    gives_probabilities,
    homogenise,
)

CLASSES = ["a", "b", "c"]
Y = np.array(["a", "a", "b", "c"])  # frequencies q = (1/2, 1/4, 1/4)
PREDICTED = np.array(["a", "b", "b", "c"])  # one mistake: an a called b
P = np.array([0.4, 0.4, 0.2])  # training-fold frequencies (not those of Y)


def test_the_default_index_by_hand() -> None:
    score = PerformanceIndex().score(Y, CLASSES, P, labels=PREDICTED)
    # accuracy 3/4; baseline sum_c q_c p_c = 0.2 + 0.1 + 0.05 = 0.35; (0.75 - 0.35) / 0.65 = 8/13
    accuracy = score.metric("accuracy")
    assert (accuracy.value, accuracy.baseline) == pytest.approx((0.75, 0.35))
    assert accuracy.homogenised == pytest.approx(8 / 13)
    # F1 per class: a 2/(2+1) = 2/3, b 2/(2+1) = 2/3, c 1 -> 7/9; baseline 2qp/(q+p): a 4/9,
    # b 4/13, c 2/9 -> 38/117; (7/9 - 38/117) / (79/117) = 53/79
    f = score.metric("f_beta")
    assert (f.value, f.baseline, f.homogenised) == pytest.approx((7 / 9, 38 / 117, 53 / 79))
    # Brier of one-hot vectors: the wrong row costs 1 + 1 = 2, mean 1/2; baseline
    # p.p - 2 p.q + 1 = 0.36 - 0.7 + 1 = 0.66; (1/2 - 0.66) / (0 - 0.66) = 8/33
    brier = score.metric("brier")
    assert (brier.value, brier.baseline, brier.homogenised) == pytest.approx((0.5, 0.66, 8 / 33))
    # MCC (multiclass): (c s - sum t_k p_k) / sqrt((s^2 - sum p_k^2)(s^2 - sum t_k^2))
    # = (3*4 - (2*1 + 1*2 + 1*1)) / sqrt((16 - 6)(16 - 6)) = 7/10; baseline 0
    mcc = score.metric("mcc")
    assert (mcc.value, mcc.baseline, mcc.homogenised) == pytest.approx((0.7, 0.0, 0.7))
    assert [m.weight for m in score.metrics] == [0.25] * 4
    assert score.index == pytest.approx((8 / 13 + 53 / 79 + 8 / 33 + 0.7) / 4)


def test_the_f_beta_baseline_averages_over_every_class_the_labels_or_the_assignment_hold() -> None:
    # class c is in the labels (q_c = 1/4) but not in the training fold (p_c = 0): random
    # assignment never predicts it, so its F1 is 0 and it counts in the macro mean [decision];
    # baseline 2qp/(q+p): a 2(1/2)(0.6)/1.1 = 6/11, b 2(1/4)(0.4)/0.65 = 4/13, c 0
    p = np.array([0.6, 0.4, 0.0])
    f = PerformanceIndex({"f_beta": 1.0}).score(Y, CLASSES, p, labels=PREDICTED).metric("f_beta")
    assert f.baseline == pytest.approx((6 / 11 + 4 / 13 + 0) / 3)


def test_weights_are_normalised_and_zero_disables_a_metric() -> None:
    index = PerformanceIndex({"accuracy": 3.0, "mcc": 1.0, "brier": 0.0})
    score = index.score(Y, CLASSES, P, labels=PREDICTED)
    assert [m.name for m in score.metrics] == ["accuracy", "mcc"]
    assert score.index == pytest.approx(0.75 * 8 / 13 + 0.25 * 0.7)


def test_f_beta_uses_beta() -> None:
    score = PerformanceIndex({"f_beta": 1.0}, beta=2.0).score(Y, CLASSES, P, labels=PREDICTED)
    # F2 = 5 tp / (5 tp + 4 fn + fp): a 5/9, b 5/6, c 1; baseline 5qp/(4q+p): 5/12, 5/14, 5/24
    f = score.metric("f_beta")
    assert (f.value, f.baseline) == pytest.approx(
        ((5 / 9 + 5 / 6 + 1) / 3, (5 / 12 + 5 / 14 + 5 / 24) / 3)
    )


def test_the_ideal_scores_one_and_the_baseline_prediction_zero() -> None:
    index = PerformanceIndex({"accuracy": 1, "f_beta": 1, "brier": 1, "mcc": 1, "auc": 1})
    one_hot = (Y[:, None] == np.array(CLASSES)).astype(float)
    ideal = index.score(Y, CLASSES, P, probabilities=one_hot)
    assert [m.homogenised for m in ideal.metrics] == pytest.approx([1.0] * 5)
    assert ideal.index == pytest.approx(1.0)
    constant = index.score(Y, CLASSES, P, probabilities=np.tile(P, (len(Y), 1)))
    assert constant.metric("brier").homogenised == pytest.approx(0.0)
    assert constant.metric("auc").homogenised == pytest.approx(0.0)


def test_each_recorded_metric_carries_the_parts_its_homogenised_value_is_made_of() -> None:
    """What a score records explains it (eq. 3.6): each metric's homogenised value is
    ``homogenise(value, baseline, ideal)`` of its recorded parts, with the ideal of its kind
    (1 for accuracy and AUC, 0 for the Brier score, a loss)."""
    index = PerformanceIndex({"accuracy": 1, "brier": 1, "auc": 1})
    probabilities = np.tile(P, (len(Y), 1)) * 0.5 + 0.5 * (Y[:, None] == np.array(CLASSES))
    score = index.score(Y, CLASSES, P, probabilities=probabilities)
    assert {m.name: m.ideal for m in score.metrics} == {"accuracy": 1.0, "brier": 0.0, "auc": 1.0}
    for m in score.metrics:
        assert m.homogenised == homogenise(m.value, m.baseline, m.ideal)


def test_random_assignment_with_the_frequencies_scores_zero_on_average() -> None:
    """The label metrics' baselines are the expectation of the seed's "weighted-random
    assignment" (§3.2): its homogenised scores average to 0."""
    rng = np.random.default_rng(0)
    classes = np.array([0, 1, 2])
    p = np.array([0.6, 0.3, 0.1])
    index = PerformanceIndex({"accuracy": 1, "f_beta": 1, "mcc": 1})
    scores = []
    for _ in range(40):
        y = rng.choice(classes, size=3000, p=p)
        guess = rng.choice(classes, size=3000, p=p)
        scores.append([m.homogenised for m in index.score(y, classes, p, labels=guess).metrics])
    np.testing.assert_allclose(np.mean(scores, axis=0), 0.0, atol=0.01)


def test_auc_by_hand() -> None:
    y = np.array([0, 0, 1, 1])
    probabilities = np.array([[0.9, 0.1], [0.6, 0.4], [0.65, 0.35], [0.2, 0.8]])
    # pairs (negative, positive) ranked right: (0.1, 0.35), (0.1, 0.8), (0.4, 0.8) of 4 -> 3/4
    score = PerformanceIndex({"auc": 1}).score(y, [0, 1], [0.5, 0.5], probabilities=probabilities)
    assert score.metric("auc").value == pytest.approx(0.75)
    assert score.index == pytest.approx(0.5)


def test_regression_metrics_by_hand() -> None:
    index = PerformanceIndex({"r2": 1, "mae": 1, "mse": 1})
    score = index.score_regression([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0], train_mean=2.0)
    # MAE 1/4, baseline mean |y - 2| = 1; MSE 1/4, baseline 6/4; R2 = 1 - 1/5, baseline 1 - 6/5
    assert score.metric("mae").homogenised == pytest.approx(0.75)
    assert score.metric("mse").homogenised == pytest.approx((0.25 - 1.5) / -1.5)
    r2 = score.metric("r2")
    assert (r2.value, r2.baseline, r2.homogenised) == pytest.approx((0.8, -0.2, 1 / 1.2))


def test_a_metric_needing_probabilities_refuses_a_learner_that_gives_none() -> None:
    with pytest.raises(PerformanceIndexError, match="'auc' needs .* learner 'linear_svm' gives"):
        PerformanceIndex({"accuracy": 1, "auc": 1}).score(
            Y, CLASSES, P, labels=PREDICTED, learner="linear_svm"
        )
    strict = PerformanceIndex(one_hot_fallback=False)
    with pytest.raises(PerformanceIndexError, match="'brier' needs predicted probabilities and "):
        strict.check_learner("ridge", gives_probabilities(LinearSVC()))
    strict.check_learner("knn", gives_probabilities(KNeighborsClassifier()))
    PerformanceIndex().check_learner("ridge", False)  # the seed's one-hot rule for Brier
    assert not gives_probabilities(SVC()) and gives_probabilities(SVC(probability=True))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"weights": {"accuracy": -0.5, "mcc": 1}}, "metric weight accuracy=-0.5 must be a finite"),
        ({"weights": {"accuracy": 0, "mcc": 0}}, "metric weights are all zero"),
        ({"weights": {"acc": 1}}, "unknown metric 'acc'; valid choices: accuracy, f_beta, brier"),
        ({"weights": {"accuracy": 1, "mse": 1}}, "mix classification and regression"),
        ({"beta": 0.0}, "beta=0.0 must be > 0"),
    ],
)
def test_bad_settings_are_one_line_errors(settings: dict, message: str) -> None:
    with pytest.raises(PerformanceIndexError, match=re.escape(message)) as caught:
        PerformanceIndex(**settings)
    assert "\n" not in str(caught.value)


def test_bad_input_is_named() -> None:
    with pytest.raises(PerformanceIndexError, match="label 'z' is not one of the classes"):
        PerformanceIndex().score(np.array(["a", "z"]), CLASSES, P, labels=np.array(["a", "a"]))
    with pytest.raises(PerformanceIndexError, match="3 frequencies summing to 1"):
        PerformanceIndex().score(Y, CLASSES, [0.5, 0.5, 0.5], labels=PREDICTED)
    np.testing.assert_allclose(class_frequencies(Y, CLASSES), [0.5, 0.25, 0.25])
