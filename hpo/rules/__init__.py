"""Final-selection rules: what a method returns after every iteration. The single-model rules of
Chapter 3 and the posterior-mean rule (:mod:`~hpo.rules.final_selection`), Chapter 4's ensemble
rules (:mod:`~hpo.rules.ensemble`), and every rule by name (:mod:`~hpo.rules.registry`)."""
