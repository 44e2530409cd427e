"""Seed 002's networks trained as one batched model (hpo/learners/batched_network.py): on the CPU
in float64 each member ends as training it alone with the same seed (final weights within
TOLERANCE, the same per-epoch validation errors, best and early-stopping epochs), its padding is
exactly 0, permuting the members permutes the results, checkpoints pass between the two
trainers, and Hyperband promotes the same configurations batched and sequential, as a library
(float64) and in a run with ``batch_networks`` on (float32); runs of BOHB and random search
give the same traces with it on (their rungs, or batches of ``batch_networks_size``, asked
ahead), and the batch size is part of a run's identity only where it can change the run."""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from experiments.configuration.spaces import load_space  # noqa: E402
from hpo.learners import FitGuard, make_estimator  # noqa: E402
from hpo.learners.batched_network import fit_together  # noqa: E402
from hpo.learners.network_settings import HiddenLayer, NetworkSettings  # noqa: E402
from hpo.learners.torch_network import FeedForwardNetwork  # noqa: E402
from hpo.optimizers.hyperband import Hyperband  # noqa: E402

pd_testing = pytest.importorskip("pandas.testing")

torch.set_num_threads(1)
TOLERANCE = 1e-10  # largest |difference| of a weight, float64 (measured: below 1e-15)
TOLERANCE_32 = 1e-5  # the same in float32, the learner's dtype (measured: below 1e-6)

# (seed, hidden units, activation, learning rate, decay, dropout, input dropout): two depths, both
# activations, widths that pad, different rates and decays, dropout in some members only
MEMBERS = [
    (1, (20,), "tanh", 0.05, 1e-2, 0.0, 0.0),
    (2, (7,), "tanh", 0.5, 1e-3, 0.2, 0.1),
    (3, (13,), "tanh", 0.01, 0.0, 0.0, 0.0),
    (4, (20, 9), "sigmoid", 0.3, 1e-2, 0.3, 0.0),
    (5, (5, 11), "sigmoid", 2.0, 1e-4, 0.0, 0.2),
    (6, (11, 4), "sigmoid", 0.1, 1e-1, 0.1, 0.1),
]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, ...]:
    """A small slice of scikit-learn's digits: 200 training and 100 validation rows."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return X[:200], y[:200], X[200:300], y[200:300]


def _network(member: tuple, dtype: str = "float64", **settings) -> FeedForwardNetwork:
    seed, units, activation, lr, decay, dropout, input_dropout = member
    values = {"max_epochs": 8, "patience": 2, **settings}
    init = "uniform" if seed % 2 else "normal"
    layers = tuple(HiddenLayer(u, activation, init, dropout) for u in units)
    return FeedForwardNetwork(
        layers, lr, decay, input_dropout, NetworkSettings(**values), seed, dtype=dtype
    )


def _weights(net: FeedForwardNetwork) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in net.model_.parameters()]


def _assert_same(a: FeedForwardNetwork, b: FeedForwardNetwork, resumed: bool = False) -> None:
    """The same weights (within TOLERANCE), per-epoch errors, best and stopping epochs; the
    same epochs run unless one of the two was ``resumed`` from a checkpoint."""
    for wa, wb in zip(_weights(a), _weights(b), strict=True):
        assert wa.shape == wb.shape
        np.testing.assert_allclose(wa, wb, rtol=0, atol=TOLERANCE)
    assert a.errors_ == b.errors_
    assert (a.best_epoch_, a.best_error_) == (b.best_epoch_, b.best_error_)
    assert a.epochs_trained_ == b.epochs_trained_
    assert a.stopped_early_ == b.stopped_early_
    assert resumed or a.epochs_run_ == b.epochs_run_


@pytest.mark.parametrize("held_out", [False, True], ids=["validation set", "holdout per seed"])
def test_each_member_ends_as_training_it_alone(digits, held_out: bool) -> None:
    X, y, Xv, yv = digits
    validation = None if held_out else (Xv, yv)
    alone = [_network(m).fit(X, y, validation) for m in MEMBERS]
    batched = [_network(m) for m in MEMBERS]
    fit_together(batched, X, y, validation, width_buckets=False)
    for a, b in zip(alone, batched, strict=True):
        _assert_same(a, b)
    assert any(n.stopped_early_ for n in alone)  # and at different epochs: the batch shrinks
    assert len({n.epochs_trained_ for n in alone}) > 1
    np.testing.assert_array_equal(batched[1].predict(Xv), alone[1].predict(Xv))


def test_in_float32_each_member_ends_near_training_it_alone(digits) -> None:
    X, y, Xv, yv = digits
    alone = [_network(m, "float32").fit(X, y, (Xv, yv)) for m in MEMBERS]
    batched = [_network(m, "float32") for m in MEMBERS]
    fit_together(batched, X, y, (Xv, yv))
    for a, b in zip(alone, batched, strict=True):
        assert a.epochs_trained_ == b.epochs_trained_
        for wa, wb in zip(_weights(a), _weights(b), strict=True):
            assert wa.dtype == wb.dtype == np.float32
            np.testing.assert_allclose(wa, wb, rtol=0, atol=TOLERANCE_32)


def test_width_buckets_split_a_group_where_padding_would_double_a_layer(digits) -> None:
    X, y, Xv, yv = digits
    nets = [
        _network((s, (w,), "tanh", 0.05, 0.0, 0.0, 0.0)) for s, w in enumerate([20, 30, 13, 40])
    ]
    groups = fit_together(nets, X, y, (Xv, yv), epochs=1)
    widths = sorted(sorted(m.widths for m in g.members) for g in groups)
    assert widths == [[[13]], [[20], [30]], [[40]]]  # (8, 16], (16, 32], (32, 64]
    assert [len(g.members) for g in fit_together(nets, X, y, (Xv, yv), 1, width_buckets=False)] == [
        4
    ]


def test_one_epochs_and_one_checkpoint_per_network_or_one_line(digits) -> None:
    X, y, Xv, yv = digits
    nets = [_network(m) for m in MEMBERS[:2]]
    with pytest.raises(ValueError, match=r"one epochs and one checkpoint per network \(2\)"):
        fit_together(nets, X, y, (Xv, yv), epochs=[1, 2, 3])
    fit_together(nets, X, y, (Xv, yv), epochs=np.array([1, 2]))
    assert [n.epochs_trained_ for n in nets] == [1, 2]


def test_padding_stays_exactly_zero(digits) -> None:
    X, y, Xv, yv = digits
    groups = fit_together([_network(m) for m in MEMBERS], X, y, (Xv, yv), width_buckets=False)
    assert [len(g.members) for g in groups] == [3, 3]  # tanh one layer; sigmoid two layers
    padded = 0
    for group in groups:
        for weights, mask in zip(group.weights, group.weight_masks, strict=True):
            assert torch.count_nonzero(weights[~mask]) == 0
            padded += int((~mask).sum())
    assert padded > 0


def test_permuting_the_members_permutes_the_results(digits) -> None:
    X, y, Xv, yv = digits
    order = [4, 0, 5, 2, 1, 3]
    first = [_network(m) for m in MEMBERS]
    fit_together(first, X, y, (Xv, yv), width_buckets=False)
    permuted = [_network(MEMBERS[i]) for i in order]
    fit_together(permuted, X, y, (Xv, yv), width_buckets=False)
    for net, i in zip(permuted, order, strict=True):
        _assert_same(net, first[i])


def test_checkpoints_pass_between_the_batched_and_the_single_trainer(digits, tmp_path) -> None:
    X, y, Xv, yv = digits
    members = [m for m in MEMBERS if len(m[1]) == 1]
    paths = [tmp_path / f"{m[0]}.pt" for m in members]
    settings = {"patience": 100, "restore_best": "false"}
    nets = [_network(m, **settings) for m in members]
    fit_together(nets, X, y, (Xv, yv), epochs=3, checkpoints=paths)  # batched, then alone
    resumed = [
        _network(m, **settings).fit(X, y, (Xv, yv), 6, p)
        for m, p in zip(members, paths, strict=True)
    ]
    at_once = [_network(m, **settings).fit(X, y, (Xv, yv), 6) for m in members]
    for a, b in zip(resumed, at_once, strict=True):
        assert a.epochs_run_ == 3
        _assert_same(a, b, resumed=True)
    batched = [_network(m, **settings) for m in members]  # alone to 6, then batched to 8
    fit_together(batched, X, y, (Xv, yv), epochs=[8, 7, 8], checkpoints=paths)
    for net, m, target in zip(batched, members, [8, 7, 8], strict=True):
        _assert_same(net, _network(m, **settings).fit(X, y, (Xv, yv), target), resumed=True)
        assert (net.epochs_run_, net.epochs_trained_) == (target - 6, target)


def _drive_hyperband(digits, tmp_path, batched: bool) -> list[tuple[bytes, float, float]]:
    """Hyperband (R = 4, η = 2, one epoch a unit) on ``ffnn_mrbi`` networks: each rung's
    configurations trained batched (one padded group per depth and activations: the most
    sharing) or one at a time, resumed from their checkpoints; returns
    (point, resource, loss) of every proposal."""
    X, y, Xv, yv = digits
    space = load_space("ffnn_mrbi")
    optimizer = Hyperband(space, 1000, np.random.default_rng(7), 4, 2, 1.0)
    seen = []
    while True:
        try:
            rung = [optimizer.ask()]
            while len(optimizer._asked) < len(optimizer._points):
                rung.append(optimizer.ask())
        except StopIteration:
            return seen
        nets, paths = [], []
        for proposal in rung:
            key = hashlib.sha256(proposal.u.tobytes()).hexdigest()[:16]
            config = {**space.decode(proposal.u), "patience": 2, "max_epochs": 4}
            net = make_estimator("ffnn", config, FitGuard(), seed=int(key[:6], 16))
            net.dtype = "float64"
            nets.append(net)
            paths.append(tmp_path / f"{key}.pt")
        epochs = [p.resource for p in rung]
        if batched:
            fit_together(nets, X, y, (Xv, yv), epochs, paths, width_buckets=False)
        else:
            for net, e, path in zip(nets, epochs, paths, strict=True):
                net.fit(X, y, (Xv, yv), e, path)
        for proposal, net in zip(rung, nets, strict=True):
            loss = float(np.mean(net.predict(Xv) != yv))
            optimizer.tell(proposal, loss)
            seen.append((proposal.u.tobytes(), proposal.resource, loss))


def test_hyperband_promotes_the_same_configurations_batched_and_sequential(
    digits, tmp_path
) -> None:
    sequential = _drive_hyperband(digits, tmp_path / "sequential", batched=False)
    batched = _drive_hyperband(digits, tmp_path / "batched", batched=True)
    assert len(sequential) == 4 + 2 + 1 + 3 + 1 + 3  # the plan of R = 4, η = 2
    assert batched == sequential
    assert len({loss for *_, loss in sequential}) > 3  # the losses do rank the configurations


def _network_space(name: str) -> dict:
    """Space ``name`` at 4 epochs with patience 2 and learning rates up to 1, not the space's
    10: above about 1 training can be chaotic, and the batched kernels' other rounding grow
    to other losses (docs/surrogates-hyperband.md)."""
    from experiments.configuration.spaces import space_config

    space = copy.deepcopy({**space_config(name), "settings": {"patience": 2, "max_epochs": 4}})
    space["parameters"]["learning_rate"]["high"] = 1.0
    return space


def _runs_both_ways(monkeypatch, spec_with) -> tuple[list[int], dict]:
    """The run ``spec_with(batch_networks)`` on sklearn-digits with batching off and on
    (float32, the learner's dtype); returns the sizes of the batched trainer's calls and
    each trace, timings left out."""
    from experiments.run.runner import run
    from hpo.data.catalog import load_dataset
    from hpo.learners import batched_network

    calls = []

    def counted(nets, *args, **kwargs):
        calls.append(len(nets))
        return fit_together(nets, *args, **kwargs)

    monkeypatch.setattr(batched_network, "fit_together", counted)
    data = load_dataset("sklearn-digits")
    traces = {}
    for setting in ("off", "on"):
        trace = run(spec_with(setting), data).trace
        timing = [c for c in trace.columns if "seconds" in c]
        traces[setting] = trace.drop(columns=timing)
    return calls, traces


def test_a_hyperband_run_is_the_same_with_its_rungs_batched(monkeypatch, plan_spec) -> None:
    """The pipeline (``batch_networks=on``): each rung's networks trained together on their
    fold into their checkpoints, then validated one by one; the same trace (losses, epochs
    spent, promotions), as training one network at a time."""
    space = _network_space("ffnn_mrbi")
    calls, traces = _runs_both_ways(
        monkeypatch, lambda setting: plan_spec("hyperband", space, batch_networks=setting)
    )
    assert calls == [4, 2, 3, 3]  # the rungs of more than one network: 4 @ 1, 2 @ 2, 3 @ 2, 3 @ 4
    pd_testing.assert_frame_equal(traces["on"], traces["off"])
    off = traces["off"]
    assert (off["resource_spent"] < off["resource"]).any()  # some stopped early


@pytest.mark.slow
def test_a_bohb_run_is_the_same_with_its_rungs_batched(monkeypatch, plan_spec) -> None:
    """BOHB's rungs are fixed before any of them is told (hpo/optimizers/bohb.py), so they are
    asked ahead and trained together too: the same trace (configurations, losses, epochs
    spent, promotions) (R = 8, eta = 2: 35 evaluations; the model fitted from 3 results on a
    budget)."""
    pytest.importorskip("smac")
    space, settings = _network_space("ffnn_mnist"), {"max_resource": 8, "min_points": 3}
    calls, traces = _runs_both_ways(
        monkeypatch, lambda setting: plan_spec("bohb", space, settings=settings,
                                               batch_networks=setting)
    )  # fmt: skip
    # the rungs of more than one network, bracket by bracket: 8 @ 1, 4 @ 2, 2 @ 4; 6 @ 2,
    # 3 @ 4; 4 @ 4, 2 @ 8; 4 @ 8
    assert calls == [8, 4, 2, 6, 3, 4, 2, 4]
    pd_testing.assert_frame_equal(traces["on"], traces["off"])
    off = traces["off"]
    assert len(off) == 35 and (off["resource_spent"] < off["resource"]).any()


def test_a_random_search_run_is_the_same_with_its_networks_batched(monkeypatch) -> None:
    """Random search's proposals never depend on what is told: with ``batch_networks`` the
    next ``batch_networks_size`` are asked ahead and trained together to the learner's full
    epochs, each with its own early stopping, and each validation resumes from that network:
    the same trace (losses, epochs spent), never past the budget (10 = 4 + 4 + 2)."""
    from experiments.configuration.spec import RunSpec

    space = _network_space("ffnn_mrbi")

    def spec_with(setting: str) -> RunSpec:
        return RunSpec.of("sklearn-digits", "rs", {"rs": "best_validation"}, space=space,
                       budget=10, batch_networks=setting, batch_networks_size=4)  # fmt: skip

    calls, traces = _runs_both_ways(monkeypatch, spec_with)
    assert calls == [4, 4, 2]
    pd_testing.assert_frame_equal(traces["on"], traces["off"])
    off = traces["off"]
    assert off["resource"].isna().all()  # full evaluations
    assert (off["resource_spent"] < 4).any() and (off["resource_spent"] == 4).any()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"batch_networks": "yes"}, r"unknown batch_networks 'yes'; valid choices: auto, off, on"),
        ({"batch_networks_size": 0}, r"batch_networks_size must be an integer >= 1, got 0"),
        ({"batch_networks_size": 2.5}, r"batch_networks_size must be an integer >= 1, got 2.5"),
    ],
)
def test_batch_networks_is_off_on_or_auto_and_its_size_a_count_in_one_line(
    setting: dict, message: str
) -> None:
    from experiments.configuration.spec import RunSpec

    with pytest.raises(ValueError, match=message):
        RunSpec.of(dataset="sklearn-iris", optimizer="rs", rules={"rs": "best_validation"},
                **setting)  # fmt: skip


def test_the_batch_size_enters_a_runs_identity_only_when_it_can_change_it() -> None:
    """Its default, or any size with batching off, leaves the identity as it was; another size
    with batching on is a run of its own."""
    from experiments.configuration.spec import RunSpec
    from experiments.run.results import config_hash

    def spec(**setting) -> RunSpec:
        return RunSpec.of("sklearn-iris", "rs", {"rs": "best_validation"}, **setting)

    plain = config_hash(spec())
    assert config_hash(spec(batch_networks_size=4)) == plain
    on = config_hash(spec(batch_networks="on"))
    assert config_hash(spec(batch_networks="on", batch_networks_size=16)) == on != plain
    assert config_hash(spec(batch_networks="on", batch_networks_size=4)) not in (on, plain)


def test_any_learner_that_declares_a_batch_trainer_is_trained_together(monkeypatch) -> None:
    """The evaluator asks for the capability, never for a learner's name: the network
    registered again under another name, with its batch trainer declared, is trained together
    as the ``ffnn`` learner is (the same calls, the same trace); without the declaration it is
    trained alone."""
    from experiments.configuration.spec import RunSpec
    from hpo.learners import registry

    space = {**_network_space("ffnn_mrbi"), "learner": "ffnn_again"}
    network = registry.LEARNERS["ffnn"]  # registered again under another name, for this test
    monkeypatch.setitem(registry.LEARNERS, "ffnn_again", network)

    def spec_with(setting: str) -> RunSpec:
        return RunSpec.of("sklearn-digits", "rs", {"rs": "best_validation"}, space=space,
                       budget=6, batch_networks=setting, batch_networks_size=3)  # fmt: skip

    calls, traces = _runs_both_ways(monkeypatch, spec_with)
    assert calls == [3, 3]
    pd_testing.assert_frame_equal(traces["on"], traces["off"])
    alone = dataclasses.replace(network, batch_trainer=None)
    monkeypatch.setitem(registry.LEARNERS, "ffnn_again", alone)
    assert _runs_both_ways(monkeypatch, spec_with)[0] == []


def test_the_evaluator_names_no_learner() -> None:
    """Speed-ups are capabilities a learner registers (``gram_parameter``, ``batch_trainer``):
    no registered learner's name appears in the evaluation package's code."""
    from pathlib import Path

    from hpo.learners import learner_names

    package = Path(__file__).resolve().parents[1] / "hpo" / "evaluation"
    for path in package.glob("*.py"):
        text = path.read_text()
        named = [name for name in learner_names() if f'"{name}"' in text or f"'{name}'" in text]
        assert not named, f"{path.name} names learners {named}"
