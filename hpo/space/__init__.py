"""Search spaces: parameters, conditions and the unit-cube encoding every optimizer sees
(:mod:`~hpo.space.search_space`), per-context priors (:mod:`~hpo.space.priors`) and the priors
learned across datasets (:mod:`~hpo.space.prior_learning`)."""
