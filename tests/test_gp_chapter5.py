"""Chapter 5's GP parts: conditional and Laplace kernels, blockwise posterior, priors, and the
random-candidate and local-search acquisition optimizers (thesis §5.3-5.5)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hpo.gp.acquisition import ExpectedImprovement
from hpo.gp.acquisition_optimizers import (
    GridLBFGS,
    LocalSearch,
    RandomCandidates,
    one_exchange_neighbours,
    space_sampler,
)
from hpo.gp.kernels import Conditional, Laplace, Matern52, make_kernel
from hpo.gp.model import BlockGPPosterior, GPPosterior, Hypers, covariance, log_likelihood
from hpo.gp.slice_sampler import (
    BlockLikelihood,
    HyperChain,
    LogNormalHorseshoePriors,
    SpearmintPriors,
    joint_log_likelihood,
)
from hpo.optimizers import make_optimizer
from hpo.optimizers.base import Proposal
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Categorical, Condition, Integer, Real, Space

CHOICES = ("a", "b", "c")


def dummy_space() -> Space:
    """The illustration space of thesis §5.4 (Figs 5.2-5.3): a choice among three classifiers,
    one parameter each; plus a log-scaled real and an integer for classifier ``c``."""
    return Space(
        "dummy",
        (
            Categorical("clf", CHOICES),
            Real("a_x", 0.0, 1.0, condition=Condition("clf", ("a",))),
            Real("b_x", 0.0, 1.0, condition=Condition("clf", ("b",))),
            Real("c_x", 1e-3, 1e3, log=True, condition=Condition("clf", ("c",))),
            Integer("c_n", 1, 8, condition=Condition("clf", ("c",))),
        ),
    )


def nested_space() -> Space:
    """Two levels of conditions: ``kernel`` exists only for classifier ``svm``."""
    return Space(
        "nested",
        (
            Categorical("clf", ("svm", "rf")),
            Categorical("kernel", ("rbf", "poly"), condition=Condition("clf", ("svm",))),
            Real("gamma", 0.0, 1.0, condition=Condition("kernel", ("rbf",))),
            Integer("degree", 2, 5, condition=Condition("kernel", ("poly",))),
            Integer("trees", 1, 100, condition=Condition("clf", ("rf",))),
        ),
    )


def _hypers(rng: np.random.Generator, d: int, S: int = 3) -> Hypers:
    return Hypers(
        mean=rng.uniform(0.2, 0.6, S),
        amp2=rng.uniform(0.5, 2.0, S),
        noise=rng.uniform(1e-3, 1e-1, S),
        ls=rng.uniform(0.2, 1.5, (S, d)),
    )


def _data(space: Space, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = space_sampler(space)(rng, n)
    y = np.sin(4 * X).sum(axis=1) / space.dim + 0.05 * rng.standard_normal(n)
    return X, y, _hypers(rng, space.dim), space_sampler(space)(rng, 40)


def _classifier(space: Space, X: np.ndarray) -> np.ndarray:
    return np.array([space.decode(x)["clf"] for x in X])


# --- conditional kernel (thesis Eq. 5.9) -------------------------------------------------------


def test_conditional_kernel_is_base_within_a_classifier_and_zero_across() -> None:
    space = dummy_space()
    X, _, hypers, Xs = _data(space, 30)
    kernel = Conditional(space)
    values = kernel(hypers.ls, X, Xs)
    base = Matern52()(hypers.ls, X, Xs)
    same = _classifier(space, X)[:, None] == _classifier(space, Xs)[None, :]
    assert same.any() and (~same).any()
    np.testing.assert_array_equal(values[:, ~same], 0.0)
    np.testing.assert_array_equal(values[:, same], base[:, same])
    # the training Gram matrix and the sampler's covariance agree with the cross-correlations
    terms = kernel.gram_terms(X)
    np.testing.assert_allclose(kernel.gram(hypers.ls, terms), kernel(hypers.ls, X, X), atol=1e-12)
    cov = kernel.covariance_lower(hypers.ls[0], terms, 1.3, 0.01)
    expected = covariance(kernel(hypers.ls[:1], X, X), 1.3, 0.01 - 1.3e-6)[0]
    np.testing.assert_allclose(np.tril(cov), np.tril(expected), atol=1e-12)


def test_conditional_structure_descends_nested_conditions() -> None:
    space = nested_space()
    X = space_sampler(space)(np.random.default_rng(1), 200)
    labels = Conditional(space).structure(X)
    keys = [(c["clf"], c.get("kernel")) for c in (space.decode(x) for x in X)]
    for i in range(len(X)):
        for j in range(len(X)):
            assert (labels[i] == labels[j]) == (keys[i] == keys[j])


def test_conditional_kernel_needs_conditions() -> None:
    space = Space("flat", (Real("x", 0.0, 1.0), Real("z", 0.0, 1.0)))
    with pytest.raises(ValueError, match="needs conditions") as error:
        make_kernel("conditional", space)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="needs conditions"):
        make_optimizer("gp", space, 10, np.random.default_rng(0), kernel="conditional")


def test_blockwise_posterior_equals_dense() -> None:
    space = dummy_space()
    X, y, hypers, Xs = _data(space, 45)
    kernel = Conditional(space)
    dense, blocks = GPPosterior(kernel, X, y, hypers), BlockGPPosterior(kernel, X, y, hypers)
    # a query classifier without training points gets the prior; one with a single point
    labels = _classifier(space, X)
    keep = (labels == "c") | (np.cumsum(labels == "b") == 1) & (labels == "b")
    sparse = BlockGPPosterior(kernel, X[keep], y[keep], hypers)
    sparse_dense = GPPosterior(kernel, X[keep], y[keep], hypers)
    assert sorted(set(_classifier(space, X[keep]))) == ["b", "c"]
    for one, other in ((dense, blocks), (sparse_dense, sparse)):
        mean, var = one.mean_var(Xs)
        block_mean, block_var = other.mean_var(Xs)
        np.testing.assert_allclose(block_mean, mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(block_var, var, rtol=0, atol=1e-10)
        np.testing.assert_allclose(other.mean(Xs), mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(other.log_likelihood(), one.log_likelihood(), atol=1e-10)
        np.testing.assert_allclose(other.cov_inv, one.cov_inv, rtol=0, atol=1e-8)


def test_blockwise_sampler_likelihood_equals_dense() -> None:
    space = dummy_space()
    X, y, hypers, _ = _data(space, 45)
    kernel = Conditional(space)
    blocks = BlockLikelihood.build(kernel, X, kernel.blocks(X))
    terms = kernel.gram_terms(X)
    ls, amp2, noise, mean = hypers.ls[0], 1.2, 0.01, 0.3
    diag = amp2 * 1e-6 + noise
    # as the component-wise slice sampler calls it: one length-scale (or amp2, mean) at a time;
    # repeated calls read the blocks' remembered values
    for dim, amp2, mean in (
        (0, 1.2, 0.3),
        (1, 1.2, 0.3),
        (1, 1.2, 0.3),
        (3, 0.8, 0.3),
        (3, 0.8, 0.2),
    ):
        ls = ls.copy()
        ls[dim] *= 1.3
        diag = amp2 * 1e-6 + noise
        dense = log_likelihood(kernel.covariance_lower(ls, terms, amp2, diag), y - mean)
        assert blocks.log_likelihood(kernel, ls, amp2, diag, mean, y) == pytest.approx(
            dense, abs=1e-10
        )
    joint = joint_log_likelihood(kernel.gram(ls[None], terms)[0], y)
    assert blocks.joint(kernel, ls[None], y)(mean, amp2, noise) == pytest.approx(
        joint(mean, amp2, noise), abs=1e-10
    )
    # a length-scale of a dimension constant in a block leaves that block's factor as it was
    varying = [set(v.tolist()) for v in blocks.varying]
    assert all(1 not in v for v in varying[1:]) and 1 in varying[0]


# --- Laplace kernel (thesis Eq. 5.15) ----------------------------------------------------------


def test_laplace_kernel_matches_direct_formula() -> None:
    rng = np.random.default_rng(3)
    X1, X2 = rng.random((6, 4)), rng.random((5, 4))
    ls = rng.uniform(0.2, 2.0, (3, 4))
    direct = np.array(
        [[[np.exp(-np.sum(np.abs(a - b) / l)) for b in X2] for a in X1] for l in ls]  # noqa: E741
    )
    kernel = Laplace()
    np.testing.assert_allclose(kernel(ls, X1, X2), direct, rtol=1e-14)
    terms = kernel.gram_terms(X1)
    np.testing.assert_allclose(kernel.gram(ls, terms), kernel(ls, X1, X1), rtol=1e-14)
    cov = kernel.covariance_lower(ls[0], terms, 0.7, 0.05)
    expected = 0.7 * kernel(ls[:1], X1, X1)[0] + 0.05 * np.eye(6)
    np.testing.assert_allclose(np.tril(cov), np.tril(expected), rtol=1e-14)
    # gradient: finite differences away from the kinks
    step = 1e-6
    grad = kernel.grad_x2(ls, X1, X2)
    shifted = X2.copy()
    shifted[:, 2] += step
    numeric = (kernel(ls, X1, shifted) - kernel(ls, X1, X2)) / step
    np.testing.assert_allclose(grad[..., 2], numeric, rtol=1e-4, atol=1e-8)


# --- Chapter 5 priors (thesis §5.5) ------------------------------------------------------------


def test_chapter5_priors_match_scipy() -> None:
    priors = LogNormalHorseshoePriors()
    y = np.array([0.1, 0.5])
    ls = np.array([0.3, 1.0, 2.5])
    assert priors.log_ls(ls) == pytest.approx(stats.lognorm(s=1.0).logpdf(ls).sum(), rel=1e-12)
    assert priors.log_ls(np.array([0.5, -0.1])) == -np.inf

    def amplitude(amp2: float) -> float:
        return priors.log_joint(0.3, amp2, 0.01, y) - priors.log_joint(0.3, 1.0, 0.01, y)

    for amp2 in (0.05, 0.7, 3.0):
        # sigma_f ~ LogNormal(0, 1)  <=>  amp2 = sigma_f^2 ~ LogNormal(0, 2)
        expected = stats.lognorm(s=2.0).logpdf(amp2) - stats.lognorm(s=2.0).logpdf(1.0)
        assert amplitude(amp2) == pytest.approx(expected, rel=1e-12)
        sigma = np.sqrt(amp2)
        via_sigma = stats.lognorm(s=1.0).logpdf(sigma) - np.log(2 * sigma)
        assert via_sigma - stats.lognorm(s=1.0).logpdf(1.0) + np.log(2) == pytest.approx(
            expected, rel=1e-12
        )

    def noise(v: float) -> float:
        return priors.log_joint(0.3, 1.0, v, y) - priors.log_joint(0.3, 1.0, 1.0, y)

    for v in (1e-6, 1e-2, 4.0):
        # horseshoe(1) on sigma_n in Spearmint's form, with the Jacobian of sigma_n = sqrt(v)
        expected = np.log(np.log1p(1.0 / v)) - 0.5 * np.log(v) - np.log(np.log(2.0))
        assert noise(v) == pytest.approx(expected, rel=1e-12)
    assert priors.log_joint(0.7, 1.0, 0.01, y) == -np.inf  # mean outside [min y, max y]
    assert priors.log_joint(0.3, 1.0, 0.0, y) == -np.inf


# --- acquisition optimizers (thesis §5.3.2) ----------------------------------------------------


def _acquisition(
    space: Space, n: int = 30, seed: int = 0
) -> tuple[ExpectedImprovement, np.ndarray]:
    X, y, hypers, _ = _data(space, n, seed)
    kernel = Conditional(space)
    return ExpectedImprovement(BlockGPPosterior(kernel, X, y, hypers), best_f=y.min()), X


def _assert_valid(space: Space, u: np.ndarray) -> None:
    np.testing.assert_allclose(space.encode(space.decode(u)), u, rtol=0, atol=1e-12)
    inactive = ~space.active_mask(u)
    np.testing.assert_array_equal(u[inactive], space.impute_value)


@pytest.mark.parametrize("space_fn", [dummy_space, nested_space])
def test_local_search_returns_valid_points_and_improves_ei_monotonically(space_fn) -> None:
    space = space_fn()
    acquisition, X = _acquisition(space)
    search = LocalSearch(space, step=0.05, n_restarts=6, n_best_observed=3, max_iter=30)
    best = search.maximize(acquisition, X, None, np.random.default_rng(5))
    _assert_valid(space, best)
    assert len(search.paths) == 9 and max(len(path) for path in search.paths) > 2
    for path in search.paths:
        for point in path:
            _assert_valid(space, point)
        values = acquisition(np.array(path))
        assert np.all(np.diff(values) > 0)
    ends = acquisition(np.array([path[-1] for path in search.paths]))
    assert acquisition(best[None])[0] == pytest.approx(ends.max(), rel=1e-12)
    # the best random candidate among as many points is no better than the local search
    random = RandomCandidates(space_sampler(space), n_candidates=200)
    assert acquisition(random.maximize(acquisition, X, None, np.random.default_rng(5))[None])[
        0
    ] <= acquisition(best[None])[0] * (1 + 1e-9)


def test_neighbours_follow_eq_5_8() -> None:
    space = dummy_space()
    neighbours = one_exchange_neighbours(space)
    config = {"clf": "c", "c_x": 1.0, "c_n": 1}
    found = neighbours(config, 0.1)
    clf = sorted(c["clf"] for c in found if c["clf"] != "c")
    assert clf == ["a", "b"]  # every other classifier, its parameter at the imputed value
    assert {"clf": "a", "a_x": 0.5} in found
    assert {"clf": "c", "c_x": 1.0, "c_n": 2} in found  # integer: +1 only (1 is the lower end)
    reals = sorted(c["c_x"] for c in found if c["clf"] == "c" and c["c_x"] != 1.0)
    np.testing.assert_allclose(np.log10(reals), [-0.6, 0.6])  # 0.1 of the log10 range of 6
    assert len(found) == 5


def test_random_candidates_are_valid() -> None:
    space = dummy_space()
    acquisition, X = _acquisition(space)
    rng = np.random.default_rng(2)
    for u in space_sampler(space)(rng, 50):
        _assert_valid(space, u)
    _assert_valid(
        space, RandomCandidates(space_sampler(space), 100).maximize(acquisition, X, None, rng)
    )
    raw = space_sampler(space, impute=False)(rng, 50)
    assert not np.isin(raw, 0.5).any()


# --- GPEIOptimizer settings --------------------------------------------------------------------

FAST = {"burnin": 10, "n_samples": 3}


def test_defaults_are_spearmint() -> None:
    opt = GPEIOptimizer(dummy_space(), 10, np.random.default_rng(0))
    assert isinstance(opt.acquisition_optimizer, GridLBFGS)
    assert isinstance(opt.chain.priors, SpearmintPriors)
    assert isinstance(opt.kernel, Matern52)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"acquisition_optimizer": "lbfgs"}, "acquisition_optimizer must be one of"),
        ({"priors": "gamma"}, "priors must be one of"),
        ({"acquisition_optimizer": "local_search", "ls_step": 0.0}, r"step must be in \(0, 1\]"),
        ({"acquisition_optimizer": "local_search", "ls_step": 1.5}, r"step must be in \(0, 1\]"),
        ({"acquisition_optimizer": "local_search", "ls_max_iter": 0}, "max_iter must be >= 1"),
        (
            {"acquisition_optimizer": "local_search", "ls_restarts": 0, "ls_best_observed": 0},
            "at least one start",
        ),
        ({"acquisition_optimizer": "local_search", "ls_restarts": -1}, "n_restarts >= 0"),
        ({"acquisition_optimizer": "random", "n_candidates": 0}, "n_candidates must be >= 1"),
    ],
)
def test_bad_settings_are_one_line_errors(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        GPEIOptimizer(dummy_space(), 10, np.random.default_rng(0), **settings)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("kernel", "acquisition_optimizer"),
    [("conditional", "local_search"), ("conditional", "random"), ("laplace", "local_search")],
)
def test_chapter5_variants_propose_valid_points(kernel: str, acquisition_optimizer: str) -> None:
    space = dummy_space()
    opt = make_optimizer(
        "gp",
        space,
        12,
        np.random.default_rng(0),
        kernel=kernel,
        priors="lognormal",
        acquisition_optimizer=acquisition_optimizer,
        ls_restarts=4,
        ls_best_observed=2,
        n_candidates=200,
        initial_design="random_valid",
        **FAST,
    )
    assert isinstance(opt.chain.priors, LogNormalHorseshoePriors)
    for _ in range(2):  # the initial design
        proposal = opt.ask()
        _assert_valid(space, proposal.u)
        opt.tell(proposal, float(np.sum((proposal.u - 0.3) ** 2)))
    rng = np.random.default_rng(1)
    for u in space_sampler(space)(rng, 6):
        opt.tell(Proposal(u, len(opt.y) + 1), float(np.sum((u - 0.3) ** 2)))
    for _ in range(3):
        proposal = opt.ask()
        _assert_valid(space, proposal.u)
        opt.tell(proposal, float(np.sum((proposal.u - 0.3) ** 2)))
    _assert_valid(space, opt.posterior_mean_argmin("observed"))


def test_blockwise_chain_samples_like_dense_chain() -> None:
    """The blockwise likelihood targets the same posterior: starting from one state, the first
    transitions of both chains coincide up to rounding."""
    space = dummy_space()
    X, y, _, _ = _data(space, 30)
    kernel = Conditional(space)

    class Dense(Conditional):
        def blocks(self, X: np.ndarray) -> None:
            return None

    results = []
    for k in (kernel, Dense(space)):
        chain = HyperChain(k, LogNormalHorseshoePriors(), burnin=0)
        results.append(chain.sample(X, y, 2, np.random.default_rng(4)))
    np.testing.assert_allclose(results[0].ls, results[1].ls, rtol=1e-8)
    np.testing.assert_allclose(results[0].amp2, results[1].amp2, rtol=1e-8)


def test_screened_top_k_and_gradients_work_on_the_blockwise_posterior() -> None:
    """Spearmint's grid search also runs with the conditional kernel: the screened ``top_k``
    (float32 bounds from the assembled dense factors) and the EI gradients match the dense
    posterior's."""
    space = dummy_space()
    X, y, hypers, _ = _data(space, 40)
    kernel = Conditional(space)
    dense = ExpectedImprovement(GPPosterior(kernel, X, y, hypers), best_f=y.min())
    blocks = ExpectedImprovement(BlockGPPosterior(kernel, X, y, hypers), best_f=y.min())
    candidates = space_sampler(space)(np.random.default_rng(7), 3000)
    top, values = blocks.top_k(candidates, 20)
    dense_top, dense_values = dense.top_k(candidates, 20)
    np.testing.assert_array_equal(top, dense_top)
    np.testing.assert_allclose(values, dense_values, rtol=1e-9)
    value, grad = blocks.value_and_grad(candidates[:5])
    dense_value, dense_grad = dense.value_and_grad(candidates[:5])
    np.testing.assert_allclose(value, dense_value, rtol=1e-9)
    np.testing.assert_allclose(grad, dense_grad, rtol=1e-9, atol=1e-14)
    opt = GPEIOptimizer(
        space, 10, np.random.default_rng(0), kernel="conditional", grid_size=2048, **FAST
    )
    for u, loss in zip(X[:8], y[:8], strict=True):
        opt.tell(Proposal(u, len(opt.y) + 1), float(loss))
    assert opt.ask().u.shape == (space.dim,)
