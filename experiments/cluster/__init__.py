"""Sizing a cluster submission before making it, and checking its launcher settings.

``python -m experiments.sweep cost <experiment> --profile P --n-shards K`` prints what
``python run.py -m experiment=<experiment> profile=P n_shards=K 'shard=range(0,K)'
hydra/launcher=slurm`` would submit: runs, shards, the job array's size, the estimated
core-hours, memory per job and a suggested ``timeout_min`` per shard.

Run costs come from the throughput benchmark (``benchmarks/throughput.py --json``), checked in as
``benchmarks/throughput_costs.json``: the mean seconds of a run at 100 evaluations per optimizer
family, protocol and |D_TVS| size bin (the bins of thesis Fig 3.4). A run's estimate is its
cell's mean scaled linearly to the run's budget, so the paper profile's estimate is the
benchmark's projection recomputed run by run.

Two kinds of run are costed otherwise (the ``surrogates`` experiment, seed 002):

* A **network** run (a learner trained by epochs, ``ffnn``) costs its epochs × the seconds per
  epoch of its space's representative network, measured by ``benchmarks/ffnn_epoch.py --json`` and
  checked in as ``benchmarks/ffnn_epoch_costs.json``. Its epochs: budget × the epoch cap for a
  method that evaluates fully (an upper bound: early stopping stops sooner); for ``hyperband`` and
  ``bohb`` the epochs of their plan, resumed (:func:`plan_epochs`, on
  :class:`hpo.optimizers.hyperband.Fidelity`'s brackets); plus the retraining of each distinct
  incumbent up to the cap, counted as the expected number of records among n evaluations in
  random order (the harmonic number H_n).
* A ``hyperband`` or ``bohb`` run on the **training-set fraction** costs the table's ``rs`` cell
  scaled by its plan's full-training-set equivalents (the sum of r/R over its evaluations) instead
  of its budget: an upper bound, as a fit on a share of the rows costs less than that share
  (libsvm's time grows faster than linearly in the rows).

On a GPU the network runs' epochs cost what ``benchmarks/ffnn_epoch.py --device cuda --json``
measured there (``benchmarks/ffnn_epoch_costs_cuda.json``, the same table for the GPU's epoch,
one network at a time): the GPU line gives those GPU-hours beside the core-hours (without that
table it says the GPU's cost is unmeasured and how to measure it). Beside them it gives the
GPU-hours with ``batch_networks`` on (or ``auto``), where each Hyperband or BOHB rung of M > 1
networks trains as one batched model: the rung costs M × the epochs each network trains there ×
the per-network epoch of M networks trained together, from the batched table
(``benchmarks/ffnn_batched_costs_cuda.json``, ``benchmarks/ffnn_epoch.py --batched --device cuda
--json``; :func:`batched_epoch_seconds`: log-log interpolation between the measured M, clamped
beyond them), its rung of widths drawn from the prior (``BATCHED_RUNG``; the rung of networks
all of the mean width, one width bucket, is given beside it as an optimistic bound). That table
measures one-layer networks of ffnn_mnist's widths; a space's rung is scaled by its
representative network's epoch over the measured 249-unit network's, both from the GPU's
one-network table (:func:`batched_seconds`). A rung of one network (the evaluator trains a lone
network by itself), the retraining of incumbents and the other methods' networks stay one at a
time. The CPU's estimate never batches (on one CPU thread batching gains little,
docs/surrogates-hyperband.md).

A run with a **time budget** (``time_budget``, seed 003's paper profile: 8 hours of optimisation
per run) costs that budget plus, when a model-selection stage follows (not in the ``priors``
part: Algorithm 4's evaluations), ``SELECTION_STAGE_ALLOWANCE`` of it for that stage (an
assumption, stated on the cost line: the stage's cross-validation fits on H do not grow with the
optimisation time, and took 35-63 % of the smoke runs' seconds at 20 evaluations,
docs/hierarchical.md).

The package: ``costs`` (the CPU table, what a run's cost scales with, memory, the estimate),
``networks`` (epochs from fidelity plans, CPU and GPU epoch tables, batched rungs), ``report``
(the printed cost of a submission) and ``launcher`` (checks of the launcher overrides).
"""

from __future__ import annotations

from experiments.cluster.costs import run_seconds, size_bin, tvs_size
from experiments.cluster.launcher import check_launcher_overrides, check_shards
from experiments.cluster.report import print_cost

__all__ = [
    "check_launcher_overrides",
    "check_shards",
    "print_cost",
    "run_seconds",
    "size_bin",
    "tvs_size",
]
