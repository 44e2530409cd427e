"""TPE through hyperopt (hpo/optimizers/tpe.py): the seed's settings (hyperopt's defaults, one
initial random point), the space conversion with conditionals, seeded proposals, and a run."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

hyperopt = pytest.importorskip("hyperopt")

from experiments.configuration.spaces import load_space  # noqa: E402
from hpo.optimizers import make_optimizer, setting_names  # noqa: E402
from hpo.optimizers.tpe import TPEOptimizer, configuration, hyperopt_space  # noqa: E402
from hpo.space.search_space import Categorical, Condition, Integer, Real, Space  # noqa: E402


def _loop(optimizer: TPEOptimizer, objective, n: int) -> list[dict]:
    configs = []
    for _ in range(n):
        proposal = optimizer.ask()
        configs.append(dict(proposal.config))
        optimizer.tell(proposal, objective(proposal.config))
    return configs


def test_the_settings_are_hyperopts_defaults_but_one_start_point() -> None:
    from hyperopt import tpe

    defaults = {
        name: p.default
        for name, p in inspect.signature(tpe.suggest).parameters.items()
        if p.default is not inspect.Parameter.empty and name != "verbose"
    }
    optimizer = make_optimizer("tpe", load_space("ffnn_mnist"), 10, np.random.default_rng(0))
    assert set(setting_names("tpe")) == set(defaults)
    assert optimizer.settings == {**defaults, "n_startup_jobs": 1}  # §2.1.2.1
    assert (defaults["gamma"], defaults["n_EI_candidates"], defaults["prior_weight"]) == (
        0.25,
        24,
        1.0,
    )  # Bergstra et al. 2011, as the notes' B2.4(b) states them


def test_one_start_point_then_tpe_models_the_losses() -> None:
    """With one random start, the second proposal already comes from l(x)/g(x): on a loss that
    is low for small learning rates, TPE's proposals move there, random search's do not."""
    space = load_space("ffnn_mnist")

    def objective(config) -> float:
        return float(np.log10(config["learning_rate"]))

    optimizer = TPEOptimizer(space, 40, np.random.default_rng(1))
    rates = [c["learning_rate"] for c in _loop(optimizer, objective, 40)]
    assert np.median(np.log10(rates[20:])) < -1.5  # the prior's median is -1


def test_proposals_are_seeded() -> None:
    space = load_space("ffnn_mrbi")
    runs = [
        _loop(TPEOptimizer(space, 8, np.random.default_rng(seed)), lambda c: c["decay"], 8)
        for seed in (3, 3, 4)
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_conditional_spaces_are_trees_and_configs_hold_only_active_parameters() -> None:
    space = load_space("ffnn_mrbi")
    optimizer = TPEOptimizer(space, 60, np.random.default_rng(0))
    configs = _loop(optimizer, lambda c: c["learning_rate"], 60)
    layers = [1 + ("units_2" in c) + ("units_3" in c) for c in configs]
    assert set(layers) == {1, 2, 3}
    for config in configs:
        assert set(config) == set(space.decode(space.encode(config)))  # exactly the active ones
        assert 18 <= config["units_1"] <= 1024 and isinstance(config["units_1"], int)
        assert ("layer_3" in config) == (config["layer_2"] == "True")


def test_a_parameter_several_values_activate_gets_one_node_per_value() -> None:
    space = Space(
        "shared",
        (
            Categorical("kernel", ("rbf", "poly", "linear")),
            Real("gamma", 1e-3, 1.0, log=True, condition=Condition("kernel", ("rbf", "poly"))),
            Integer("degree", 2, 5, condition=Condition("kernel", ("poly",))),
        ),
    )
    converted = hyperopt_space(space)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        sample = hyperopt.pyll.stochastic.sample(converted, rng=rng)
        config = configuration(space, sample)
        seen.add(tuple(sorted(config)))
        assert set(config) == set(space.decode(space.encode(config)))
        if "degree" in config:
            assert config["degree"] in (2, 3, 4, 5)
    assert seen == {("gamma", "kernel"), ("degree", "gamma", "kernel"), ("kernel",)}


def test_plain_integers_keep_equal_bins() -> None:
    space = Space("ints", (Integer("n", 1, 4),))
    converted = hyperopt_space(space)
    rng = np.random.default_rng(0)
    values = [
        configuration(space, hyperopt.pyll.stochastic.sample(converted, rng=rng))["n"]
        for _ in range(4000)
    ]
    np.testing.assert_allclose(np.bincount(values, minlength=5)[1:] / 4000, 0.25, atol=0.03)


def test_tpe_runs_by_name_on_the_mnist_stand_in() -> None:
    pytest.importorskip("torch")
    from experiments.configuration.spaces import space_config
    from experiments.configuration.spec import RunSpec
    from experiments.run.runner import run

    space = {**space_config("ffnn_mnist"), "settings": {"max_epochs": 3}}
    spec = RunSpec.of(
        dataset="sklearn-digits",
        optimizer="tpe",
        rules={"tpe": "best_validation"},
        space=space,
        budget=3,
        optimizer_settings={"n_startup_jobs": 1},
    )
    result = run(spec)
    assert len(result.trace) == 3 and result.trace["failure"].isna().all()
    assert (result.trace["resource_spent"] <= 3).all()  # the network reports its epochs


def test_the_startup_shortcut_proposes_what_tpe_suggest_does() -> None:
    """During its start-up trials ``tpe.suggest`` returns ``rand.suggest``'s proposal after
    building its posterior graph; the adapter calls ``rand.suggest`` directly: same proposals."""

    class Unshortened(TPEOptimizer):
        def _startup_or_tpe(self, trials):
            return self._suggest

    space = load_space("ffnn_mrbi")
    runs = [
        _loop(cls(space, 12, np.random.default_rng(5), n_startup_jobs=6), lambda c: c["decay"], 10)
        for cls in (TPEOptimizer, Unshortened)
    ]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("shared_nodes", [False, True])
def test_configurations_from_labels_equal_space_eval_s(shared_nodes) -> None:
    """The adapter reads a proposal's configuration from hyperopt's labels; hyperopt's own
    ``space_eval`` of the tree gives the same (one node per parent value, or shared nodes)."""
    from hyperopt import space_eval

    class Optimizer(TPEOptimizer):
        pass

    Optimizer.shared_nodes = shared_nodes
    space = load_space("ffnn_mrbi")
    optimizer = Optimizer(space, 40, np.random.default_rng(1), n_startup_jobs=5)
    for _ in range(30):
        proposal = optimizer.ask()
        doc = optimizer._pending[-1][1]
        point = {k: v[0] for k, v in doc["misc"]["vals"].items() if v}
        sample = space_eval(hyperopt_space(space, shared_nodes), point)
        assert proposal.config == configuration(space, sample)
        optimizer.tell(proposal, float(proposal.config["decay"]))


@pytest.mark.parametrize("shared_nodes", [False, True])
def test_one_compiled_posterior_graph_proposes_what_a_graph_per_call_does(shared_nodes) -> None:
    """The adapter builds hyperopt's posterior graph once and reuses it; hyperopt rebuilds it
    on every ``tpe.suggest``: the same proposals over a run past the start-up trials, on a
    conditional space (with shared nodes too, as seed 004's CASH tree), and hyperopt's own
    ``build_posterior_wrapper`` is back after each call."""
    from hyperopt import tpe

    own = tpe.build_posterior_wrapper

    class Optimizer(TPEOptimizer):
        pass

    class GraphPerCall(Optimizer):
        def _suggest_on_one_graph(self, suggest, *arguments):
            return suggest(*arguments)

    Optimizer.shared_nodes = shared_nodes
    space = load_space("ffnn_mrbi")
    runs = [
        _loop(cls(space, 40, np.random.default_rng(7), n_startup_jobs=3), lambda c: c["decay"], 30)
        for cls in (Optimizer, GraphPerCall)
    ]
    assert runs[0] == runs[1]
    assert tpe.build_posterior_wrapper is own


def test_the_cash_tree_proposes_what_hyperopts_own_suggest_does() -> None:
    """On seed 004's CASH tree (264 parameters, shared nodes, 11,644 posterior nodes) the adapter
    runs hyperopt's graphs as compiled programs (hpo/optimizers/backends/pyll_program.py) on one
    posterior graph; hyperopt's own ``rand.suggest`` and ``tpe.suggest`` (``rec_eval``, a graph
    per call) propose the same configurations, start-up and TPE proposals alike, and
    ``pyll.rec_eval`` and ``tpe.miscs_to_idxs_vals`` are hyperopt's own again after each call."""
    from hyperopt import pyll, tpe

    from experiments.configuration.spaces import load_cash_library
    from hpo.cash.space import build_cash_space
    from hpo.optimizers.cash_tpe import SharedNodeTPE

    own, own_columns = pyll.rec_eval, tpe.miscs_to_idxs_vals

    class HyperoptsOwn(SharedNodeTPE):
        def _suggest_on_one_graph(self, suggest, *arguments):
            return suggest(*arguments)

    cash = build_cash_space(load_cash_library(), "classification", nonnegative_inputs=True)
    losses = {name: 0.1 + 0.01 * i for i, name in enumerate(cash.learners)}
    runs = [
        _loop(
            cls(cash.space, 20, np.random.default_rng(3), n_startup_jobs=4),
            lambda c: losses[c["learner"]] + 0.001 * len(c),
            12,
        )
        for cls in (SharedNodeTPE, HyperoptsOwn)
    ]
    assert runs[0] == runs[1]
    assert pyll.rec_eval is own and tpe.miscs_to_idxs_vals is own_columns


def test_a_compiled_program_returns_what_rec_eval_does_draw_for_draw() -> None:
    """A stochastic graph with shared nodes and a node returning a graph: the program, called
    twice with generators of one seed, gives ``rec_eval``'s values each time."""
    from hyperopt import hp, pyll
    from hyperopt.pyll import scope

    from hpo.optimizers.backends.pyll_program import compile_graph

    rng_node = pyll.Literal()
    x = scope.uniform(0, 1, rng=rng_node)
    y = scope.randint_via_categorical([0.2, 0.3, 0.5], rng=rng_node, size=(4,))
    graph = pyll.as_apply({"x": x, "y": y, "z": scope.normal(x, 1, rng=rng_node), "w": x * 2})
    program = compile_graph(graph, [rng_node])
    assert program is not None
    for _ in range(2):
        want = pyll.rec_eval(graph, memo={rng_node: np.random.default_rng(11)})
        got = program({rng_node: np.random.default_rng(11)})
        assert got["x"] == want["x"] and got["z"] == want["z"] and got["w"] == want["w"]
        assert list(got["y"]) == list(want["y"])
    assert compile_graph(hp.choice("c", [1, 2]), []) is None  # a lazy switch: rec_eval's


def test_optimizers_of_one_space_share_its_graphs_and_propose_as_alone() -> None:
    """The second optimizer of a space reuses the first one's domain, posterior graph and
    programs (hyperopt_graphs); a run after another run proposes what it proposes first."""
    space = load_space("ffnn_mrbi")

    def run(seed: int) -> list[dict]:
        return _loop(
            TPEOptimizer(space, 30, np.random.default_rng(seed), n_startup_jobs=3),
            lambda c: c["decay"],
            12,
        )

    first = run(4)
    run(5)
    assert run(4) == first
    a = TPEOptimizer(space, 3, np.random.default_rng(0))
    b = TPEOptimizer(space, 3, np.random.default_rng(1))
    assert a._graphs is b._graphs and a._graphs.programs and a._graphs.posteriors


def test_observed_columns_are_hyperopts_as_trials_grow_or_change() -> None:
    """ObservedColumns (hyperopt's ``miscs_to_idxs_vals`` kept up to date) gives hyperopt's own
    columns after trials are added, and again after a call whose trials are not the last call's
    plus new ones (then it rebuilds)."""
    from hyperopt.base import miscs_to_idxs_vals

    from hpo.optimizers.tpe import ObservedColumns

    def misc(tid: int, active: bool) -> dict:
        return {
            "tid": tid,
            "idxs": {"a": [tid], "b": [tid] if active else []},
            "vals": {"a": [0.1 * tid], "b": [tid % 3] if active else []},
        }

    miscs = [misc(t, t % 2 == 0) for t in range(6)]
    columns = ObservedColumns()
    for seen in ([], miscs[:2], miscs[:5], miscs, miscs[:3], miscs[1:], [misc(9, True)] + miscs):
        assert columns(seen, ["a", "b"]) == (
            miscs_to_idxs_vals(seen, keys=["a", "b"]) if seen else ({"a": [], "b": []},) * 2
        )


def test_split_trials_returns_hyperopts_arrays() -> None:
    """SplitTrials (hyperopt's ``ap_split_trials`` with the losses' split done once per
    proposal) returns hyperopt's arrays: values, order and dtype, an empty side included, for
    integer and real labels, as the losses change between calls."""
    from hyperopt.tpe import ap_split_trials

    from hpo.optimizers.tpe import SplitTrials

    rng = np.random.default_rng(0)
    split = SplitTrials()
    for n in (1, 4, 30, 90):
        tids = tuple(range(n))
        losses = list(rng.random(n))
        for kind in ("int", "real", "none"):
            active = [t for t in tids if rng.random() < 0.6] if kind != "none" else []
            values = [
                int(rng.integers(5)) if kind == "int" else float(rng.random()) for _ in active
            ]
            for gamma in (0.25, 1.0):
                want = ap_split_trials(active, values, tids, losses, gamma)
                got = split(active, values, tids, losses, gamma)
                for a, b in zip(want, got, strict=True):
                    assert a.dtype == b.dtype and a.tolist() == b.tolist()
    # one trial, active, an integer label: the other side is empty (float64, as hyperopt's)
    want = ap_split_trials([0], [3], (0,), [0.5], 0.25)
    got = split([0], [3], (0,), [0.5], 0.25)
    assert [a.dtype for a in got] == [a.dtype for a in want] == [np.int64, np.float64]


def test_a_graph_the_programs_cannot_compile_is_run_by_hyperopts_own_rec_eval() -> None:
    """A graph with a lazy ``switch`` (which ``compile_graph`` leaves alone) met during a
    suggest is evaluated by ``pyll.rec_eval`` itself, with its value."""
    from hyperopt import pyll
    from hyperopt.pyll import scope

    optimizer = TPEOptimizer(load_space("svm_rbf"), 5, np.random.default_rng(0))
    graph = pyll.as_apply({"picked": scope.switch(1, "first", "second"), "n": scope.len([1, 2])})
    evaluated = optimizer._suggest_on_one_graph(lambda: pyll.rec_eval(graph))
    assert evaluated == {"picked": "second", "n": 2}
