"""hpo: the library behind the reproduction of Lévesque (2018).

Nothing in this package knows about Hydra, files or sweeps: it holds search spaces, optimizers,
the GP engine, the evaluation protocol, learners, selection rules and dataset loaders.
"""

__version__ = "0.1.0"
