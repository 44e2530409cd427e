"""The statistical model-selection stage of Bermúdez-Chacón 2014 (§3.5): the significance
comparisons against the best model (:mod:`~hpo.significance.comparisons`) and the stage a run
executes after its optimization (:mod:`~hpo.significance.stage`)."""
