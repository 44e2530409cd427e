"""SMAC (thesis §5.5) through the SMAC3 package, driven ask/tell on configurations.

This module owns the ``smac`` family: the conversion of a :class:`~hpo.space.search_space.Space` to
a
ConfigSpace (:func:`to_configspace`: log scales, integers, categoricals, ``EqualsCondition`` /
``InCondition`` on the categorical parents) and :class:`SMACOptimizer`, which asks SMAC for
configurations and tells it the run's validation loss.

Settings follow the thesis (§5.5: "SMAC3 ... No meta-features ... Each configuration is allowed
only one instance ... Inactive hyperparameters are imputed to a default value (which is the middle
value of each space)"): SMAC3's hyperparameter-optimization facade with its defaults (random
forest of 10 trees on log-scaled costs, expected improvement, local and sorted random search,
Sobol initial design, 20 % interleaved random configurations), no instances, no instance
features, ``deterministic=True`` (one evaluation per configuration). SMAC 2.x's random forest
imputes inactive dimensions with out-of-range values (-1, an extra category); ``impute="default"``
(the default) sets them to the vector value of each parameter's default, which
:func:`to_configspace` puts at the middle of its range (``Space.impute_value``), as the thesis
says. SMAC 2.4's forest is scikit-learn's; pyrfr is not needed.

Seed 004's CASH adapter (:mod:`hpo.optimizers.smac_instances`) also runs SMAC with exact shortcuts
through ConfigSpace's hot paths (:mod:`hpo.optimizers.backends.configspace_shortcuts`).

SMAC is kept hermetic: its seed is drawn from the ``rng`` the optimizer is given, its output
folder is a temporary directory removed once the facade is built (nothing is saved afterwards),
and it neither reconfigures logging nor prints below WARNING. The package is an optional
dependency (extra ``chapter5``), imported only when a ``smac`` optimizer is built.
"""

from __future__ import annotations

import logging
import math
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpo.optimizers.base import Optimizer, Proposal
from hpo.space.search_space import Integer, Parameter, Real, Space, Value

if TYPE_CHECKING:
    from ConfigSpace import ConfigurationSpace
    from ConfigSpace.hyperparameters import Hyperparameter
    from smac.runhistory import TrialInfo

IMPUTE_CHOICES = ("default", "smac")
# SMAC3's facade by dotted path: the thesis's (§5.5) by default; any facade that proposes full
# evaluations (BlackBoxFacade: a GP; RandomFacade; AlgorithmConfigurationFacade), not the
# multi-fidelity ones, whose trials carry budgets this loop does not give.
DEFAULT_FACADE = "smac.HyperparameterOptimizationFacade"
MULTI_FIDELITY_FACADES = ("HyperbandFacade", "MultiFidelityFacade")


def facade_class(path: str) -> type:
    """The SMAC3 facade class at dotted ``path`` (``ValueError`` in one line when it does not
    import, is not a facade, or is a multi-fidelity one)."""
    import importlib

    from smac.facade.abstract_facade import AbstractFacade

    module, _, name = path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ValueError(f"SMAC facade {path!r} does not import ({err})") from err
    if not (isinstance(found, type) and issubclass(found, AbstractFacade)):
        raise ValueError(f"{path!r} is not a SMAC3 facade (smac.facade.AbstractFacade)")
    if name in MULTI_FIDELITY_FACADES:
        raise ValueError(
            f"SMAC facade {name!r} is multi-fidelity; this adapter proposes full evaluations "
            "(use optimizer=bohb for SMAC's Hyperband)"
        )
    return found


def to_configspace(space: Space, seed: int | None = None) -> ConfigurationSpace:
    """The ConfigSpace of ``space``: same names, bounds, scales and conditions.

    Each parameter's default is its value at ``space.impute_value`` (the middle of its range by
    default). A condition on one value becomes an ``EqualsCondition``, on several an
    ``InCondition``; ConfigSpace, like :meth:`Space.is_active`, also requires the parent active.
    """
    from ConfigSpace import ConfigurationSpace, EqualsCondition, InCondition

    configspace = ConfigurationSpace(name=space.name, seed=seed)
    hyperparameters = {p.name: _hyperparameter(p, space.impute_value) for p in space.parameters}
    configspace.add(list(hyperparameters.values()))
    conditions = []
    for p in space.parameters:
        if p.condition is None:
            continue
        child, parent = hyperparameters[p.name], hyperparameters[p.condition.parent]
        values = list(p.condition.values)
        if len(values) == 1:
            conditions.append(EqualsCondition(child, parent, values[0]))
        else:
            conditions.append(InCondition(child, parent, values))
    configspace.add(conditions)
    return configspace


def _hyperparameter(p: Parameter, impute_value: float) -> Hyperparameter:
    from ConfigSpace import (
        CategoricalHyperparameter,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )

    default = p.from_unit(impute_value)
    if isinstance(p, Real):  # 10 ** log10(high) may overshoot high by an ulp
        default = min(max(float(default), p.low), p.high)
        return UniformFloatHyperparameter(p.name, p.low, p.high, default, log=p.log)
    if isinstance(p, Integer):
        return UniformIntegerHyperparameter(p.name, p.low, p.high, int(default), log=p.log)
    return CategoricalHyperparameter(p.name, list(p.choices), default_value=str(default))


def config_of(space: Space, configuration: Any) -> dict[str, Value]:
    """A ConfigSpace configuration as ``space``'s configuration (its active parameters)."""
    values = dict(configuration)
    return {p.name: plain_value(p, values[p.name]) for p in space.parameters if p.name in values}


def plain_value(p: Parameter, value: Any) -> Value:
    """``value`` (numpy scalars from ConfigSpace) as the Python type of ``p``'s values."""
    if isinstance(p, Real):
        return float(value)
    if isinstance(p, Integer):
        return int(value)
    return str(value)


class SMACOptimizer(Optimizer):
    """SMAC3's hyperparameter-optimization facade behind the ask/tell interface.

    ``ask`` returns ``Proposal(u=None, batch=iteration, config=...)`` with only the active
    parameters present; ``tell`` gives SMAC the validation loss as the trial's cost. Proposals
    may be told in any order. The same ``rng`` gives the same proposals.

    ``impute``: ``"default"`` (thesis §5.5) puts inactive dimensions at each parameter's default
    (the middle of its range) in the random forest's inputs; ``"smac"`` keeps SMAC 2.x's own
    out-of-range imputation.
    """

    def __init__(
        self,
        space: Space,
        budget: int,
        rng: np.random.Generator,
        impute: str = "default",
        facade: str = DEFAULT_FACADE,
    ) -> None:
        super().__init__(space, budget, rng)
        if impute not in IMPUTE_CHOICES:
            raise ValueError(f"unknown impute {impute!r}; valid: {', '.join(IMPUTE_CHOICES)}")
        self.facade_class = facade_class(facade)
        logging.getLogger("smac").setLevel(logging.WARNING)
        self.seed = int(rng.integers(0, 2**31 - 1))
        self.configspace = to_configspace(space, self.seed)
        with tempfile.TemporaryDirectory(prefix="hpo-smac-") as directory:
            self.output_directory = Path(directory)
            self.facade = self._facade(self.output_directory)
        if impute == "default":
            impute_defaults(self.facade, self.configspace)
        order_local_search_starts(self.facade)
        self._pending: dict[int, TrialInfo] = {}
        self._asked = 0

    def _facade(self, output_directory: Path) -> Any:
        """SMAC's facade, built in ``output_directory`` (removed once it is built)."""
        from smac import Scenario

        scenario = Scenario(
            self.configspace,
            output_directory=output_directory,
            deterministic=True,
            n_trials=self.budget,
            seed=self.seed,
        )
        return self.facade_class(
            scenario, target_function=None, logging_level=False, overwrite=True
        )

    def _next_trial(self) -> tuple[TrialInfo, dict[str, Value]]:
        """SMAC's next trial, kept until told, and its configuration (active parameters only)."""
        with warnings.catch_warnings():  # SMAC's local search averages an empty list for a log
            warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
            info = self.facade.ask()
        self._asked += 1
        self._pending[self._asked] = info
        return info, config_of(self.space, info.config)

    def ask(self) -> Proposal:
        if self._asked >= self.budget:
            raise StopIteration(f"budget of {self.budget} evaluations exhausted")
        _, config = self._next_trial()
        return Proposal(u=None, batch=self._asked, config=config)

    def tell(self, proposal: Proposal, loss: float) -> None:
        from smac.runhistory import TrialValue

        if math.isnan(loss):
            raise ValueError(
                "loss is NaN; assign failed evaluations a finite loss (docs/deviations.md)"
            )
        info = self._pending.pop(proposal.batch, None)
        if info is None or proposal.config is None:
            raise ValueError(f"proposal (batch {proposal.batch}) is not an untold SMAC proposal")
        self.facade.tell(info, TrialValue(cost=float(loss)), save=False)
        self.X.append(self.space.encode(proposal.config))
        self.y.append(float(loss))


def order_local_search_starts(facade: Any) -> None:
    """Make SMAC's local search independent of Python's hash seed.

    SMAC 2.x deduplicates the local search's starting points through a ``set`` of
    ``Configuration``s, whose hash is that of their ``repr`` (a string, so salted per process
    unless ``PYTHONHASHSEED`` is fixed), and returns them in the set's order: the same seed gave
    different proposals in different processes from the first model-based iteration on. This
    sorts the starting points by their vector encoding (a fixed order; SMAC's own is arbitrary).
    """
    local_search = getattr(facade._acquisition_maximizer, "_local_search", None)
    if local_search is None:  # a facade without a local search (RandomFacade): nothing to order
        return
    unordered = local_search._get_initial_points

    def initial_points(*args: Any, **kwargs: Any) -> list:
        points = unordered(*args, **kwargs)
        return sorted(points, key=lambda c: tuple(np.nan_to_num(c.get_array(), nan=-1.0)))

    local_search._get_initial_points = initial_points


def impute_defaults(facade: Any, configspace: ConfigurationSpace) -> None:
    """Make the facade's random forest impute each conditional dimension with its default.

    SMAC 2.x fills its imputation table (``_conditional``, ``_impute_values``, indexed like
    ``configspace.values()``) on first use and keeps entries already present; this fills it first.
    """
    model = facade._model
    if not (hasattr(model, "_conditional") and hasattr(model, "_impute_values")):
        raise ValueError(
            f"impute='default' (the thesis's) sets a random forest's imputation table, and this "
            f"facade's model ({type(model).__name__}) has none: add "
            "+optimizer.settings.impute=smac (SMAC's own imputation)"
        )
    for index, hp in enumerate(configspace.values()):
        conditional = bool(configspace.parents_of[hp.name])
        model._conditional[index] = conditional
        if conditional:
            model._impute_values[index] = float(hp.to_vector(hp.default_value))


def impute_in_one_pass(facade: Any) -> None:
    """Make the facade's random forest impute its inactive dimensions with one array operation.

    SMAC 2.4's ``AbstractRandomForest._impute_inactive`` loops over the columns in Python (each
    non-finite entry of a conditional column gets the column's imputation value) on every
    training and prediction: on the CASH space, 264 columns per call, a sixth of SMAC's time.
    This does the same over all conditional columns at once, from the imputation table, which
    must be full (:func:`impute_defaults`). Same arrays (tests/test_cash_methods.py)."""
    model = facade._model
    conditional = np.array([model._conditional[i] for i in range(len(model._configspace))])
    values = np.zeros(len(conditional))
    values[conditional] = [model._impute_values[i] for i in np.flatnonzero(conditional)]

    def impute(X: np.ndarray) -> np.ndarray:
        return np.where(~np.isfinite(X) & conditional, values, X)

    model._impute_inactive = impute


def predict_best_in_one_batch(facade: Any) -> None:
    """Make the facade's configuration selector find its predicted-best configuration with one
    forest prediction over the history, not one per configuration.

    SMAC 2.4's ``ConfigSelector._get_x_best`` predicts every evaluated configuration separately
    (``predict_marginalized`` on one row at a time) at every retraining, so each retraining
    costs a prediction per configuration of the run; a forest predicts each row of a batch as it
    predicts it alone, so the batch gives the same means, and the first minimum is the one
    SMAC's stable sort puts first (tests/test_cash_methods.py)."""
    selector = facade._config_selector

    def x_best(X: np.ndarray) -> tuple[np.ndarray, float]:
        means = selector._model.predict_marginalized(X)[0][:, 0]
        best = int(np.argmin(means))
        return X[best], means[best]

    selector._get_x_best = x_best
