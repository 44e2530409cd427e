"""The online Gaussian mixture that learns a general prior (seed 003, Chapter 4, Algorithm 4).

Per numeric hyperparameter and categorical signature, the seed learns a one-dimensional Gaussian
mixture from past runs: a value whose performance index ``s`` passes a Monte-Carlo test
(``U(0, 1) <= s``) is added as a new component (COMBINE, eqs 4.1-4.2), then components are merged
while the merged Gaussian stays faithful to what it replaces (SIMPLIFY, after Declercq & Piater's
uncertain Gaussian model): ``D = (1/|I|) int_I |F_hat(x) - F_n(x)| dx`` (eq. 4.3), fidelity
``exp(-D^2 / T_D^2)`` (eq. 4.4), merge by moment matching (eqs 4.5-4.8, where the seed's sigma
denotes a variance). The learned mixture becomes a
:class:`hpo.space.prior_distributions.GaussianMixture`, and so a prior file
(:func:`hpo.space.prior_files.prior_file`).

Decisions (docs/hierarchical.md): a new component has weight 1 and standard deviation 0.05 x the
parameter's range; ``F_n`` is the CDF of the two components a merge replaces; ``I`` spans their
means +- 4 standard deviations; the closest means are tried first; T_D = 0.05, threshold 0.9.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from hpo.space.prior_distributions import GaussianMixture

NEW_WEIGHT = 1.0
NEW_WIDTH = 0.05  # standard deviation of a new component, as a share of the parameter's range
DEVIATION = 0.05  # T_D of eq. 4.4
THRESHOLD = 0.9  # smallest fidelity at which two components merge
GRID = 257  # points of the trapezoid rule for eq. 4.3
SPAN = 4.0  # I = the two components' means +- SPAN standard deviations


def merge_components(
    w_i: float, mu_i: float, var_i: float, w_j: float, mu_j: float, var_j: float
) -> tuple[float, float, float]:
    """Moment matching (eqs 4.5-4.7): the weight, mean and variance of the one Gaussian with
    the mean and variance of the weighted pair."""
    w = w_i + w_j
    mu = (w_i * mu_i + w_j * mu_j) / w
    var = (w_i / w) * (var_i + (mu_i - mu) ** 2) + (w_j / w) * (var_j + (mu_j - mu) ** 2)
    return w, mu, var


def fidelity(
    w_i: float,
    mu_i: float,
    var_i: float,
    w_j: float,
    mu_j: float,
    var_j: float,
    deviation: float = DEVIATION,
) -> float:
    """``exp(-D^2 / T_D^2)`` (eq. 4.4) of merging components ``i`` and ``j``, ``D`` the mean
    absolute difference (eq. 4.3) between the merged Gaussian's CDF and the pair's."""
    _, mu, var = merge_components(w_i, mu_i, var_i, w_j, mu_j, var_j)
    sd_i, sd_j = math.sqrt(var_i), math.sqrt(var_j)
    low = min(mu_i - SPAN * sd_i, mu_j - SPAN * sd_j)
    high = max(mu_i + SPAN * sd_i, mu_j + SPAN * sd_j)
    x = np.linspace(low, high, GRID)
    pair = (w_i * ndtr((x - mu_i) / sd_i) + w_j * ndtr((x - mu_j) / sd_j)) / (w_i + w_j)
    merged = ndtr((x - mu) / math.sqrt(var))
    distance = float(np.trapezoid(np.abs(merged - pair), x)) / (high - low)
    return math.exp(-(distance**2) / deviation**2)


@dataclass
class OnlineGaussianMixture:
    """An unnormalised mixture ``sum_i pi_i N(mu_i, var_i) / sum_i pi_i`` (eq. 4.1)."""

    weights: list[float] = field(default_factory=list)
    means: list[float] = field(default_factory=list)
    variances: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.weights)

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)[..., None]
        w, mu, var = (
            np.asarray(a, dtype=float) for a in (self.weights, self.means, self.variances)
        )
        density = np.exp(-0.5 * (x - mu) ** 2 / var) / np.sqrt(2 * math.pi * var)
        return density @ w / w.sum()

    def moments(self) -> tuple[float, float]:
        """The mixture's mean and variance."""
        w, mu, var = (
            np.asarray(a, dtype=float) for a in (self.weights, self.means, self.variances)
        )
        mean = float(w @ mu / w.sum())
        return mean, float(w @ (var + (mu - mean) ** 2) / w.sum())

    def combine(self, value: float, variance: float, weight: float = NEW_WEIGHT) -> None:
        """COMBINE (eq. 4.2): add the component ``(weight, value, variance)``."""
        if not (variance > 0 and weight > 0):
            raise ValueError(
                f"a component needs variance > 0 and weight > 0, got {variance}, {weight}"
            )
        self.weights.append(float(weight))
        self.means.append(float(value))
        self.variances.append(float(variance))

    def simplify(self, threshold: float = THRESHOLD, deviation: float = DEVIATION) -> int:
        """SIMPLIFY: merge pairs of components, neighbours by mean and the closest first, while
        one merge has fidelity >= ``threshold``; returns the number of merges."""
        merges = 0
        while len(self) > 1:
            order = np.argsort(self.means, kind="stable")
            pairs = sorted(
                zip(order[:-1], order[1:], strict=True),
                key=lambda ij: self.means[ij[1]] - self.means[ij[0]],
            )
            for i, j in pairs:
                a = (self.weights[i], self.means[i], self.variances[i])
                b = (self.weights[j], self.means[j], self.variances[j])
                if fidelity(*a, *b, deviation=deviation) >= threshold:
                    self._replace(int(i), int(j), merge_components(*a, *b))
                    merges += 1
                    break
            else:
                return merges
        return merges

    def _replace(self, i: int, j: int, merged: tuple[float, float, float]) -> None:
        for target, value in zip((self.weights, self.means, self.variances), merged, strict=True):
            target[i] = value
            del target[j]

    def to_prior(self, low: float = -math.inf, high: float = math.inf) -> GaussianMixture:
        """The mixture as a prior (weights normalised, standard deviations), truncated to
        ``[low, high]``."""
        total = sum(self.weights)
        return GaussianMixture(
            tuple(w / total for w in self.weights),
            tuple(self.means),
            tuple(math.sqrt(v) for v in self.variances),
        ).truncated(low, high)


@dataclass
class GeneralPriorLearner:
    """Algorithm 4's inner step for one hyperparameter in one signature, on ``[low, high]``:
    :meth:`observe` accepts a value with probability equal to its performance index, then
    COMBINEs and SIMPLIFYs."""

    low: float
    high: float
    threshold: float = THRESHOLD
    deviation: float = DEVIATION
    width: float = NEW_WIDTH
    mixture: OnlineGaussianMixture = field(default_factory=OnlineGaussianMixture)

    def observe(self, value: float, score: float, rng: np.random.Generator) -> bool:
        """Monte-Carlo acceptance ``U(0, 1) <= score``; returns whether ``value`` was added."""
        if not rng.uniform() <= score:
            return False
        self.mixture.combine(value, (self.width * (self.high - self.low)) ** 2)
        self.mixture.simplify(self.threshold, self.deviation)
        return True

    def prior(self) -> GaussianMixture:
        return self.mixture.to_prior(self.low, self.high)


@dataclass(frozen=True)
class LearnedPrior:
    """The general prior learned for one signature: the mixture, and how many values were seen
    and accepted (the Monte-Carlo test)."""

    prior: GaussianMixture
    seen: int
    accepted: int


def learn_general_priors(
    values: Sequence[float],
    scores: Sequence[float],
    signatures: Sequence[tuple[str, ...]],
    low: float,
    high: float,
    seed: int = 0,
) -> dict[tuple[str, ...], LearnedPrior]:
    """Algorithm 4 (LEARN_GENERAL_PRIOR) for one numeric hyperparameter: the observations
    ``(value, score, signature)`` are taken in the order given (dataset after dataset, as the
    seed's loop over training datasets), each offered to its signature's
    :class:`GeneralPriorLearner` on ``[low, high]``; one seeded stream decides the acceptances.
    A signature whose values were all rejected has no prior (it is left out)."""
    if not len(values) == len(scores) == len(signatures):
        raise ValueError(
            f"values, scores and signatures differ in length: "
            f"{len(values)}, {len(scores)}, {len(signatures)}"
        )
    rng = np.random.default_rng(seed)
    learners: dict[tuple[str, ...], GeneralPriorLearner] = {}
    seen: dict[tuple[str, ...], int] = {}
    accepted: dict[tuple[str, ...], int] = {}
    for value, score, signature in zip(values, scores, signatures, strict=True):
        learner = learners.setdefault(signature, GeneralPriorLearner(low, high))
        seen[signature] = seen.get(signature, 0) + 1
        accepted[signature] = accepted.get(signature, 0) + learner.observe(value, score, rng)
    return {
        signature: LearnedPrior(learner.prior(), seen[signature], accepted[signature])
        for signature, learner in sorted(learners.items())
        if accepted[signature]
    }


def general_prior_file(
    space: str,
    parameter: str,
    signature_names: Sequence[str],
    learned: Mapping[tuple[str, ...], LearnedPrior],
    fallback: Sequence[Mapping[str, object]] = (),
) -> dict[str, object]:
    """The prior file (:func:`hpo.space.prior_files.with_priors`) that gives ``parameter`` its
    learned mixture in each signature (``when:`` the signature's values), then the ``fallback``
    entries (e.g. the space's own priors) for the contexts nothing was learned in: the first
    match wins."""
    entries: list[Mapping[str, object]] = [
        {"when": {name: [value] for name, value in zip(signature_names, signature, strict=True)}}
        | learned[signature].prior.to_config()
        for signature in sorted(learned)
    ]
    return {"space": space, "priors": {parameter: [*entries, *fallback]}}
