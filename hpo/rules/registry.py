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

from collections.abc import Mapping
from typing import Any

from hpo.ensembles.agnostic_bayes import AGNOSTIC_BAYES
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

RULE_NAMES = (*RULES, POSTERIOR_MEAN, POST_HOC, ENSEMBLE_OPTIMIZER, AGNOSTIC_BAYES)


def make_rule(
    name: str, pm_domain: str = "space", post_hoc: Mapping[str, Any] | None = None
) -> SelectionRule:
    """The rule called ``name`` (one of :data:`RULE_NAMES`); ``pm_domain``: the posterior-mean
    rule's domain; ``post_hoc``: the settings of the ``post_hoc`` rule
    (:class:`hpo.rules.ensemble.PostHocRule`'s keyword arguments)."""
    if name not in RULE_NAMES:
        raise ValueError(f"unknown selection rule {name!r}; valid: {', '.join(RULE_NAMES)}")
    if name == POSTERIOR_MEAN:
        return PosteriorMeanRule(pm_domain)
    if name == POST_HOC:
        return PostHocRule(**(post_hoc or {}))
    if name == ENSEMBLE_OPTIMIZER:
        return EnsembleOptimizerRule()
    if name == AGNOSTIC_BAYES:
        return AgnosticBayesRule()
    return IncumbentRule(name)
