"""A property of seed 002's batched trainer (``hpo/learners/batched_network.py``) and of the single
network's checkpoints, over networks drawn from the seed spaces' priors rather than hand-picked.

Each draw is a group: a subject drawn from the prior of ``conf/space/ffnn_mnist.yaml`` or
``ffnn_mrbi.yaml`` (learning rates below :data:`LR_HIGH`), partners drawn from the same prior
with its depth and activations (so that they share its batched group, at other widths, rates,
decays, dropouts, initialisations and seeds), and sometimes a stranger drawn freely (another group
of the same call); the learner's settings (every field of
:class:`~hpo.learners.network_settings.NetworkSettings`) drawn per group or per member from
small values (:func:`_draw_group`). In float64 on the CPU:

1. the group trained batched (:func:`fit_together`) ends each member within :data:`TOLERANCE` of
   training it alone: weights, per-epoch validation errors, best epoch and error, epochs trained
   and run, early stopping;
2. training E1 epochs into a checkpoint and resuming to E2 gives exactly (bit for bit) the single
   network trained to E2 at once, and the batched trainer resuming its group from its own
   checkpoints ends within :data:`TOLERANCE` of it (Hyperband's rungs resume so).

What is restricted, and why: learning rates to log U(1e-3, 1), not the spaces' log U(1e-3, 10)
(above about 1 training can be chaotic, and the batched kernels' other rounding grows into other
weights: ``docs/surrogates-hyperband.md``, "Chaotic networks"); the data to 64-96 training rows of
scikit-learn's digits, one class with a single row (so that a holdout sometimes holds out a whole
class); ``max_epochs`` to 2-4 and ``patience`` to 1, 2 or the space's 20; batch sizes to the
space's 32, 16 and 7; ``threads`` to 1 (:data:`THREADS`); widths mapped log-linearly from the
space's U(18, 1024) onto 2-16 units (:func:`_narrow`: the same quantile of the range, so narrow
and wide draws stay narrow and wide; the default suite's cost), except in the slow draw's part
at the drawn widths. Below rate 1 a network can still amplify rounding (near the edge of
stability: one in about 700 members drawn, at rate 0.68 with heavy dropout, moved 8e-10 in two
epochs when its own initial weights moved one ulp); such a member passes within
:data:`NOISE_FACTOR` times that measured noise (:func:`_assert_same`).

The coverage test asserts that every kind of every learner setting of the seed spaces
(:func:`_required`: each categorical choice, each third of each numeric range, each depth,
dropout 0 and above 0 at the input and hidden layers, each setting's kinds in
:data:`SETTING_KINDS`, the trainer's cases in :data:`TRAINER_KINDS`) occurs in the default draw,
and lists them (``-s``).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from experiments.configuration.spaces import space_config  # noqa: E402
from hpo.learners import FitGuard, make_estimator  # noqa: E402
from hpo.learners.batched_network import fit_together  # noqa: E402
from hpo.learners.network_settings import (  # noqa: E402
    DECAY_STEPS,
    MAX_HIDDEN_LAYERS,
    NetworkSettings,
)
from hpo.learners.torch_network import FeedForwardNetwork, Network, _holdout  # noqa: E402
from hpo.space.prior_files import prior_space_from_config  # noqa: E402
from hpo.space.priors import PriorSpace  # noqa: E402
from hpo.space.search_space import Categorical, Integer, Real  # noqa: E402

SPACES = ("ffnn_mnist", "ffnn_mrbi")
TOLERANCE = 1e-10  # largest |difference| of a weight, float64 (tests/test_batched_network.py)
LR_HIGH = 1.0  # learning rates drawn below this: above it training can be chaotic
NOISE_FACTOR = 10  # a chaotic member's gap, at most this times its own one-ulp gap (_assert_same)
UNITS = (2, 16)  # the narrowed widths (_narrow)
DRAWS = 20  # groups per space in the default suite
DRAWS_SLOW = 120  # groups per space under -m slow, and DRAWS_WIDE more at the drawn widths
DRAWS_WIDE = 12
SEED = 20_260_411

# what a group draws from: training rows of the digits, batch sizes (None: the space's 32, a
# short last batch or whole batches by the rows), threads, holdout fractions; per member the
# epoch cap, patience (None: the space's 20), the decrease that counts, restoring the best epoch
TRAIN_ROWS = (64, 75, 96)
VALID_ROWS = 40
RARE = 9  # the class with a single training row (digits)
BATCH_SIZES = (None, 16, 7)
# one thread: a second split a kernel, not the schedule, and on a loaded 2-core machine took an
# update of a 16-unit network from 0.13 ms to 27 ms (measured)
THREADS = (1,)
HOLDOUT_FRACTIONS = (0.2, 0.3)
MAX_EPOCHS = (2, 3, 4)
PATIENCE = (1, 2, None)
MIN_DELTAS = (0.0, 0.05)

# The kinds of each learner setting a draw must exercise; keyed by every field of
# NetworkSettings (a new field fails test_every_learner_setting_of_the_seed_spaces_is_drawn until
# it has kinds here and the draws cover them). ``device``'s kinds are the spaces' values (the
# GPU is tests/test_gpu.py's); ``threads``' only THREADS.
SETTING_KINDS: dict[str, tuple[str, ...]] = {
    "max_epochs": ("trained to the cap", "a target below the cap"),
    "patience": ("stopped early", "not stopped"),
    "min_delta": ("0", "> 0"),
    "batch_size": ("a short last batch", "whole batches"),
    "decay_step": DECAY_STEPS,
    "restore_best": ("true", "false"),
    "holdout_fraction": ("rows held out", "a validation set", "a class only in held-out rows"),
    "threads": tuple(str(t) for t in THREADS),
}
# the trainer's own cases the draws must reach
TRAINER_KINDS = (
    ("group", "padded"),
    ("group", "several in one call"),
    ("group", "members leave at different epochs"),
    ("group", "width buckets on"),
    ("group", "width buckets off"),
)
# the space parameters the learner reads (hpo/learners/ffnn.py); another fails the coverage test
KNOWN_PARAMETER = re.compile(
    r"learning_rate|decay|input_dropout|(units|activation|init|dropout)_[1-9]|layer_[2-9]"
)
THIRDS = ("lower third", "middle third", "upper third")


@dataclass
class Draw:
    """One drawn group: each member's configuration as the prior drew it (``drawn``) and as the
    learner gets it (``configs``: widths narrowed, the space's settings overridden by the drawn
    ones), seeds and epoch targets (None: to ``max_epochs``); the group's training rows,
    whether a validation set is given (else each member holds out rows), width buckets."""

    space: str
    drawn: list[dict]
    configs: list[dict]
    seeds: list[int]
    epochs: list[int | None]
    rows: int
    validation: bool
    width_buckets: bool

    def networks(self) -> list[FeedForwardNetwork]:
        """The members, unfitted, in float64."""
        nets = []
        for config, seed in zip(self.configs, self.seeds, strict=True):
            net = make_estimator("ffnn", config, FitGuard(), seed=seed)
            net.dtype = "float64"
            nets.append(net)
        return nets

    def describe(self, i: int | None = None) -> str:
        """The draw (or member ``i``) in one line, for a failure's message."""
        members = range(len(self.configs)) if i is None else [i]
        return "; ".join(
            f"{self.space} rows={self.rows} validation={self.validation} "
            f"buckets={self.width_buckets} seed={self.seeds[j]} epochs={self.epochs[j]} "
            f"{self.configs[j]}"
            for j in members
        )


@cache
def _prior(space: str) -> PriorSpace:
    """``space``'s prior with learning rates below :data:`LR_HIGH` (the module docstring)."""
    config = copy.deepcopy(space_config(space))
    rate = config["parameters"]["learning_rate"]
    rate["high"] = min(float(rate["high"]), LR_HIGH)
    return prior_space_from_config(config)


def _narrow(parameter: Integer, units: int) -> int:
    """A width drawn from ``parameter``'s range at the same quantile of :data:`UNITS`, log-linear
    (18 -> 2, 1024 -> 16)."""
    low, high = (math.log2(u) for u in UNITS)
    return round(2.0 ** (low + parameter.to_unit(units) * (high - low)))


def _key(config: Mapping) -> tuple:
    """What a configuration shares with the members of its batched group: depth, activations."""
    prefix = ("activation_", "layer_")
    return tuple(sorted((k, v) for k, v in config.items() if k.startswith(prefix)))


def _draw_group(rng: np.random.Generator, space: str, index: int, wide: bool = False) -> Draw:
    """Group ``index`` of ``space`` (module docstring): decay step and validation set in turn,
    the rest drawn; ``wide`` keeps the drawn widths."""
    prior = _prior(space)
    parameters = {p.name: p for p in prior.space.parameters}
    subject = prior.sample(rng)
    wanted, partners = int(rng.integers(1, 4)), []
    while len(partners) < wanted:
        partners += [c for c in prior.sample_batch(rng, 32) if _key(c) == _key(subject)]
    drawn = [subject, *partners[:wanted]]
    if rng.random() < 0.5:
        drawn.append(prior.sample(rng))  # a stranger: most often another group
    settings = dict(space_config(space).get("settings", {}))
    rows = int(rng.choice(TRAIN_ROWS))
    batch = BATCH_SIZES[int(rng.integers(len(BATCH_SIZES)))]
    group = {
        "decay_step": DECAY_STEPS[index % len(DECAY_STEPS)],
        "batch_size": settings["batch_size"] if batch is None else batch,
        "threads": int(rng.choice(THREADS)),
        "holdout_fraction": float(rng.choice(HOLDOUT_FRACTIONS)),
    }
    configs, epochs = [], []
    for values in drawn:
        config = dict(values)
        if not wide:
            for name, value in values.items():
                if name.startswith("units_"):
                    config[name] = _narrow(parameters[name], int(value))
        patience = PATIENCE[int(rng.integers(len(PATIENCE)))]
        member = {
            "max_epochs": int(rng.choice(MAX_EPOCHS)),
            "patience": settings["patience"] if patience is None else patience,
            "min_delta": float(rng.choice(MIN_DELTAS)),
            "restore_best": str(bool(rng.integers(2))).lower(),
        }
        configs.append({**settings, **group, **member, **config})
        below = int(rng.integers(1, member["max_epochs"]))
        epochs.append(None if rng.random() < 0.5 else below)
    return Draw(
        space=space,
        drawn=drawn,
        configs=configs,
        seeds=[int(s) for s in rng.integers(0, 2**31, len(drawn))],
        epochs=epochs,
        rows=rows,
        validation=(index // len(DECAY_STEPS)) % 2 == 0,
        width_buckets=bool(rng.integers(2)),
    )


def _draws(count: int, seed: int, wide: int = 0) -> list[Draw]:
    """``count`` groups per seed space (and ``wide`` more at the drawn widths), seeded."""
    rng = np.random.default_rng(seed)
    return [
        _draw_group(rng, space, i, wide=i >= count) for space in SPACES for i in range(count + wide)
    ]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, ...]:
    """scikit-learn's digits scaled to [0, 1]: the training pool, in which class :data:`RARE` has
    one row (among the first 64), so that a member's holdout sometimes holds out a whole class;
    then the validation rows."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    top = max(TRAIN_ROWS)
    first_rare = int(np.flatnonzero(y == RARE)[0])
    pool = [i for i in range(len(y)) if y[i] != RARE or i == first_rare][:top]
    assert first_rare < min(TRAIN_ROWS) and pool[-1] < len(y) - VALID_ROWS
    valid = slice(len(y) - VALID_ROWS, len(y))
    return X[pool] / 16.0, y[pool], X[valid] / 16.0, y[valid]


def _data(draw: Draw, digits) -> tuple:
    X, y, Xv, yv = digits
    return X[: draw.rows], y[: draw.rows], (Xv, yv) if draw.validation else None


def _weights(net: FeedForwardNetwork) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in net.model_.parameters()]


def _gap(a: FeedForwardNetwork, b: FeedForwardNetwork) -> float:
    """The largest |difference| of a weight of ``a`` and ``b`` (inf where shapes differ)."""
    pairs = zip(_weights(a), _weights(b), strict=True)
    return max(float(np.abs(wa - wb).max()) if wa.shape == wb.shape else math.inf
               for wa, wb in pairs)  # fmt: skip


@contextlib.contextmanager
def _one_ulp_up() -> Iterator[None]:
    """Every network built meanwhile starts with each weight one ulp (2**-52 relative) larger."""
    initialise = Network.initialise

    def nudged(self: Network, generator: torch.Generator) -> None:
        initialise(self, generator)
        with torch.no_grad():
            for p in self.parameters():
                p.mul_(1.0 + 2.0**-52)

    with mock.patch.object(Network, "initialise", nudged):
        yield


def _assert_same(
    trained: Trained, i: int, other: FeedForwardNetwork, what: str, atol: float = TOLERANCE
) -> None:
    """``other`` ends as member ``i`` trained alone: weights within ``atol``, the same per-epoch
    errors, best epoch and error, epochs trained, early stopping.

    Float noise: past ``atol`` (a nonzero one), member ``i`` is trained alone again from weights
    one ulp larger (:func:`_one_ulp_up`); where that alone moves it by more than
    ``atol / NOISE_FACTOR`` the network amplifies rounding (lr·curvature near the edge of
    stability, e.g. at rate 0.68 with heavy dropout), and ``other`` passes within
    ``NOISE_FACTOR`` times that, its errors as the nudged run's or its own."""
    alone, draw = trained.alone[i], trained.draw
    shapes = [[w.shape for w in _weights(net)] for net in (alone, other)]
    assert shapes[0] == shapes[1], f"weight shapes {shapes[1]}, alone {shapes[0]}: {what}"
    gap = _gap(alone, other)
    errors = [alone.errors_]
    if gap > atol > 0:
        X, y, validation = _data(draw, trained.digits)
        with _one_ulp_up():
            nudged = draw.networks()[i].fit(X, y, validation, draw.epochs[i])
        noise = _gap(alone, nudged)
        errors.append(nudged.errors_)
        assert noise > atol / NOISE_FACTOR and gap <= NOISE_FACTOR * noise, (
            f"weights {gap:.3g} apart (tolerance {atol:g}; one ulp up moves them {noise:.3g}): "
            f"{what}"
        )
    else:
        assert gap <= atol, f"weights {gap:.3g} apart (tolerance {atol:g}): {what}"
    assert other.errors_ in errors, what
    assert (other.best_epoch_, other.best_error_) == (alone.best_epoch_, alone.best_error_), what
    assert (other.epochs_trained_, other.stopped_early_) == (
        alone.epochs_trained_, alone.stopped_early_), what  # fmt: skip


@dataclass
class Trained:
    """A draw trained alone and batched: the networks, the batched trainer's groups, the
    data."""

    draw: Draw
    alone: list[FeedForwardNetwork]
    batched: list[FeedForwardNetwork]
    groups: list
    digits: tuple


def _train(draw: Draw, digits) -> Trained:
    X, y, validation = _data(draw, digits)
    alone = [
        net.fit(X, y, validation, e) for net, e in zip(draw.networks(), draw.epochs, strict=True)
    ]
    batched = draw.networks()
    groups = fit_together(batched, X, y, validation, draw.epochs, width_buckets=draw.width_buckets)
    return Trained(draw, alone, batched, groups, digits)


def check_batched_equals_alone(trained: Trained) -> None:
    """Property 1: every member of the batched group ends as training it alone."""
    for i, (a, b) in enumerate(zip(trained.alone, trained.batched, strict=True)):
        what = f"batched against alone: {trained.draw.describe(i)}"
        _assert_same(trained, i, b, what)
        assert b.epochs_run_ == a.epochs_run_, what


def check_resume(trained: Trained, rng: np.random.Generator, folder: Path) -> None:
    """Property 2: for each member, E1 epochs into a checkpoint, then resumed to its own E2
    (its target), equals training E2 at once (the alone network), bit for bit; and the group
    resumed batched from its checkpoints (at E1, saved batched) ends within TOLERANCE."""
    draw = trained.draw
    X, y, validation = _data(draw, trained.digits)
    targets = [a.settings.max_epochs if e is None else e for a, e in zip(
        trained.alone, draw.epochs, strict=True)]  # fmt: skip
    firsts = [int(rng.integers(1, max(2, t))) for t in targets]
    folder.mkdir(parents=True, exist_ok=True)
    for i, (a, e1, e2) in enumerate(zip(trained.alone, firsts, draw.epochs, strict=True)):
        what = f"resumed from E1={e1}: {draw.describe(i)}"
        path = folder / f"single{i}.pt"
        first = draw.networks()[i].fit(X, y, validation, e1, path)
        resumed = draw.networks()[i].fit(X, y, validation, e2, path)
        _assert_same(trained, i, resumed, what, atol=0.0)
        assert resumed.epochs_run_ == a.epochs_trained_ - first.epochs_trained_, what
    paths = [folder / f"batched{i}.pt" for i in range(len(firsts))]
    fit_together(draw.networks(), X, y, validation, firsts, paths, draw.width_buckets)
    resumed = draw.networks()
    fit_together(resumed, X, y, validation, draw.epochs, paths, draw.width_buckets)
    for i, b in enumerate(resumed):
        _assert_same(trained, i, b, f"batched, resumed from E1={firsts[i]}: {draw.describe(i)}")


def _training_rows(draw: Draw, i: int, digits) -> tuple[int, bool]:
    """Member ``i``'s training rows: how many, and whether a class of the draw's training labels
    lies only in the rows it holds out."""
    y = digits[1][: draw.rows]
    if draw.validation:
        return draw.rows, False
    fraction = float(draw.configs[i]["holdout_fraction"])
    rows, _ = _holdout(draw.rows, fraction, draw.seeds[i])
    return len(rows), len(np.unique(y[rows])) < len(np.unique(y))


def _kinds(trained: Trained) -> set[tuple[str, str]]:
    """The (setting, kind) pairs a trained draw exercised (module docstring)."""
    draw = trained.draw
    parameters = {p.name: p for p in _prior(draw.space).space.parameters}
    kinds = set()
    for i, (values, net, alone, epochs) in enumerate(
        zip(draw.drawn, trained.batched, trained.alone, draw.epochs, strict=True)
    ):
        for name, value in values.items():
            kinds.add(_parameter_kind(parameters[name], value))
        kinds.add(("depth", str(len(net.layers))))
        kinds.add(("input dropout", "> 0" if net.input_dropout > 0 else "0"))
        kinds.update(("hidden dropout", "> 0" if x.dropout > 0 else "0") for x in net.layers)
        s = net.settings
        capped = epochs is None and alone.epochs_trained_ == s.max_epochs
        if capped or epochs is not None and epochs < s.max_epochs:
            kinds.add(("max_epochs", SETTING_KINDS["max_epochs"][0 if capped else 1]))
        kinds.add(("patience", "stopped early" if alone.stopped_early_ else "not stopped"))
        kinds.add(("min_delta", "> 0" if s.min_delta > 0 else "0"))
        rows, class_held_out = _training_rows(draw, i, trained.digits)
        kinds.add(("batch_size", "a short last batch" if rows % s.batch_size else "whole batches"))
        kinds.add(("decay_step", s.decay_step))
        kinds.add(("restore_best", str(s.restore_best).lower()))
        kinds.add(("holdout_fraction", "a validation set" if draw.validation else "rows held out"))
        if class_held_out:
            kinds.add(("holdout_fraction", "a class only in held-out rows"))
        kinds.add(("device", s.device))
        kinds.add(("threads", str(s.threads)))
    for group in trained.groups:
        if group.padded:
            kinds.add(("group", "padded"))
        if len({m.state["epoch"] for m in group.members}) > 1:
            kinds.add(("group", "members leave at different epochs"))
    if len(trained.groups) > 1:
        kinds.add(("group", "several in one call"))
    kinds.add(("group", f"width buckets {'on' if draw.width_buckets else 'off'}"))
    return kinds


def _parameter_kind(p: Real | Integer | Categorical, value) -> tuple[str, str]:
    """A categorical's choice, or which third of its range a numeric value lies in."""
    if isinstance(p, Categorical):
        return p.name, str(value)
    return p.name, THIRDS[min(2, int(p.to_unit(value) * 3))]


def _required() -> set[tuple[str, str]]:
    """Every kind of every learner setting of the seed spaces: derived from the space files
    (each categorical's choices, each numeric parameter's thirds, the depths and dropouts they
    allow, the devices they set) and :data:`SETTING_KINDS` (each field of NetworkSettings)."""
    fields = {f.name for f in dataclasses.fields(NetworkSettings)}
    required = set(TRAINER_KINDS)
    devices = set()
    for space in SPACES:
        parameters = _prior(space).space.parameters
        names = {p.name for p in parameters}
        unknown = sorted(n for n in names if not KNOWN_PARAMETER.fullmatch(n))
        assert not unknown, f"{space}: no coverage rule for parameter(s) {unknown}"
        for p in parameters:
            kinds = p.choices if isinstance(p, Categorical) else THIRDS
            required.update((p.name, str(k)) for k in kinds)
        settings = space_config(space).get("settings", {})
        assert set(settings) <= fields, f"{space}: settings {sorted(set(settings) - fields)}"
        devices.add(str(settings.get("device", NetworkSettings().device)))
        depth = 1 + sum(f"layer_{k}" in names for k in range(2, MAX_HIDDEN_LAYERS + 1))
        required.update(("depth", str(d)) for d in range(1, depth + 1))
        for where, dropouts in (
            ("input dropout", ["input_dropout"]),
            ("hidden dropout", [f"dropout_{k}" for k in range(1, depth + 1)]),
        ):
            present = [d in names for d in dropouts]
            required.update([(where, "> 0")] if any(present) else [])
            required.update([(where, "0")] if not all(present) else [])
    missing = sorted(fields - set(SETTING_KINDS) - {"device"})
    assert not missing, f"learner settings without kinds in SETTING_KINDS: {missing}"
    required.update((name, kind) for name, kinds in SETTING_KINDS.items() for kind in kinds)
    required.update(("device", d) for d in devices)
    return required


@dataclass
class Outcome:
    """What a run of both properties over some draws found: the kinds exercised, and one line
    per draw that broke a property (the draw's configuration in it)."""

    exercised: set[tuple[str, str]]
    broken: list[str]

    def assert_holds(self) -> None:
        if self.broken:
            shown = "\n".join(self.broken[:5])
            pytest.fail(f"{len(self.broken)} draw(s) broke a property:\n{shown}")


def _run(draws: list[Draw], digits, folder: Path) -> Outcome:
    """Both properties over ``draws``, every draw checked even after one breaks."""
    rng = np.random.default_rng(SEED + 1)
    outcome = Outcome(set(), [])
    for n, draw in enumerate(draws):
        trained = _train(draw, digits)
        try:
            check_batched_equals_alone(trained)
            check_resume(trained, rng, folder / str(n))
        except AssertionError as error:
            outcome.broken.append(f"draw {n}: {error}".splitlines()[0])
        outcome.exercised |= _kinds(trained)
    return outcome


@pytest.fixture(scope="module")
def default_draw(digits, tmp_path_factory) -> Outcome:
    """Both properties over the default draw (:data:`DRAWS` groups per space)."""
    return _run(_draws(DRAWS, SEED), digits, tmp_path_factory.mktemp("checkpoints"))


def test_drawn_groups_end_batched_as_alone_and_resume_as_trained_at_once(default_draw) -> None:
    """Properties 1 and 2 (module docstring) hold for every draw."""
    default_draw.assert_holds()


def test_every_learner_setting_of_the_seed_spaces_is_drawn(default_draw) -> None:
    """The coverage assertion: the kinds exercised are every kind the spaces allow (listed with
    ``-s``)."""
    required = _required()
    listing = "\n".join(f"  {name}: {kind}" for name, kind in sorted(required))
    print(f"every kind exercised ({len(required)}):\n{listing}")
    assert sorted(required - default_draw.exercised) == [], "kinds never drawn"
    assert sorted(default_draw.exercised - required) == [], "kinds without a rule in _required"


@pytest.mark.slow
def test_a_larger_draw_holds_too(digits, tmp_path) -> None:
    """Both properties over :data:`DRAWS_SLOW` groups per space at narrowed widths and
    :data:`DRAWS_WIDE` at the widths the prior drew (up to 1,024 units), another seed."""
    outcome = _run(_draws(DRAWS_SLOW, SEED + 2, DRAWS_WIDE), digits, tmp_path)
    outcome.assert_holds()
    assert sorted(_required() - outcome.exercised) == []
