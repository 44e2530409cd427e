"""Seed 003's general priors learned over datasets (Bermúdez-Chacón 2014, Chapter 4, Algorithm 4)
and Fig 5.3: the SVM's ``gamma`` per signature (kernel, shrinking).

The sweep's ``priors`` part evaluates the SVM's subtree on each dataset (hierarchical random
search, the performance index; ``conf/experiment/hierarchical.yaml``). Here the evaluations are
read back, dataset after dataset in the order of the datasets' names, and offered to
:func:`hpo.space.prior_learning.learn_general_priors`: a value is accepted with probability equal
to its
index (1 − the validation loss), then COMBINEd and SIMPLIFYed into its signature's mixture. The
learned mixtures are written as a prior file (``learned_priors.yaml``, loadable by ``pds``:
``optimizer.settings.priors``) and drawn as Fig 5.3, and the seed's conclusion ("shrinking does
not change the distribution of gamma; the kernel does", §5.3) is a claim read on the L1 distances
between the learned densities.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from matplotlib.figure import Figure

from analysis.claims import Claim, MissingInput, Outcome
from hpo.space.prior_learning import LearnedPrior, general_prior_file, learn_general_priors
from runfiles import layout

PART = "priors"
PARAMETER = "svm__gamma"
SIGNATURE = ("svm__kernel", "svm__shrinking")
LEARNING_SEED = 0  # the stream of Monte-Carlo acceptances [decision]
MIN_ACCEPTED = 10  # a signature with fewer accepted values does not enter the claim [decision]
NEAR_ZERO = 0.25  # H6: "concentrated near 0" = a learned mean below half a uniform's [decision]
GRID = np.linspace(0.0, 1.0, 401)
COLUMNS = ["dataset", "iteration", "valid_loss", *(f"param_{n}" for n in (PARAMETER, *SIGNATURE))]


@dataclass(frozen=True)
class LearnedPriors:
    """What the learning loop gives: per signature the learned prior, and the observations."""

    learned: dict[tuple[str, ...], LearnedPrior]
    observations: pd.DataFrame  # dataset, value, score, signature (in the order learned)
    low: float
    high: float

    @property
    def grid(self) -> np.ndarray:
        """:data:`GRID` on gamma's range: where densities are drawn and integrated."""
        return GRID * (self.high - self.low) + self.low


OBSERVATIONS = ["dataset", "value", "score", "signature"]
NOTHING_LEARNED = LearnedPriors({}, pd.DataFrame(columns=OBSERVATIONS), 0.0, 1.0)


def _run_files(source: Path) -> list[Path]:
    """The run files of the ``priors`` part under ``source`` (none without the part)."""
    runs_dir = Path(source) / layout.RUNS / PART
    return layout.run_files(runs_dir) if runs_dir.is_dir() else []


def observations(source: Path) -> pd.DataFrame:
    """The ``priors`` part's evaluations that set ``svm__gamma``: dataset, value, score (the
    performance index, 1 − validation loss) and signature, datasets in name order and each
    dataset's evaluations in their order."""
    frames = []
    for path in _run_files(source):
        present = set(pq.read_schema(path).names)
        if not set(COLUMNS) <= present:
            continue
        table = pq.read_table(path, columns=COLUMNS, filters=[("row_type", "==", "trace")])
        frames.append(table.to_pandas())
    if not frames:
        return pd.DataFrame(columns=OBSERVATIONS)
    rows = pd.concat(frames, ignore_index=True).dropna(subset=[f"param_{PARAMETER}"])
    rows = rows.sort_values(["dataset", "iteration"], kind="stable")
    return pd.DataFrame(
        {
            "dataset": rows["dataset"].astype(str).to_numpy(),
            "value": rows[f"param_{PARAMETER}"].astype(float).to_numpy(),
            "score": 1.0 - rows["valid_loss"].astype(float).to_numpy(),
            "signature": list(
                zip(*(rows[f"param_{n}"].astype(str) for n in SIGNATURE), strict=True)
            ),
        }
    )


def run_space(source: Path) -> dict | None:
    """The space declaration of the ``priors`` part's runs (a run file's recorded spec), or
    None without such runs."""
    for path in _run_files(source):
        spec = (pq.read_schema(path).metadata or {}).get(b"hpo.run_spec")
        if spec is not None:
            return json.loads(spec)["space"]
    return None


def learn(source: Path, space: dict) -> LearnedPriors:
    """Algorithm 4 over the ``priors`` part's runs under ``source``, on ``svm__gamma``'s range in
    the space declaration ``space``."""
    gamma = space["parameters"][PARAMETER]
    low, high = float(gamma["low"]), float(gamma["high"])
    seen = observations(source)
    learned = learn_general_priors(
        seen["value"].tolist(),
        seen["score"].tolist(),
        list(seen["signature"]),
        low,
        high,
        seed=LEARNING_SEED,
    )
    return LearnedPriors(learned, seen, low, high)


def learned_prior_file(priors: LearnedPriors, space: dict) -> dict:
    """The learned priors as a prior file for ``space``: each learned signature's mixture, then
    the runs' own prior entries for ``svm__gamma`` (their sampling prior: uniform in the
    experiment's ``priors`` part), for the signatures nothing was learned in."""
    own = space["parameters"][PARAMETER].get("prior", [])
    own = [own] if isinstance(own, dict) else list(own)
    return general_prior_file(space["name"], PARAMETER, SIGNATURE, priors.learned, own)


def summary(priors: LearnedPriors) -> pd.DataFrame:
    """Per signature: values seen and accepted, components, mean and standard deviation."""
    records = []
    x = priors.grid
    for signature, entry in priors.learned.items():
        density = entry.prior.pdf(x)
        mean = float(np.trapezoid(x * density, x))
        records.append(
            {
                "kernel": signature[0],
                "shrinking": signature[1],
                "seen": entry.seen,
                "accepted": entry.accepted,
                "components": len(entry.prior.weights),
                "mean": mean,
                "std": float(np.sqrt(np.trapezoid((x - mean) ** 2 * density, x))),
            }
        )
    return pd.DataFrame(records)


def l1_distance(a: LearnedPrior, b: LearnedPrior, x: np.ndarray) -> float:
    """``∫ |p_a − p_b| dx`` over the grid ``x`` (0: the same density, 2: disjoint)."""
    return float(np.trapezoid(np.abs(a.prior.pdf(x) - b.prior.pdf(x)), x))


def distances(priors: LearnedPriors) -> pd.DataFrame:
    """The L1 distance of every pair of well-learned signatures (at least :data:`MIN_ACCEPTED`
    accepted values), with what differs between them: ``shrinking`` (same kernel) or
    ``kernel`` (same shrinking); pairs that differ in both are left out."""
    kept = {s: e for s, e in priors.learned.items() if e.accepted >= MIN_ACCEPTED}
    records = []
    for (s, a), (t, b) in combinations(sorted(kept.items()), 2):
        differs = [name for name, u, v in zip(("kernel", "shrinking"), s, t, strict=True) if u != v]
        if len(differs) == 1:
            records.append(
                {
                    "pair": f"{'/'.join(s)} vs {'/'.join(t)}",
                    "differs in": differs[0],
                    "L1 distance": l1_distance(a, b, priors.grid),
                }
            )
    return pd.DataFrame(records, columns=["pair", "differs in", "L1 distance"])


def kernel_matters_more(priors: LearnedPriors) -> Outcome:
    """§5.3 on Fig 5.3: 'shrinking does not change the distribution of gamma; the kernel does'."""
    table = distances(priors)
    if table.empty:
        raise MissingInput(
            f"no two signatures with {MIN_ACCEPTED}+ accepted values of {PARAMETER} that differ "
            "only in kernel or only in shrinking (the `priors` part's runs give too few)"
        )
    by = table.groupby("differs in")["L1 distance"].mean()
    shrinking, kernel = by.get("shrinking", np.nan), by.get("kernel", np.nan)
    decided = bool(np.isfinite(shrinking) and np.isfinite(kernel))
    means = _kernel_means(priors)
    sigmoid, poly = means.get("sigmoid", np.nan), means.get("poly", np.nan)
    located = bool(np.isfinite(sigmoid) and np.isfinite(poly))
    return Outcome(
        f"mean L1 distance between learned densities: shrinking changed {shrinking:.2f}, kernel "
        f"changed {kernel:.2f}; mean gamma of the learned priors: sigmoid {sigmoid:.2f}, poly "
        f"{poly:.2f}",
        [("a change of shrinking moves the density less than a change of kernel",
          bool(shrinking < kernel) if decided else None),
         (f"the sigmoid kernel's gamma is concentrated near 0: the mean of its learned density "
          f"(over both shrinking values) below {NEAR_ZERO} (a uniform's is 0.5), and below "
          "poly's", bool(sigmoid < NEAR_ZERO and sigmoid < poly) if located else None)],
        statistic=float(kernel - shrinking) if decided else np.nan,
    )  # fmt: skip


def _kernel_means(priors: LearnedPriors) -> pd.Series:
    """Per kernel, the mean of its well-learned signatures' densities (:data:`MIN_ACCEPTED`)."""
    table = summary(priors)
    if table.empty:
        return pd.Series(dtype=float)
    return table[table["accepted"] >= MIN_ACCEPTED].groupby("kernel")["mean"].mean()


CLAIMS: list[Claim[LearnedPriors]] = [
    Claim(
        "H6",
        "shrinking does not change the learned distribution of the SVM's gamma; the kernel does",
        "Fig 5.3: poly ≈ uniform on (0, 1) for both shrinking values, sigmoid concentrated near 0",
        kernel_matters_more,
        f"needs signatures with {MIN_ACCEPTED}+ accepted values that differ in kernel and in "
        "shrinking",
    ),
]


def figure(priors: LearnedPriors) -> Figure:
    """Fig 5.3: one panel per signature with a gamma (rows: kernel; columns: shrinking), the
    learned density (line) over the values evaluated (grey histogram, the sampling prior's)."""
    kernels = sorted({s[0] for s in priors.learned})
    shrinking = sorted({s[1] for s in priors.learned}, reverse=True)
    figure = Figure(figsize=(3.2 * len(shrinking), 2.3 * len(kernels)), layout="constrained")
    axes = figure.subplots(len(kernels), len(shrinking), squeeze=False, sharex=True)
    x = priors.grid
    seen = priors.observations
    for row, kernel in enumerate(kernels):
        for column, value in enumerate(shrinking):
            ax, signature = axes[row][column], (kernel, value)
            values = seen.loc[[s == signature for s in seen["signature"]], "value"]
            if len(values):
                ax.hist(values, bins=20, range=(priors.low, priors.high), density=True,
                        color="0.85", label="evaluated")  # fmt: skip
            entry = priors.learned.get(signature)
            if entry is not None:
                ax.plot(x, entry.prior.pdf(x), color="tab:blue", label="learned prior")
            counts = "" if entry is None else f" ({entry.accepted}/{entry.seen} accepted)"
            ax.set_title(f"kernel={kernel}, shrinking={value}{counts}", fontsize=8)
            ax.set_xlabel("gamma", fontsize=8)
    axes[0][0].legend(fontsize=7)
    return figure
