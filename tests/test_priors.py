"""Per-context priors (seed 003 §3.1, eqs 3.1-3.6): every density and sampler against scipy.stats,
the top-down sampler of a tree, virtual hyperparameters and the one-line errors."""

from __future__ import annotations

import copy
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from experiments.configuration.spaces import is_cash, load_space, space_choices, space_config
from hpo.space.prior_distributions import (
    CategoricalWeights,
    GaussianMixture,
    LogNormal,
    LogUniform,
    Normal,
    PriorError,
    Uniform,
)
from hpo.space.prior_files import prior_file, prior_space_from_config, with_priors
from hpo.space.priors import PriorSpace

TREE = Path(__file__).resolve().parents[1] / "conf" / "space" / "seed003.yaml"
KS_ALPHA = 0.01  # a correct sampler fails one KS test in a hundred; the seeds below are fixed


def _mixture_reference(weights, mu, sigma, low=-np.inf, high=np.inf):
    """The mixture's pdf and cdf built from scipy.stats.norm only."""
    parts = [stats.norm(m, s) for m, s in zip(mu, sigma, strict=True)]
    mass = sum(w * (d.cdf(high) - d.cdf(low)) for w, d in zip(weights, parts, strict=True))

    def pdf(x):
        inside = (x >= low) & (x <= high)
        return np.where(inside, sum(w * d.pdf(x) for w, d in zip(weights, parts, strict=True)), 0)

    def cdf(x):
        x = np.clip(x, low, high)
        return sum(w * (d.cdf(x) - d.cdf(low)) for w, d in zip(weights, parts, strict=True))

    return (lambda x: pdf(x) / mass), (lambda x: cdf(x) / mass)


def _truncated(dist, low, high):
    mass = dist.cdf(high) - dist.cdf(low)
    pdf = lambda x: np.where((x >= low) & (x <= high), dist.pdf(x) / mass, 0.0)  # noqa: E731
    cdf = lambda x: (dist.cdf(np.clip(x, low, high)) - dist.cdf(low)) / mass  # noqa: E731
    return pdf, cdf


CASES = {
    "uniform": (Uniform(-2.0, 3.0), stats.uniform(-2.0, 5.0).pdf, stats.uniform(-2.0, 5.0).cdf),
    "log_uniform": (
        LogUniform(1e-3, 1e2),
        stats.loguniform(1e-3, 1e2).pdf,
        stats.loguniform(1e-3, 1e2).cdf,
    ),
    "normal": (Normal(0.5, 0.2), stats.norm(0.5, 0.2).pdf, stats.norm(0.5, 0.2).cdf),
    "normal_truncated": (
        Normal(0.5, 0.4).truncated(0.0, 1.0),
        stats.truncnorm(-1.25, 1.25, loc=0.5, scale=0.4).pdf,
        stats.truncnorm(-1.25, 1.25, loc=0.5, scale=0.4).cdf,
    ),
    "normal_far_tail": (  # the tail branch of the inverse-CDF sampler
        Normal(0.0, 1.0, 5.0, 6.0),
        stats.truncnorm(5.0, 6.0).pdf,
        stats.truncnorm(5.0, 6.0).cdf,
    ),
    "log_normal": (
        LogNormal(-3.0, 1.5),
        stats.lognorm(s=1.5, scale=math.exp(-3.0)).pdf,
        stats.lognorm(s=1.5, scale=math.exp(-3.0)).cdf,
    ),
    "log_normal_truncated": (
        LogNormal(-3.0, 1.5).truncated(1e-5, 1.0),
        *_truncated(stats.lognorm(s=1.5, scale=math.exp(-3.0)), 1e-5, 1.0),
    ),
    "mixture": (
        GaussianMixture((0.3, 0.7), (0.1, 0.6), (0.05, 0.2)),
        *_mixture_reference((0.3, 0.7), (0.1, 0.6), (0.05, 0.2)),
    ),
    "mixture_truncated": (
        GaussianMixture((0.2, 0.5, 0.3), (-1.0, 0.3, 2.0), (0.5, 0.1, 1.0)).truncated(0.0, 1.0),
        *_mixture_reference((0.2, 0.5, 0.3), (-1.0, 0.3, 2.0), (0.5, 0.1, 1.0), 0.0, 1.0),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_density_and_cdf_match_scipy(case: str) -> None:
    prior, pdf, cdf = CASES[case]
    low = prior.low if math.isfinite(prior.low) else -3.0
    high = prior.high if math.isfinite(prior.high) else 3.0
    x = np.concatenate([np.linspace(low, high, 101)[1:-1], [low - 1.0, high + 1.0]])
    if isinstance(prior, LogUniform | LogNormal):
        x = x[x > 0] if prior.low > 0 else np.geomspace(1e-6, 10.0, 101)
    np.testing.assert_allclose(prior.pdf(x), pdf(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(prior.cdf(x), cdf(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(prior.logpdf(x[prior.pdf(x) > 0]), np.log(pdf(x[pdf(x) > 0])))


@pytest.mark.parametrize("case", sorted(CASES))
def test_samples_follow_scipy_by_kolmogorov_smirnov(case: str) -> None:
    prior, _, cdf = CASES[case]
    draws = prior.sample(np.random.default_rng(20140), 4000)
    assert draws.shape == (4000,) and np.all((draws >= prior.low) & (draws <= prior.high))
    assert stats.kstest(draws, cdf).pvalue > KS_ALPHA


def test_categorical_weights_follow_eq_3_1() -> None:
    prior = CategoricalWeights(("linear", "poly", "rbf", "sigmoid"), (0.1, 0.2, 0.6, 0.1))
    assert prior.pmf("rbf") == 0.6
    counts = np.bincount(prior.sample_index(np.random.default_rng(3), 20000), minlength=4)
    assert stats.chisquare(counts, 20000 * np.array(prior.weights)).pvalue > KS_ALPHA
    zero = CategoricalWeights(("a", "b"), (0.0, 1.0))
    assert set(zero.sample_index(np.random.default_rng(0), 1000).tolist()) == {1}


# seed003 declares priors; the CASH spaces are built from Auto-WEKA's component library
PLAIN_SPACES = [n for n in space_choices() if n != "seed003" and not is_cash(space_config(n))]


@pytest.mark.parametrize("name", PLAIN_SPACES)
def test_a_space_without_priors_samples_exactly_as_before(name: str) -> None:
    prior_space = prior_space_from_config(space_config(name))
    assert prior_space.space == load_space(name) and not prior_space.priors
    batch = prior_space.sample_batch(np.random.default_rng(11), 100)
    rng = np.random.default_rng(11)
    assert batch == [load_space(name).sample(rng) for _ in range(100)]


def _tree() -> PriorSpace:
    return prior_space_from_config(yaml.safe_load(TREE.read_text()))


def test_the_same_hyperparameter_has_its_own_prior_under_each_signature() -> None:
    """svm__gamma: uniform under poly, log-normal under sigmoid, log-uniform under rbf (the
    contexts of Fig. 5.3); each context's draws follow its own prior."""
    tree = _tree()
    configs = tree.sample_batch(np.random.default_rng(7), 60000)
    by_kernel: dict[str, list[float]] = {"poly": [], "rbf": [], "sigmoid": []}
    for c in configs:
        if "svm__gamma" in c:
            by_kernel[str(c["svm__kernel"])].append(float(c["svm__gamma"]))
    expected = {
        "poly": stats.uniform(1e-5, 1.0 - 1e-5).cdf,
        "rbf": stats.loguniform(1e-5, 1.0).cdf,
        "sigmoid": _truncated(stats.lognorm(s=1.5, scale=math.exp(-3.0)), 1e-5, 1.0)[1],
    }
    for kernel, draws in by_kernel.items():
        assert len(draws) > 200
        assert stats.kstest(draws, expected[kernel]).pvalue > KS_ALPHA, kernel
    assert tree.prior_of("svm__gamma", {"svm__kernel": "poly"}) == Uniform(1e-5, 1.0)
    kernels = Counter(str(c["svm__kernel"]) for c in configs if "svm__kernel" in c)
    weights = np.array([0.2, 0.2, 0.4, 0.2]) * sum(kernels.values())
    observed = [kernels[k] for k in ("linear", "poly", "rbf", "sigmoid")]
    assert stats.chisquare(observed, weights).pvalue > KS_ALPHA


def test_an_integer_leaf_gets_the_mass_of_its_unit_bin() -> None:
    tree = _tree()
    counts = Counter(
        int(c["knn__n_neighbors"])
        for c in tree.sample_batch(np.random.default_rng(5), 60000)
        if "knn__n_neighbors" in c
    )
    masses = np.array([math.exp(tree.log_density({"knn__n_neighbors": k})) for k in range(1, 51)])
    assert masses.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(masses, np.diff(np.log(np.arange(0.5, 51.0))) / math.log(101))
    observed = [counts[k] for k in range(1, 51)]
    assert stats.chisquare(observed, masses * sum(observed)).pvalue > KS_ALPHA


def test_sampled_configurations_are_valid_and_have_a_density() -> None:
    tree = _tree()
    space = tree.space
    learners = set()
    for config in tree.sample_batch(np.random.default_rng(2), 1000):
        for p in space.parameters:
            assert (p.name in config) == space.is_active(p, config), (p.name, config)
        assert space.decode(space.encode(config)) == pytest.approx(config)
        assert math.isfinite(tree.log_density(config))
        learners.add(space.learner_of(config))
    assert len(learners) == 17
    assert (
        tree.sample(np.random.default_rng(2)) == tree.sample_batch(np.random.default_rng(2), 1)[0]
    )


def test_virtual_hyperparameters_guide_sampling_and_never_reach_the_learner() -> None:
    tree = _tree()
    assert tree.virtual == {"limit_depth", "shrink_centroids"}
    configs = [c for c in tree.sample_batch(np.random.default_rng(1), 5000) if "limit_depth" in c]
    assert {("random_forest__max_depth" in c) for c in configs if c["limit_depth"] == "False"} == {
        False
    }
    limited = [c for c in configs if c["limit_depth"] == "True"]
    assert limited and all(any(k.endswith("__max_depth") for k in c) for c in limited)
    config = limited[0]
    learner = tree.space.learner_of(config)
    with pytest.raises(PriorError, match=f"'limit_depth' reaches learner '{learner}'"):
        tree.check_learner_config(learner, config)
    stripped = tree.learner_config(config)
    assert "limit_depth" not in stripped and stripped.items() <= config.items()
    tree.check_learner_config(learner, stripped)


def test_a_prior_file_round_trips_and_replaces_the_spaces_priors() -> None:
    tree = _tree()
    plain = PriorSpace(tree.space, {}, tree.virtual)
    assert with_priors(plain, yaml.safe_load(yaml.safe_dump(prior_file(tree)))) == tree
    learned = {
        "space": "seed003",
        "priors": {
            "svm__gamma": [
                {"when": {"svm__kernel": "sigmoid"}, "dist": "mixture", "weights": [0.6, 0.4],
                 "mu": [0.02, 0.3], "sigma": [0.02, 0.2]},
            ]
        },
    }  # fmt: skip
    updated = with_priors(tree, learned)
    assert updated.prior_of("svm__gamma", {"svm__kernel": "poly"}) is None  # replaced, not added
    assert isinstance(updated.prior_of("svm__gamma", {"svm__kernel": "sigmoid"}), GaussianMixture)


BASE = {
    "name": "toy",
    "learner": {"choice": "model"},
    "parameters": {
        "model": {"type": "categorical", "choices": ["svm", "tree"]},
        "kernel": {
            "type": "categorical",
            "choices": ["poly", "rbf"],
            "condition": {"model": "svm"},
        },
        "gamma": {"type": "real", "low": 1.0e-5, "high": 1.0, "condition": {"model": "svm"}},
        "depth": {"type": "integer", "low": 1, "high": 10, "condition": {"model": "tree"}},
    },
}


def _with(parameter: str, **extra: object) -> dict:
    config = copy.deepcopy(BASE)
    config["parameters"][parameter].update(extra)
    return config


BAD = [
    (_with("gamma", prior={"dist": "normal", "mu": 0.5, "sigma": 0}), "sigma=0 must be > 0"),
    (_with("gamma", prior={"dist": "normal", "mu": 0.5, "sigma": -1}), "sigma=-1 must be > 0"),
    (
        _with(
            "gamma", prior={"dist": "mixture", "weights": [0.5, 0.4], "mu": [0, 1], "sigma": [1, 1]}
        ),
        "weights sum to 0.9, they must sum to 1",
    ),  # fmt: skip
    (_with("gamma", prior={"dist": "uniform", "low": 0.9, "high": 0.1}), "bounds reversed"),
    (_with("gamma", prior={"dist": "uniform", "low": 0.0, "high": 2.0}), "exceeds the parameter"),
    (
        _with("gamma", prior={"dist": "gamma"}),
        "unknown dist 'gamma'; valid choices: uniform, log_uniform, normal",
    ),
    (_with("gamma", prior={"dist": "normal", "mu": 0.5}), "normal needs 'sigma'"),
    (_with("gamma", prior={"dist": "normal", "mu": 9e9, "sigma": 1}), "puts no mass in"),
    (
        _with("gamma", prior={"dist": "uniform", "when": {"model": "tree"}}),
        "'gamma' is never active when model is tree; valid choices: svm",
    ),
    (
        _with("gamma", prior={"dist": "uniform", "when": {"kernel": "linear"}}),
        "context value 'linear' is not a choice of 'kernel'; valid choices: poly, rbf",
    ),
    (
        _with("kernel", prior={"dist": "categorical", "weights": {"poly": 0.5, "lin": 0.5}}),
        "weight on 'lin', not a choice; valid choices: poly, rbf",
    ),
    (_with("gamma", prior={"dist": "categorical", "weights": {"a": 1}}), "need a categorical"),
    (
        _with("depth", prior={"dist": "uniform", "when": {"kernel": "poly"}}),
        "context 'kernel' is not set whenever 'depth' is; valid choices: model",
    ),
    (_with("gamma", virtual=True), "virtual hyperparameter 'gamma' must be categorical"),
    (_with("kernel", virtual="maybe"), "parameter 'kernel': virtual must be true or false, got"),
    (
        _with("gamma", prior={"dist": "uniform", "when": {"model": []}}),
        "when 'model' must list values, got []",
    ),
    (
        _with("gamma", prior={"dist": "uniform", "when": {"model": 3}}),
        "when 'model' must list values, got 3",
    ),
    (_with("model", virtual=True), "'model' is the learner choice and would reach the learner"),
]


@pytest.mark.parametrize(("config", "message"), BAD)
def test_bad_priors_are_one_line_errors_naming_the_value(config: dict, message: str) -> None:
    with pytest.raises(PriorError, match=re.escape(message)) as caught:
        prior_space_from_config(config)
    assert str(caught.value).startswith("space 'toy': ") and "\n" not in str(caught.value)


def test_a_prior_on_a_hyperparameter_the_learners_lack_names_the_valid_ones() -> None:
    space = prior_space_from_config(BASE)
    with pytest.raises(PriorError, match=r"prior on 'coef0', a hyperparameter the space's learn"):
        with_priors(space, {"priors": {"coef0": {"dist": "uniform"}}})
    with pytest.raises(PriorError, match="valid choices: model, kernel, gamma, depth"):
        with_priors(space, {"priors": {"coef0": {"dist": "uniform"}}})


def test_virtual_may_be_written_as_text_as_yaml_files_and_overrides_do() -> None:
    assert prior_space_from_config(_with("kernel", virtual="True")).virtual == {"kernel"}
    assert prior_space_from_config(_with("kernel", virtual="false")).virtual == frozenset()


@pytest.mark.parametrize(
    ("prior_file", "message"),
    [
        (
            {"priors": {}, "extra": 1},
            "a prior file has the keys space, priors; got ['priors', 'extra']",
        ),
        ({"priors": [1]}, "priors must be a mapping of parameter names, got [1]"),
    ],
)
def test_a_malformed_prior_file_is_one_line_naming_what_is_wrong(prior_file, message) -> None:
    with pytest.raises(PriorError, match=re.escape(message)):
        with_priors(prior_space_from_config(BASE), prior_file)


def test_a_virtual_hyperparameter_named_for_a_learner_is_refused() -> None:
    config = copy.deepcopy(BASE)
    config["parameters"]["svm__switch"] = {
        "type": "categorical",
        "choices": ["True", "False"],
        "virtual": True,
        "condition": {"model": "svm"},
    }
    with pytest.raises(PriorError, match="'svm__switch' names a learner's parameter .'svm'."):
        prior_space_from_config(config)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Normal(0.0, 0.0), "sigma=0.0 must be > 0"),
        (lambda: LogNormal(0.0, -1.0), "sigma=-1.0 must be > 0"),
        (lambda: Uniform(1.0, 0.0), "bounds reversed"),
        (lambda: LogUniform(0.0, 1.0), "needs 0 < low < high"),
        (lambda: GaussianMixture((0.5, 0.6), (0, 1), (1, 1)), "weights sum to 1.1"),
        (lambda: GaussianMixture((1.5, -0.5), (0, 1), (1, 1)), "weight -0.5 must be >= 0"),
        (lambda: CategoricalWeights(("a", "b"), (0.2, 0.2)), "weights sum to 0.4"),
        (lambda: LogUniform(1e-3, 0.1).truncated(1.0, 2.0), "log_uniform: support [0.001, 0.1]"),
        (lambda: Uniform(0.0, 0.5).truncated(1.0, 2.0), "uniform: support [0.0, 0.5] does not"),
        (lambda: Normal(0.0, 1.0).truncated(0, 1).truncated(2, 3), "normal: support [0, 1]"),
        (
            lambda: GaussianMixture((0.5, 0.5), (0, 1), (1, 1)).truncated(0, 1).truncated(2, 3),
            "mixture: support [0, 1] does not meet the parameter's range [2, 3]",
        ),
    ],
)
def test_bad_prior_objects_are_refused(make, message: str) -> None:
    with pytest.raises(PriorError, match=re.escape(message)):
        make()


def test_a_context_may_name_a_sibling_categorical_as_fig_5_3_does() -> None:
    """gamma's prior per (kernel, shrinking) signature: shrinking is not gamma's parent but is set
    whenever gamma is."""
    learned = {
        "priors": {
            "svm__gamma": [
                {"when": {"svm__kernel": "sigmoid", "svm__shrinking": True}, "dist": "normal",
                 "mu": 0.05, "sigma": 0.01},
                {"dist": "uniform"},
            ]
        }
    }  # fmt: skip
    tree = with_priors(_tree(), learned)
    draws = [
        float(c["svm__gamma"])
        for c in tree.sample_batch(np.random.default_rng(8), 40000)
        if c.get("svm__kernel") == "sigmoid" and c.get("svm__shrinking") == "True"
    ]
    assert len(draws) > 100
    expected = stats.truncnorm((1e-5 - 0.05) / 0.01, (1.0 - 0.05) / 0.01, loc=0.05, scale=0.01)
    assert stats.kstest(draws, expected.cdf).pvalue > KS_ALPHA
    other = {"svm__kernel": "sigmoid", "svm__shrinking": "False"}
    assert tree.prior_of("svm__gamma", other) == Uniform(1e-5, 1.0)


@pytest.mark.parametrize("low, high", [(7.0, 30.0), (-30.0, -7.0)])
def test_a_normal_truncated_far_in_a_tail_samples_its_truncated_law(
    low: float, high: float
) -> None:
    """The inverse CDF is taken on the tail's own side: from the other side, the interval's mass
    (1 − Φ(7) ≈ 1.3e-12, near the smallest a prior may keep) is a difference of numbers near 1,
    which leaves about 10⁴ representable draws, and 4000 draws would repeat values."""
    prior = GaussianMixture((1.0,), (0.0,), (1.0,), low, high)
    draws = prior.sample(np.random.default_rng(0), 4000)
    assert len(np.unique(draws)) == 4000
    law = stats.truncnorm(low, high)
    assert draws.mean() == pytest.approx(law.mean(), abs=0.01)
    assert draws.std() == pytest.approx(law.std(), rel=0.05)


def test_the_uniform_density_holds_on_the_closed_interval() -> None:
    """eq. 3.2: 1 / (b − a) on [a, b], both ends included (a clipped draw can sit on either)."""
    assert Uniform(0.0, 2.0).pdf(np.array([0.0, 2.0])).tolist() == [0.5, 0.5]


def test_a_log_uniform_truncated_inside_its_support_keeps_its_law_on_the_intersection() -> None:
    assert LogUniform(1e-3, 1.0).truncated(1e-2, 10.0) == LogUniform(1e-2, 1.0)
