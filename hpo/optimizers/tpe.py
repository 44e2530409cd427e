"""TPE, the tree-structured Parzen estimator (Bergstra et al. 2011), through hyperopt: seed 002's
own implementation (Jůzlová 2018, §1.2.4.2 and §2.1.2.1: "Hyperopt (`tpe`)", hyperopt's
defaults, **one** initial random point). Needs the ``tpe`` extra (``hyperopt``).

Why hyperopt rather than Optuna's ``TPESampler`` with hyperopt's parameters: it is the code the
seed ran, so its quirks are the seed's (the correlated samples of §2.2.1.3 come from its
adaptive Parzen bandwidths and its one start point), and it samples conditional spaces as trees
natively; Optuna's sampler differs in details hyperopt's settings do not fix (its bandwidth
rule, its handling of conditional parameters, multivariate options).

Settings (hyperopt 0.3's ``tpe.suggest`` keywords): ``n_startup_jobs`` 1 (the seed's; hyperopt's
default is 20), ``gamma`` 0.25, ``n_EI_candidates`` 24, ``prior_weight`` 1.0 (hyperopt's
defaults, ``tests/test_tpe.py`` checks them against the installed hyperopt).

The space is converted in :func:`hyperopt_space`, in one place: a log real is
``hp.loguniform``, a real ``hp.uniform``, a log integer ``hp.qloguniform(q=1)`` (log-uniform,
rounded to the nearest integer, as Table 2.1's caption says), an integer ``hp.quniform`` over
``[low − ½, high + ½]`` (each value one equal bin, as :class:`hpo.space.search_space.Integer`), a
categorical
``hp.choice`` whose options carry the parameters it activates (hyperopt's tree), so a conditional
parameter exists only under its parent's value. A parameter that several values activate gets one
copy per value (labelled ``name|parent=value``), so each branch has its own Parzen estimator.
With ``shared_nodes`` (seed 004's CASH space, :mod:`hpo.optimizers.cash_tpe`) it is instead one node
referenced from each of those branches: TPE then fits one estimator to every configuration in
which the parameter was active (a meta-method's base learner under each of the six meta-methods,
an ensemble's slot i under every size >= i), and the space's labels are not multiplied fourfold.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from hpo.optimizers.backends.pyll_program import Program, compile_graph
from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Categorical, Integer, Parameter, Real, Space, Value

SEED_N_STARTUP_JOBS = 1  # §2.1.2.1 / §2.2.1.3: "only one initial random point"


def hyperopt_space(space: Space, shared_nodes: bool = False) -> dict[str, Any]:
    """``space`` as a hyperopt search space: a dict of the unconditional parameters' nodes (a
    parameter under several values of its parent: one node per value, or with ``shared_nodes``
    one node shared by those branches, see the module)."""
    made: dict[str, Any] | None = {} if shared_nodes else None
    return {p.name: _node(space, p, "", made) for p in space.parameters if p.condition is None}


def _children(space: Space, parent: str, value: str) -> list[Parameter]:
    return [
        p
        for p in space.parameters
        if p.condition is not None and p.condition.parent == parent and value in p.condition.values
    ]


def _node(space: Space, p: Parameter, suffix: str, made: dict[str, Any] | None) -> Any:
    """``p``'s hyperopt node; ``made`` (shared nodes) holds the nodes already built, by name."""
    if made is not None:
        if p.name not in made:
            made[p.name] = _build(space, p, suffix, made)
        return made[p.name]
    return _build(space, p, suffix, made)


def _build(space: Space, p: Parameter, suffix: str, made: dict[str, Any] | None) -> Any:
    from hyperopt import hp

    label = p.name + suffix
    if isinstance(p, Real):
        if p.log:
            return hp.loguniform(label, math.log(p.low), math.log(p.high))
        return hp.uniform(label, p.low, p.high)
    if isinstance(p, Integer):
        if p.log:
            return hp.qloguniform(label, math.log(p.low), math.log(p.high), 1)
        return hp.quniform(label, p.low - 0.5, p.high + 0.5, 1)
    options = []
    for value in p.choices:
        branch: dict[str, Any] = {p.name: value}
        for child in _children(space, p.name, value):
            shared = child.condition is not None and len(child.condition.values) > 1
            copied = shared and made is None
            child_suffix = f"{suffix}|{p.name}={value}" if copied else suffix
            branch[child.name] = _node(space, child, child_suffix, made)
        options.append(branch)
    return hp.choice(label, options)


def configuration(space: Space, sample: Mapping[str, Any]) -> dict[str, Value]:
    """The configuration of a hyperopt sample (nested branch dicts flattened), values typed and
    inside their parameter's range, in the space's order."""
    flat: dict[str, Any] = {}

    def flatten(node: Mapping[str, Any]) -> None:
        for key, value in node.items():
            if isinstance(value, Mapping):
                flatten(value)
            else:
                flat[key] = value

    flatten(sample)
    config: dict[str, Value] = {}
    for p in space.parameters:
        if p.name not in flat:
            continue
        value = flat[p.name]
        if isinstance(p, Real):
            config[p.name] = float(min(max(float(value), p.low), p.high))
        elif isinstance(p, Integer):
            config[p.name] = int(min(max(int(round(float(value))), p.low), p.high))
        else:
            config[p.name] = str(value)
    return config


class HyperoptGraphs:
    """hyperopt's domain of one space, its posterior graphs (by prior weight and gamma) and their
    compiled programs (:mod:`hpo.optimizers.backends.pyll_program`). Nothing in them changes when
    they are
    evaluated (each optimizer keeps its own trials and random generator), so the optimizers of one
    space in one process share them (:func:`hyperopt_graphs`): on seed 004's CASH tree, building
    them is 0.5 s per run, which a smoke run's 15-second TPE runs paid each time."""

    def __init__(self, space: Space, shared_nodes: bool) -> None:
        from hyperopt import Domain

        self.domain = Domain(lambda _: 0.0, hyperopt_space(space, shared_nodes))
        self.posteriors: dict[tuple[float, float], tuple] = {}
        self.programs: dict[tuple, tuple[Any, Program | None]] = {}  # by graph and bindings

    def posterior(self, build: Any, prior_weight: float, gamma: float) -> tuple:
        """hyperopt's posterior graph for these settings: ``build(domain, prior_weight, gamma)``
        (its ``build_posterior_wrapper``) on first use."""
        if (prior_weight, gamma) not in self.posteriors:
            self.posteriors[prior_weight, gamma] = build(self.domain, prior_weight, gamma)
        return self.posteriors[prior_weight, gamma]

    def program(self, expr: Any, memo: Mapping[Any, Any]) -> Program | None:
        """The compiled program of ``expr`` (one of these graphs, which the programs keep alive)
        with ``memo``'s nodes bound, compiled on first use."""
        key = (id(expr), frozenset(id(node) for node in memo))
        if key not in self.programs:
            self.programs[key] = (
                expr,
                compile_graph(expr, memo, {"ap_split_trials": SplitTrials()}),
            )
        return self.programs[key][1]


class SplitTrials:
    """hyperopt's ``tpe.ap_split_trials`` (0.3.0): a label's observed values split into those of
    the ``ceil(gamma * sqrt(n))`` best trials (at most ``gamma_cap``) and those of the rest, in
    observation order. The posterior graph calls it once per label (257 on seed 004's CASH tree)
    with the same trial ids and losses, whose split hyperopt recomputes each time: a seventh of
    TPE's time after 70 proposals. This splits them once per proposal (``tpe.suggest`` builds
    the ids and losses afresh for each proposal and never changes them: the last ones are held,
    so that an id cannot be reused, and compared by identity) and loops over Python numbers
    instead of numpy scalars. The arrays are hyperopt's: values, order and dtype, an empty
    side ``np.asarray([])``. The optimizers of a space share it with its program; what it keeps
    is only that cache."""

    def __init__(self) -> None:
        from hyperopt.tpe import DEFAULT_LF  # ap_split_trials' default gamma_cap

        self._default_cap = DEFAULT_LF
        self._last: tuple = ()

    def __call__(
        self,
        o_idxs: Any,
        o_vals: Any,
        l_idxs: Any,
        l_vals: Any,
        gamma: float,
        gamma_cap: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        cap = self._default_cap if gamma_cap is None else gamma_cap
        below_ids, above_ids = self._split(l_idxs, l_vals, gamma, cap)
        o_vals = np.asarray(o_vals)
        observed = list(zip(np.asarray(o_idxs).tolist(), o_vals.tolist(), strict=False))
        return _values_of(observed, below_ids, o_vals.dtype), _values_of(
            observed, above_ids, o_vals.dtype
        )

    def _split(self, l_idxs: Any, l_vals: Any, gamma: float, gamma_cap: int) -> tuple[set, set]:
        last = self._last
        if (
            not last
            or last[0] is not l_idxs
            or last[1] is not l_vals
            or last[2:4] != (gamma, gamma_cap)
        ):
            ids, losses = np.asarray(l_idxs), np.asarray(l_vals)
            n_below = min(int(np.ceil(gamma * np.sqrt(len(losses)))), gamma_cap)
            # hyperopt's own split sorts with NumPy's default argsort, whose order among equal
            # losses depends on the CPU's SIMD sort; the earlier trial goes first on every CPU.
            order = np.argsort(losses, kind="stable")
            split = (set(ids[order[:n_below]].tolist()), set(ids[order[n_below:]].tolist()))
            self._last = (l_idxs, l_vals, gamma, gamma_cap, split)
        return self._last[4]


def _values_of(observed: list[tuple], trials: set, dtype: np.dtype) -> np.ndarray:
    values = [v for i, v in observed if i in trials]
    return np.asarray(values, dtype=dtype) if values else np.asarray([])


class ObservedColumns:
    """hyperopt's ``miscs_to_idxs_vals(miscs, keys)`` (base.py: each label's trial ids and
    values over the observed trials, TPE's observations) kept up to date instead of rebuilt:
    ``tpe.suggest`` passes the same trials plus the new ones on every call, and rebuilding the
    columns walks every trial times every label (257 on seed 004's CASH tree): a sixth of TPE's
    time after 70 proposals. A call whose trials are not the last call's plus new ones at the
    end (compared by identity) rebuilds them; the values are hyperopt's either way."""

    def __init__(self) -> None:
        self._keys: list[str] = []
        self._seen: list[Any] = []
        self._idxs: dict[str, list] = {}
        self._vals: dict[str, list] = {}

    def __call__(self, miscs: list[Any], keys: list[str]) -> tuple[dict, dict]:
        grown = len(miscs) >= len(self._seen) and all(map(operator.is_, self._seen, miscs))
        if keys != self._keys or not grown:
            self._keys, self._seen = list(keys), []
            self._idxs, self._vals = {k: [] for k in keys}, {k: [] for k in keys}
        for misc in miscs[len(self._seen) :]:
            for key in self._keys:
                idxs, vals = misc["idxs"][key], misc["vals"][key]
                assert len(idxs) == len(vals)  # hyperopt's own checks
                assert idxs == [] or idxs == [misc["tid"]]
                self._idxs[key].extend(idxs)
                self._vals[key].extend(vals)
            self._seen.append(misc)
        return self._idxs, self._vals


@functools.lru_cache(maxsize=8)
def hyperopt_graphs(space: Space, shared_nodes: bool) -> HyperoptGraphs:
    """The :class:`HyperoptGraphs` of ``space``, built on first use in this process."""
    return HyperoptGraphs(space, shared_nodes)


class TPEOptimizer(Optimizer):
    """hyperopt's TPE behind ask/tell: proposals are configurations (only active parameters)."""

    # hyperopt_space's; the CASH subclass (hpo/optimizers/cash_tpe.py) shares them
    shared_nodes = False

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        n_startup_jobs: int = SEED_N_STARTUP_JOBS,
        gamma: float = 0.25,
        n_EI_candidates: int = 24,  # noqa: N803 (hyperopt's keyword)
        prior_weight: float = 1.0,
    ) -> None:
        super().__init__(space, budget, rng)
        try:
            from hyperopt import Trials, tpe
        except ImportError:
            raise ValueError(
                "optimizer 'tpe' needs hyperopt, which is not installed: pip install "
                "'hyperopt==0.3.0' (the tpe extra)"
            ) from None
        if n_startup_jobs < 1:
            raise ValueError(f"tpe n_startup_jobs must be >= 1, got {n_startup_jobs}")
        if not 0.0 < gamma < 1.0:
            raise ValueError(f"tpe gamma must be in (0, 1), got {gamma}")
        self.settings = {
            "n_startup_jobs": int(n_startup_jobs),
            "gamma": float(gamma),
            "n_EI_candidates": int(n_EI_candidates),
            "prior_weight": float(prior_weight),
        }
        self._suggest = partial(self._suggest_on_one_graph, partial(tpe.suggest, **self.settings))
        self._graphs = hyperopt_graphs(space, self.shared_nodes)
        self._parameters = {p.name: p for p in space.parameters}
        self._trials = Trials()
        self._observed = ObservedColumns()
        self._pending: list[tuple[Proposal, dict[str, Any]]] = []

    def point_configuration(self, point: Mapping[str, Any]) -> dict[str, Value]:
        """The configuration of hyperopt's values by label (the active labels only), as
        ``configuration(space, space_eval(hyperopt_space, point))`` gives it: a label is a
        parameter's name (with ``|parent=value`` on a copy), a choice's value its index. Without
        ``space_eval``'s walk of the whole graph (0.1 s per proposal on seed 004's CASH tree)."""
        sample: dict[str, Any] = {}
        for label, value in point.items():
            p = self._parameters[label.split("|", 1)[0]]
            sample[p.name] = p.choices[int(value)] if isinstance(p, Categorical) else value
        return configuration(self.space, sample)

    def ask(self) -> Proposal:
        trials = self._trials
        new_ids = trials.new_trial_ids(1)
        trials.refresh()
        seed = int(self.rng.integers(2**31 - 1))
        (doc,) = self._startup_or_tpe(trials)(new_ids, self._graphs.domain, trials, seed)
        trials.insert_trial_docs([doc])
        trials.refresh()
        point = {label: values[0] for label, values in doc["misc"]["vals"].items() if values}
        config = self.point_configuration(point)
        proposal = Proposal(u=None, batch=len(self.y) + 1, config=config)
        self._pending.append((proposal, doc))
        return proposal

    def _startup_or_tpe(self, trials: Any) -> Any:
        """``tpe.suggest``, or during its first ``n_startup_jobs`` trials ``rand.suggest``, which
        ``tpe.suggest`` then returns with the same arguments (hyperopt 0.3.0, tpe.py) after first
        building its whole posterior graph: about a second per call on seed 004's CASH tree,
        for nothing. Proposals are identical (tests/test_tpe.py)."""
        from hyperopt import rand

        tids = {doc["misc"].get("from_tid", doc["tid"]) for doc in trials.trials}
        if len(tids) < self.settings["n_startup_jobs"]:
            return partial(self._suggest_on_one_graph, rand.suggest)
        return self._suggest

    def _suggest_on_one_graph(self, suggest: Any, *arguments: Any) -> Any:
        """``suggest`` (``tpe.suggest`` or ``rand.suggest``) with hyperopt's posterior graph
        built on the first call and reused, and every graph run as a compiled program.

        hyperopt 0.3.0 rebuilds the same symbolic graph on every call
        (``build_posterior_wrapper``: placeholders for the observations, which each call then
        binds in a fresh ``memo``; evaluating the graph does not change it): half of TPE's time
        on seed 004's CASH tree. And it evaluates the graph with ``pyll.rec_eval``, which
        re-discovers the graph's order on every call: most of the rest
        (:mod:`hpo.optimizers.backends.pyll_program`). Within the call, hyperopt's
        ``build_posterior_wrapper`` returns this optimizer's graph and ``pyll.rec_eval`` runs
        its program, and its ``miscs_to_idxs_vals`` is this optimizer's :class:`ObservedColumns`;
        all are restored after. Proposals are identical (tests/test_tpe.py)."""
        from hyperopt import pyll, tpe

        own_posterior, own_rec_eval = tpe.build_posterior_wrapper, pyll.rec_eval
        own_columns = tpe.miscs_to_idxs_vals

        def built_once(domain: Any, prior_weight: float, gamma: float) -> tuple:
            return self._graphs.posterior(own_posterior, prior_weight, gamma)

        def compiled(expr: Any, memo: Mapping[Any, Any] | None = None, **options: Any) -> Any:
            program = self._graphs.program(expr, memo or {})
            if program is None:
                return own_rec_eval(expr, memo=memo, **options)
            return program(memo or {})

        tpe.build_posterior_wrapper, pyll.rec_eval = built_once, compiled
        tpe.miscs_to_idxs_vals = self._observed
        try:
            return suggest(*arguments)
        finally:
            tpe.build_posterior_wrapper, pyll.rec_eval = own_posterior, own_rec_eval
            tpe.miscs_to_idxs_vals = own_columns

    def tell(self, proposal: Proposal, loss: float) -> None:
        from hyperopt import JOB_STATE_DONE, STATUS_FAIL, STATUS_OK

        self.X.append(self.space.encode(proposal.config or {}))
        self.y.append(float(loss))
        index = next(i for i, (p, _) in enumerate(self._pending) if p is proposal)
        _, doc = self._pending.pop(index)
        ok = math.isfinite(loss)
        doc["result"] = (
            {"loss": float(loss), "status": STATUS_OK} if ok else {"status": STATUS_FAIL}
        )
        doc["state"] = JOB_STATE_DONE
        self._trials.refresh()
