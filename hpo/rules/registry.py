"""Every final-selection rule by name: the one place to register a new rule.

A run names its rules (``conf/optimizer/*.yaml``'s ``rules``); :func:`make_rule` builds them.
The rules themselves live where their subject does: the Chapter-3 rules and the posterior-mean
rule in :mod:`hpo.rules.final_selection` (thesis §3.2.2, §3.3, §3.4.1), Chapter 4's post-hoc
(Caruana) and
ensemble-optimization rules in :mod:`hpo.rules.ensemble` (thesis §4.4), and the agnostic-Bayes
ensemble of ESMBO and ERS in :mod:`hpo.ensembles.agnostic_bayes` (Lacoste et al., UAI 2014).
This module sits above all three, so none of them imports another's registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from hpo.ensembles.agnostic_bayes import AGNOSTIC_BAYES
from hpo.registry import Registry
from hpo.rules.agnostic_bayes import AgnosticBayesRule
from hpo.rules.ensemble import EnsembleOptimizerRule, PostHocRule
from hpo.rules.final_selection import (
    ENSEMBLE_OPTIMIZER,
    POST_HOC,
    POSTERIOR_MEAN,
    RULES,
    IncumbentRule,
    PosteriorMeanRule,
    SelectionRule,
)

# name -> rule(pm_domain, post_hoc settings): every rule a method file may name
RuleBuilder = Callable[[str, Mapping[str, Any]], SelectionRule]


def _rule_class(path: str) -> RuleBuilder | None:
    """A rule of another package by its class's dotted path (``my_pkg.rules.MyRule``, built
    without arguments): a method file's ``rules:`` may name it as it names a built-in rule."""
    if "." not in path:
        return None
    module, _, name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise ValueError(
            f"selection rule {path!r} does not import ({type(err).__name__}: {err})"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, SelectionRule)):
        raise ValueError(
            f"selection rule {path!r} is not a rule: subclass hpo.rules.final_selection."
            "SelectionRule (choices(trace) -> one choice per iteration)"
        )
    return lambda pm, post: cls()


RULE_BUILDERS: Registry[RuleBuilder] = Registry(
    "selection rule",
    {
        **{name: (lambda pm, post, name=name: IncumbentRule(name)) for name in RULES},
        POSTERIOR_MEAN: lambda pm, post: PosteriorMeanRule(pm),
        POST_HOC: lambda pm, post: PostHocRule(**post),
        ENSEMBLE_OPTIMIZER: lambda pm, post: EnsembleOptimizerRule(),
        AGNOSTIC_BAYES: lambda pm, post: AgnosticBayesRule(),
    },
    fallback=_rule_class,
)
RULE_NAMES = RULE_BUILDERS.names()


def make_rule(
    name: str, pm_domain: str = "space", post_hoc: Mapping[str, Any] | None = None
) -> SelectionRule:
    """The rule called ``name`` (one of :data:`RULE_NAMES`); ``pm_domain``: the posterior-mean
    rule's domain; ``post_hoc``: the settings of the ``post_hoc`` rule
    (:class:`hpo.rules.ensemble.PostHocRule`'s keyword arguments)."""
    return RULE_BUILDERS.get(name)(pm_domain, post_hoc or {})
