"""The test errors of the choices final-selection rules make: each member retrained once on D_TVS
and scored on D_G, an ensemble scored by its vote (or mean, for regression)."""

from __future__ import annotations

import numpy as np

from hpo.ensembles import majority_vote
from hpo.ensembles.agnostic_bayes import ensemble_predict
from hpo.evaluation.evaluator import Evaluator, TestResult
from hpo.evaluation.fitting import config_key
from hpo.records import Choice, Member
from hpo.tasks import REGRESSION, mean_loss, task_of_targets


class ChoiceScorer:
    """Test errors of choices: each member retrained once (the evaluator's cache) and scored on
    D_G; a choice of several members is scored by their weighted majority vote
    (:func:`hpo.ensembles.majority_vote`, ties by ``ties``), or for regression by their weighted
    mean (:func:`hpo.ensembles.agnostic_bayes.ensemble_predict`) and its squared error.

    ``tested`` maps each retrained configuration to (model id, result): the id is the member's
    trace iteration, or minus the iteration at which a never-evaluated member was chosen.
    """

    def __init__(
        self, evaluator: Evaluator, ties: str = "lowest", rng: np.random.Generator | None = None
    ) -> None:
        self.evaluator = evaluator
        self.labels = evaluator.y[evaluator.splits.test]
        self.ties = ties
        self.rng = rng
        self.tested: dict[tuple, tuple[int, TestResult]] = {}

    def member_result(self, member: Member, chosen_at: int) -> TestResult:
        """The retrained member's test result (cached per configuration)."""
        key = config_key(member.config)
        if key not in self.tested:
            model_id = member.iteration if member.iteration is not None else -chosen_at
            self.tested[key] = (model_id, self.evaluator.test(member.config))
        return self.tested[key][1]

    def score(self, choice: Choice, chosen_at: int) -> tuple[float, bool, float]:
        """(test error, any member hit its fit limit, seconds of the members' retraining) of a
        choice made after iteration ``chosen_at``."""
        results = [self.member_result(m, chosen_at) for m in choice.members]
        hit = any(r.hit_limit for r in results)
        seconds = sum(r.fit_seconds for r in results)
        if choice.is_single:
            return results[0].error, hit, seconds
        if task_of_targets(self.labels) == REGRESSION:  # the agnostic-Bayes weighted mean
            predictions = np.stack([r.predictions for r in results])
            mean = ensemble_predict(predictions, choice.weights, REGRESSION)
            return mean_loss(mean, self.labels), hit, seconds
        votes = majority_vote(
            np.stack([r.predictions for r in results]), choice.weights, self.ties, self.rng
        )
        return float(np.mean(votes != self.labels)), hit, seconds
