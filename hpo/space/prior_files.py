"""Reading priors: a space's mapping with ``prior:`` and ``virtual:`` keys, or a prior file that
replaces a space's priors (learned ones, :mod:`hpo.space.prior_learning`), into a
:class:`~hpo.space.priors.PriorSpace`; and a prior space written back as a prior file. Format
and every [decision]: ``docs/hierarchical.md``. Nothing here reads files: the functions take
mappings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hpo.space.prior_distributions import (
    CategoricalWeights,
    GaussianMixture,
    LogNormal,
    LogUniform,
    Normal,
    Prior,
    PriorError,
    Uniform,
    check_interval,
)
from hpo.space.priors import ContextPrior, PriorSpace, numeric_range
from hpo.space.search_space import (
    Categorical,
    Integer,
    Parameter,
    Space,
    _SpaceReader,
    space_from_config,
)

PRIOR_KEYS = {
    "uniform": ("low", "high"),
    "log_uniform": ("low", "high"),
    "normal": ("mu", "sigma"),
    "log_normal": ("mu", "sigma"),
    "mixture": ("weights", "mu", "sigma"),
    "categorical": ("weights",),
}
_REQUIRED = {"normal": ("mu", "sigma"), "log_normal": ("mu", "sigma"), "categorical": ("weights",)}
_REQUIRED |= {"mixture": ("weights", "mu", "sigma")}
SPACE_EXTRA_KEYS = ("prior", "virtual")  # the keys this module adds to a parameter's mapping


def prior_space_from_config(config: Mapping[str, object]) -> PriorSpace:
    """The :class:`PriorSpace` a space mapping declares: the plain space from the usual keys
    (:func:`hpo.space.search_space.space_from_config`), priors from ``prior:`` and virtual
    parameters from
    ``virtual: true`` on any parameter (format: ``docs/hierarchical.md``)."""
    parameters = config.get("parameters") if isinstance(config, Mapping) else None
    if not isinstance(parameters, Mapping):
        return PriorSpace(space_from_config(config))
    plain: dict[str, object] = {}
    extras: dict[str, Mapping[str, object]] = {}
    for key, spec in parameters.items():
        if isinstance(spec, Mapping):
            plain[str(key)] = {k: v for k, v in spec.items() if k not in SPACE_EXTRA_KEYS}
            extras[str(key)] = {k: v for k, v in spec.items() if k in SPACE_EXTRA_KEYS}
        else:
            plain[str(key)] = spec
    space = space_from_config({**config, "parameters": plain})
    reader = _PriorReader(space)
    priors = {p: reader.entries(p, e["prior"]) for p, e in extras.items() if "prior" in e}
    virtual = frozenset(
        p
        for p, e in extras.items()
        if reader.flag(e.get("virtual", False), f"parameter {p!r}: virtual")
    )
    return PriorSpace(space, priors, virtual)


def with_priors(prior_space: PriorSpace, prior_file: Mapping[str, object]) -> PriorSpace:
    """``prior_space`` with the priors of a prior file (``{space: <name>, priors: {<parameter>:
    <prior or list of priors>}}``, e.g. learned ones, §4): a parameter the file names gets the
    file's priors instead of its own [decision]."""
    reader = _PriorReader(prior_space.space)
    if not isinstance(prior_file, Mapping) or set(prior_file) - {"space", "priors"}:
        keys = list(prior_file) if isinstance(prior_file, Mapping) else prior_file
        raise reader.fail(f"a prior file has the keys space, priors; got {keys!r}")
    if str(prior_file.get("space", prior_space.name)) != prior_space.name:
        raise reader.fail(f"the prior file is for space {prior_file['space']!r}")
    priors = prior_file.get("priors", {})
    if not isinstance(priors, Mapping):
        raise reader.fail(f"priors must be a mapping of parameter names, got {priors!r}")
    merged = dict(prior_space.priors)
    for name, spec in priors.items():
        merged[str(name)] = reader.entries(str(name), spec)
    return PriorSpace(prior_space.space, merged, prior_space.virtual)


def prior_file(prior_space: PriorSpace) -> dict[str, object]:
    """The prior file (YAML-ready mapping) that gives ``prior_space``'s priors back through
    :func:`with_priors`."""
    space = prior_space.space
    priors: dict[str, object] = {}
    for name, entries in prior_space.priors.items():
        integer = isinstance(space.parameters[space.names.index(name)], Integer)
        priors[name] = []
        for e in entries:
            spec = e.prior.to_config()
            if integer and isinstance(e.prior, Uniform | LogUniform):  # back to the end values
                spec |= {"low": e.prior.low + 0.5, "high": e.prior.high - 0.5}
            priors[name].append(
                ({"when": {k: list(v) for k, v in e.when}} if e.when else {}) | spec
            )
    return {"space": prior_space.name, "priors": priors}


class _PriorReader(_SpaceReader):
    """Reads ``prior:`` mappings for the parameters of one space (one-line :class:`PriorError`);
    numbers and flags as the space's own reader reads them."""

    def __init__(self, space: Space) -> None:
        super().__init__(space.name)
        self.space = space

    def fail(self, message: str) -> PriorError:
        return PriorError(f"space {self.name!r}: {message}")

    def entries(self, name: str, spec: object) -> tuple[ContextPrior, ...]:
        if name not in self.space.names:
            raise self.fail(
                f"prior on {name!r}, a hyperparameter the space's learners lack; valid "
                f"choices: {', '.join(self.space.names)}"
            )
        parameter = self.space.parameters[self.space.names.index(name)]
        items = [spec] if isinstance(spec, Mapping) else spec
        if not isinstance(items, Sequence) or isinstance(items, str) or not items:
            raise self.fail(f"prior on {name!r} must be a mapping or a list of them, got {spec!r}")
        return tuple(self.entry(parameter, item) for item in items)

    def entry(self, p: Parameter, spec: object) -> ContextPrior:
        where = f"prior on {p.name!r}"
        if not isinstance(spec, Mapping):
            raise self.fail(f"{where} must be a mapping, got {spec!r}")
        dist = spec.get("dist")
        if dist not in PRIOR_KEYS:
            raise self.fail(
                f"{where}: unknown dist {dist!r}; valid choices: {', '.join(PRIOR_KEYS)}"
            )
        valid = ("when", "dist", *PRIOR_KEYS[str(dist)])
        for key in spec:
            if key not in valid:
                raise self.fail(f"{where}: unknown key {key!r}; valid keys: {', '.join(valid)}")
        for key in _REQUIRED.get(str(dist), ()):
            if key not in spec:
                raise self.fail(f"{where}: {dist} needs {key!r}")
        when = self.when(spec.get("when", {}), where)
        try:
            return ContextPrior(when, self.prior(p, str(dist), spec, where))
        except PriorError as error:
            if str(error).startswith("space "):
                raise
            raise self.fail(f"{where}: {error}") from None

    def when(self, value: object, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(value, Mapping):
            raise self.fail(f"{where}: when must map categoricals to values, got {value!r}")
        pairs = []
        for key, values in value.items():
            listed = [values] if isinstance(values, str | bool) else values
            if not isinstance(listed, Sequence) or not listed:
                raise self.fail(f"{where}: when {key!r} must list values, got {values!r}")
            pairs.append((str(key), tuple(_choice_text(v) for v in listed)))
        return tuple(pairs)

    def numbers(self, value: object, where: str) -> tuple[float, ...]:
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise self.fail(f"{where} must be a list of numbers, got {value!r}")
        return tuple(self.number(v, where) for v in value)

    def prior(self, p: Parameter, dist: str, spec: Mapping[str, object], where: str) -> Prior:
        if dist == "categorical":
            if not isinstance(p, Categorical):
                raise self.fail(f"{where}: categorical weights need a categorical parameter")
            weights = spec["weights"]
            if not isinstance(weights, Mapping):
                raise self.fail(f"{where}: weights must map choices to numbers, got {weights!r}")
            named = {
                _choice_text(k): self.number(v, f"{where}: weight") for k, v in weights.items()
            }
            for choice in named:
                if choice not in p.choices:
                    raise self.fail(
                        f"{where}: weight on {choice!r}, not a choice; valid choices: "
                        f"{', '.join(p.choices)}"
                    )
            return CategoricalWeights(p.choices, tuple(named.get(c, 0.0) for c in p.choices))
        if isinstance(p, Categorical):
            raise self.fail(f"{where}: a categorical parameter takes dist: categorical")
        low, high = numeric_range(p)
        if dist in ("uniform", "log_uniform"):
            a = self.number(spec.get("low", p.low), f"{where}: low")
            b = self.number(spec.get("high", p.high), f"{where}: high")
            check_interval(a, b, dist)
            if a < p.low or b > p.high:
                raise self.fail(
                    f"{where}: [{a}, {b}] exceeds the parameter's range [{p.low}, {p.high}]"
                )
            if isinstance(p, Integer):  # each integer keeps its whole unit bin
                a, b = a - 0.5, b + 0.5
            return (Uniform if dist == "uniform" else LogUniform)(a, b)
        if dist == "normal":
            mu, sigma = self.number(spec["mu"], f"{where}: mu"), self.number(spec["sigma"], where)
            if not sigma > 0:
                raise self.fail(f"{where}: sigma={sigma:g} must be > 0")
            return Normal(mu, sigma).truncated(low, high)
        if dist == "log_normal":
            mu, sigma = self.number(spec["mu"], f"{where}: mu"), self.number(spec["sigma"], where)
            if not sigma > 0:
                raise self.fail(f"{where}: sigma={sigma:g} must be > 0")
            return LogNormal(mu, sigma).truncated(low, high)
        weights = self.numbers(spec["weights"], f"{where}: weights")
        mu = self.numbers(spec["mu"], f"{where}: mu")
        sigma = self.numbers(spec["sigma"], f"{where}: sigma")
        return GaussianMixture(weights, mu, sigma).truncated(low, high)


def _choice_text(value: object) -> str:
    """A categorical value as the space stores it (YAML's ``True`` is the choice ``'True'``)."""
    return str(value)
