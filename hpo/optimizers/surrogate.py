"""SMBO with a scikit-optimize-style surrogate, EI over random candidates: the seed's GP and RF
(Jůzlová 2018, §1.2.3–1.2.4, §2.1.2.1; scikit-optimize 0.5.2's settings).

One step: encode every evaluated point (the unit-cube coordinate of each numeric parameter,
log-scaled where its prior is; one-hot for categoricals, one 0/1 column for two choices, as
skopt's encoder), fit the surrogate to the losses, draw ``n_candidates`` (10,000, §2.1.2.1)
points uniformly in the unit cube (the prior), and propose the one with the highest expected
improvement ``EI = (τ − μ − ξ)Φ(z) + σφ(z)``, ``z = (τ − μ − ξ)/σ``, ``τ = y_best`` (§1.2.2).
Conditional parameters are treated as **always active** (§2.1.2.1): the surrogate sees every
coordinate of the points it proposed, inactive ones included (they are simply not used to train
the network).

``model="gp"`` — a Gaussian process with a constant × Matérn-5/2 ARD kernel plus white noise,
length scales in [0.01, 100], amplitude in [0.01, 1000], hyperparameters fitted by maximising
the marginal likelihood (ML-II, 2 restarts), on standardised losses; the predictive σ leaves the
fitted noise out (skopt 0.5's ``gp_minimize`` defaults).

``model="forest"`` — 100 regression trees on bootstrap samples, ``min_samples_leaf`` 3, every
feature considered at each split (``max_features`` = all, p = 1), μ and σ the mean and standard
deviation of the trees' predictions (§1.2.4.3; skopt's ``forest_minimize`` settings).

[decision] ``n_initial`` random points before the first model (default 3): the seed does not say
(skopt 0.5's default of 10 would make its 10-evaluation MNIST runs random search). [decision]
``xi`` = 0.01, skopt's default (the seed: τ = y_best; ``xi=0`` is that literally).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import norm

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Categorical, Space

MODELS = ("gp", "forest")


def encode(space: Space, U: np.ndarray) -> np.ndarray:
    """Surrogate features of unit-cube points ``U`` (n, d): numeric coordinates as they are,
    categoricals one-hot (a single 0/1 column for two choices)."""
    U = np.atleast_2d(np.asarray(U, dtype=float))
    columns = []
    for i, p in enumerate(space.parameters):
        if not isinstance(p, Categorical):
            columns.append(U[:, i : i + 1])
            continue
        n = len(p.choices)
        codes = np.floor((1 - 1e-12) * np.clip(U[:, i], 0.0, 1.0) * n).astype(int)
        if n == 2:
            columns.append(codes[:, None].astype(float))
        else:
            columns.append(np.eye(n)[codes])
    return np.hstack(columns)


def expected_improvement(
    mean: np.ndarray, std: np.ndarray, best: float, xi: float = 0.01
) -> np.ndarray:
    """EI of a minimisation at each candidate (0 where σ = 0 and μ ≥ τ − ξ)."""
    improvement = best - mean - xi
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, improvement / std, 0.0)
    ei = improvement * norm.cdf(z) + std * norm.pdf(z)
    return np.where(std > 0, ei, np.maximum(improvement, 0.0))


class SurrogateSMBO(Optimizer):
    """SMBO with a GP or random-forest surrogate and EI over random candidates (module
    docstring). ``n_trees`` and ``min_samples_leaf`` are the forest's; ``n_restarts`` the GP's."""

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        model: str = "gp",
        n_initial: int = 3,
        n_candidates: int = 10_000,
        xi: float = 0.01,
        n_trees: int = 100,
        min_samples_leaf: int = 3,
        n_restarts: int = 2,
    ) -> None:
        super().__init__(space, budget, rng)
        if model not in MODELS:
            raise ValueError(f"unknown surrogate model {model!r}; valid: {', '.join(MODELS)}")
        if n_initial < 1:
            raise ValueError(f"n_initial must be >= 1, got {n_initial}")
        if n_candidates < 1:
            raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
        self.model = model
        self.n_initial = n_initial
        self.n_candidates = n_candidates
        self.xi = xi
        self.n_trees = n_trees
        self.min_samples_leaf = min_samples_leaf
        self.n_restarts = n_restarts

    def ask(self) -> Proposal:
        batch = len(self.y) + 1
        finite = np.isfinite(self.y)
        if len(self.y) < self.n_initial or finite.sum() < 2:
            return Proposal(u=self.rng.uniform(size=self.space.dim), batch=batch)
        X = encode(self.space, np.array(self.X)[finite])
        y = np.asarray(self.y, dtype=float)[finite]
        candidates = self.rng.uniform(size=(self.n_candidates, self.space.dim))
        mean, std, best = self.predict(X, y, encode(self.space, candidates))
        ei = expected_improvement(mean, std, best, self.xi)
        return Proposal(u=candidates[int(np.argmax(ei))], batch=batch)

    def predict(
        self, X: np.ndarray, y: np.ndarray, candidates: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """(μ, σ, τ) at ``candidates`` of the surrogate fitted to ``(X, y)``, in the units the
        model works in (standardised losses for the GP)."""
        seed = int(self.rng.integers(2**31 - 1))
        if self.model == "forest":
            forest = self.forest(seed).fit(X, y)
            per_tree = np.stack([tree.predict(candidates) for tree in forest.estimators_])
            return per_tree.mean(axis=0), per_tree.std(axis=0, ddof=1), float(y.min())
        scale = y.std() if y.std() > 0 else 1.0
        z = (y - y.mean()) / scale
        with warnings.catch_warnings():  # length scales at their bounds: expected, not news
            warnings.simplefilter("ignore")
            gp = self.gaussian_process(X.shape[1], seed).fit(X, z)
        mean, std = gp.predict(candidates, return_std=True)
        noise = gp.kernel_.k2.noise_level  # σ excludes the fitted noise (skopt's predict)
        std = np.sqrt(np.maximum(std**2 - noise, 0.0))
        return mean, std, float(z.min())

    def forest(self, seed: int):  # noqa: ANN201 (scikit-learn estimator)
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(
            n_estimators=self.n_trees,
            min_samples_leaf=self.min_samples_leaf,
            max_features=None,  # all features at every split (p = 1)
            bootstrap=True,
            n_jobs=1,
            random_state=seed,
        )

    def gaussian_process(self, n_features: int, seed: int):  # noqa: ANN201
        return skopt_gaussian_process(n_features, seed, self.n_restarts)


def skopt_gaussian_process(n_features: int, seed: int, n_restarts: int = 2):  # noqa: ANN201
    """scikit-optimize 0.5's GP (module docstring), unfitted: constant × Matérn-5/2 ARD + white
    noise, fitted by ML-II with ``n_restarts``. Its fitted ``kernel_.k1.k2.length_scale`` are the
    ARD length scales (the seed's Table 2.3 reads 1/ℓ)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    kernel = ConstantKernel(1.0, (0.01, 1000.0)) * Matern(
        length_scale=np.ones(n_features), length_scale_bounds=(0.01, 100.0), nu=2.5
    ) + WhiteKernel(1.0, (1e-5, 1e5))
    return GaussianProcessRegressor(
        kernel, normalize_y=False, n_restarts_optimizer=n_restarts, random_state=seed
    )
