"""Library back-ends of optimizer families that are not optimizers themselves: hyperopt's pyll
graphs as a straight-line program (:mod:`~hpo.optimizers.backends.pyll_program`) and exact
shortcuts through ConfigSpace's hot paths
(:mod:`~hpo.optimizers.backends.configspace_shortcuts`)."""
