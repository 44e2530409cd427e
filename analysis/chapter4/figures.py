"""The Chapter-4 figures (thesis Figs 4.1, 4.2, 4.4–4.7) and the command that draws the ones
needing a run's predictions.

Every figure is a ``matplotlib.figure.Figure`` (no pyplot state). Every loss value comes from the
project's library, ``hpo.ensembles`` (``loss_of_votes``, ``candidate_losses``,
``ensemble_loss``, ``forward_greedy``, ``sigmoid_scale``, ``majority_vote``); GP posteriors come
from the project's GP (``hpo.optimizers.bayes.GPEIOptimizer``'s chain and ``hpo.gp.model``).

Need no results (drawn in every report):

* Fig 4.5 — squared-margin and adapted C-bound losses over (μ1, disagreement), infeasible pairs
  blank. Both losses depend on the margins only through μ1 = E[M] and μ2 = E[M²] = 1 − 2·dis,
  so each grid point is scored by the library on two equally weighted margins μ1 ± √(μ2 − μ1²)
  (the same moments as any realisable ensemble with those values);
* Fig 4.6 — zero-one loss and 1 − s(M, 10) vs the margin, with the values attainable by m = 7;
* Fig 4.7 — zero-one, margin, squared-margin and sigmoid (a(m), several m) losses vs the margin.

Need a run's predictions (functions of a pool; ``python -m analysis.chapter4.figures RUN``):

* Fig 4.1 — post-hoc selection (``forward_greedy``): validation (dashed) and test (solid) error
  of the ensemble and of the single best model vs the ensemble-selection iteration;
* Fig 4.2 — one EO iteration in 1-D: individual validation errors and their GP, the ensemble E
  (``ensemble_size`` distinct models chosen greedily by zero-one loss, as EO fills its
  slots), ``L(E ∪ {h})`` for every other pool model and its GP (the objective f(γ | E) of Eq. 4.3);
* Fig 4.4 — for an ensemble of m members, the GP mean of f(γ | E \\ {h_i}) for every member i,
  conditioned on every pool model, with the single-model curve and the ensemble's error.

Decisions ([decide], docs/chapter4-analysis.md): Fig 4.1 runs the library's forward greedy
selection without bagging (bagging is not in the library; the thesis's example uses it) and
starts from ``n_init`` best models (5 as the thesis's example, 3 as its experiments); the 1-D
axis of Figs 4.2/4.4 is one hyper-parameter of the run (a projection when the space has more).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.figures import save
from hpo.ensembles import (
    candidate_losses,
    ensemble_loss,
    forward_greedy,
    majority_vote,
    sigmoid_scale,
)
from hpo.ensembles.caruana import Fold, first_argmin, individual_errors
from hpo.ensembles.losses import loss_of_votes
from hpo.gp.model import GPPosterior
from hpo.optimizers.base import Proposal
from hpo.optimizers.bayes import GPEIOptimizer
from hpo.space.search_space import Real, Space
from runfiles import layout

LOSS_LABELS = {
    "zero_one": "zero-one ℓ01",
    "margin": "margin ℓ_M",
    "sqm": "squared margin ℓ_M²",
    "cbound": "adapted C-bound",
    "sigmoid": "sigmoid ℓ_sig",
}
FIG_4_6_SCALE, FIG_4_6_SIZE = 10.0, 7  # thesis Fig 4.6: a = 10, m = 7
FIG_4_7_SIZES = (3, 7, 12, 30)  # [decide] sizes whose a(m) Fig 4.7 shows

# -------------------------------------------------------------------- losses over margins


def margin_votes(margins: np.ndarray, size: float = 1.0) -> tuple[np.ndarray, np.ndarray, float]:
    """Votes (``correct``, ``wrong_max``, ``size``) of binary examples with these margins, the
    input of ``hpo.ensembles.losses.loss_of_votes`` (margin ``M = 2 correct/size − 1``)."""
    correct = size * (np.asarray(margins, dtype=float) + 1.0) / 2.0
    return correct, size - correct, size


def loss_of_margins(
    loss: str, margins: np.ndarray, size: float = 1.0, a: float | None = None
) -> np.ndarray:
    """The library's ``loss`` of examples with ``margins`` (reduced over the last axis)."""
    return loss_of_votes(loss, margin_votes(margins, size), a)


def moment_grid(n_mu: int = 201, n_dis: int = 101) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(μ1 grid, disagreement grid, feasible mask (n_dis, n_mu)): μ2 = 1 − 2·dis, feasible iff
    μ1² ≤ μ2 ≤ 1 (thesis Fig 4.5)."""
    mu1 = np.linspace(-1.0, 1.0, n_mu)
    dis = np.linspace(0.0, 0.5, n_dis)
    mu2 = 1.0 - 2.0 * dis[:, None]
    return mu1, dis, mu1[None, :] ** 2 <= mu2 + 1e-12


def moment_losses(loss: str, mu1: np.ndarray, dis: np.ndarray) -> np.ndarray:
    """``(len(dis), len(mu1))`` library ``loss`` (``"sqm"`` or ``"cbound"``) of margins with the
    moments (μ1, μ2 = 1 − 2·dis); NaN where infeasible."""
    m1, d = np.meshgrid(mu1, dis)
    mu2 = 1.0 - 2.0 * d
    feasible = m1**2 <= mu2 + 1e-12
    spread = np.sqrt(np.clip(mu2 - m1**2, 0.0, None))
    margins = np.stack([m1 - spread, m1 + spread], axis=-1)  # two equally weighted examples
    values = loss_of_margins(loss, margins.reshape(-1, 2)).reshape(m1.shape)
    return np.where(feasible, values, np.nan)


def figure_4_5(n_mu: int = 201, n_dis: int = 101) -> Figure:
    """Fig 4.5: squared-margin (left) and adapted C-bound (right) over (μ1, dis), iso-lines."""
    mu1, dis, _ = moment_grid(n_mu, n_dis)
    figure = Figure(figsize=(10, 4), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    for ax, loss in zip(axes, ("sqm", "cbound"), strict=True):
        values = moment_losses(loss, mu1, dis)
        mesh = ax.pcolormesh(mu1, dis, values, shading="auto", cmap="viridis", vmin=0, vmax=1)
        contours = ax.contour(mu1, dis, values, levels=np.linspace(0.1, 0.9, 9), colors="white")
        ax.clabel(contours, fontsize=7, fmt="%.1f")
        ax.set_title(LOSS_LABELS[loss])
        ax.set_xlabel("first margin moment μ1")
        ax.set_xlim(-1, 1)
    axes[0].set_ylabel("disagreement dis = (1 − μ2)/2")
    figure.colorbar(mesh, ax=axes, label="loss")
    return figure


def figure_4_6(a: float = FIG_4_6_SCALE, size: int = FIG_4_6_SIZE) -> Figure:
    """Fig 4.6: zero-one loss and ``1 − s(M, a)`` vs the margin, with the values attainable by
    an ensemble of ``size`` members (``M = (2k − size)/size``)."""
    grid = np.linspace(-1.0, 1.0, 801)[:, None]
    attainable = ((2.0 * np.arange(size + 1) - size) / size)[:, None]
    figure = Figure(figsize=(6, 4), layout="constrained")
    ax = figure.add_subplot()
    ax.plot(
        grid, loss_of_margins("zero_one", grid, size), color="black", label=LOSS_LABELS["zero_one"]
    )
    ax.plot(
        grid, loss_of_margins("sigmoid", grid, size, a), color="tab:red", label=f"1 − s(M, {a:g})"
    )
    ax.plot(
        attainable,
        loss_of_margins("sigmoid", attainable, size, a),
        "o",
        color="tab:red",
        label=f"attainable values, m = {size}",
    )
    ax.set_xlabel("ensemble margin M")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(alpha=0.3)
    return figure


def figure_4_7(sizes: Sequence[int] = FIG_4_7_SIZES) -> Figure:
    """Fig 4.7: zero-one, margin, squared-margin and sigmoid (``a = a(m)`` for each m of
    ``sizes``) losses vs the margin (the C-bound is dataset-level and omitted, as the thesis)."""
    grid = np.linspace(-1.0, 1.0, 801)[:, None]
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    ax = figure.add_subplot()
    for loss, colour in (("zero_one", "black"), ("margin", "tab:blue"), ("sqm", "tab:green")):
        ax.plot(grid, loss_of_margins(loss, grid), color=colour, label=LOSS_LABELS[loss])
    for size, style in zip(sizes, ("-", "--", "-.", ":"), strict=False):
        ax.plot(
            grid,
            loss_of_margins("sigmoid", grid, size),
            style,
            color="tab:red",
            label=f"sigmoid, m = {size} (a = {sigmoid_scale(size):.2f})",
        )
    ax.set_xlabel("ensemble margin M")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return figure


# ------------------------------------------------------------------------- pools of models


@dataclass
class Pool:
    """A run's models as the figures read them.

    ``models``: trace iterations (1-based), in order; ``folds``: per fold, validation
    predictions ``(K, n_f)`` and labels; ``test``: model → test predictions ``(n_test,)`` (only
    models that were retrained and tested); ``test_labels``; ``x``: the 1-D coordinate of each
    model (e.g. log10 of a hyper-parameter) and its name ``x_label``; ``members``: an ensemble
    chosen by the run (pool indices), if any.
    """

    models: np.ndarray
    folds: list[Fold]
    test: dict[int, np.ndarray]
    test_labels: np.ndarray
    x: np.ndarray
    x_label: str = "γ"
    members: tuple[int, ...] = ()

    def head(self, n: int) -> Pool:
        """The first ``n`` models (members beyond them dropped)."""
        keep = self.models[:n]
        return Pool(
            keep,
            [(p[:n], y) for p, y in self.folds],
            {m: t for m, t in self.test.items() if m in set(keep)},
            self.test_labels,
            self.x[:n],
            self.x_label,
            tuple(i for i in self.members if i < n),
        )


def mean_candidate_losses(
    folds: Sequence[Fold], ensemble: Sequence[int], loss: str, weights: np.ndarray | None = None
) -> np.ndarray:
    """``(K,)`` fold mean of ``L(E ∪ {h})`` for every pool model h (library
    ``candidate_losses``; ``E`` = pool indices ``ensemble``, with ``weights``)."""
    members = list(ensemble)
    return np.mean(
        [
            candidate_losses(loss, p, y, ensemble=p[members] if members else None, weights=weights)
            for p, y in folds
        ],
        axis=0,
    )


def posthoc_curves(pool: Pool, n_init: int = 5, n_iterations: int = 50) -> pd.DataFrame:
    """Fig 4.1's numbers, in %: per ensemble size t (``n_init`` … ``n_iterations``), the
    validation error (fold mean of the zero-one loss) and test error (majority vote with
    multiplicities) of the forward-greedy ensemble, and of the single best model.

    Selection is ``hpo.ensembles.forward_greedy`` (deterministic, so the ensemble of t members is
    the prefix of the longer runs). Test errors are NaN where a member has no test predictions.
    """
    best = int(np.argmin(individual_errors(pool.folds)))
    best_test = _test_error(pool, np.eye(len(pool.models), dtype=np.int64)[best])
    rows = {}
    for t in range(min(n_init, len(pool.models)), n_iterations + 1):
        weights = forward_greedy(pool.folds, n_init=n_init, n_iterations=t)
        valid = np.mean([ensemble_loss("zero_one", p, y, weights) for p, y in pool.folds])
        rows[t] = {
            "ensemble_valid": 100 * valid,
            "ensemble_test": _test_error(pool, weights),
            "best_valid": 100 * individual_errors(pool.folds)[best],
            "best_test": best_test,
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("ensemble size")


def _test_error(pool: Pool, weights: np.ndarray) -> float:
    chosen = np.flatnonzero(weights)
    models = [int(pool.models[i]) for i in chosen]
    if not all(m in pool.test for m in models):
        return float("nan")
    predictions = np.stack([pool.test[m] for m in models])
    vote = majority_vote(predictions, weights[chosen])
    return float(100 * np.mean(vote != pool.test_labels))


def figure_4_1(curves: pd.DataFrame, title: str) -> Figure:
    """Fig 4.1: dashed = validation, solid = test error; blue = ensemble, grey = single best."""
    figure = Figure(figsize=(7, 4), layout="constrained")
    ax = figure.add_subplot()
    for who, colour, label in (
        ("ensemble", "tab:blue", "ensemble"),
        ("best", "grey", "best model"),
    ):
        ax.plot(
            curves.index, curves[f"{who}_valid"], "--", color=colour, label=f"{label}, validation"
        )
        ax.plot(curves.index, curves[f"{who}_test"], "-", color=colour, label=f"{label}, test")
    ax.set_xlabel("ensemble-selection iteration (members, with repetition)")
    ax.set_ylabel("error (%)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return figure


def _gp_posterior(
    x: np.ndarray, y: np.ndarray, bounds: tuple[float, float], grid: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sample-averaged GP posterior mean and sd on ``grid`` of observations ``(x, y)`` with the
    project's GP (``GPEIOptimizer``'s kernel, priors and slice sampler)."""
    low, high = bounds
    space = Space("figure", (Real("x", low, high),))
    optimizer = GPEIOptimizer(space, budget=len(x), rng=np.random.default_rng(seed))
    for i, (xi, yi) in enumerate(zip(x, y, strict=True)):
        optimizer.tell(Proposal(u=np.array([(xi - low) / (high - low)]), batch=i + 1), float(yi))
    X, Y = np.array(optimizer.X), np.array(optimizer.y)
    hypers = optimizer.chain.copy().sample(X, Y, optimizer.n_samples, np.random.default_rng(seed))
    mean, var = GPPosterior(optimizer.kernel, X, Y, hypers).mean_var(
        ((grid - low) / (high - low))[:, None]
    )
    total = var.mean(axis=0) + mean.var(axis=0)
    return mean.mean(axis=0), np.sqrt(total)


def _bounds(x: np.ndarray) -> tuple[float, float]:
    low, high = float(np.min(x)), float(np.max(x))
    pad = max(1e-6, 0.05 * (high - low))
    return low - pad, high + pad


def greedy_members(folds: Sequence[Fold], size: int) -> list[int]:
    """``size`` distinct pool models: the best single model, then repeatedly the model outside
    the ensemble minimising the ensemble's zero-one loss (ties: lower individual error, then
    earlier), as EO fills a slot (Alg. 4.1 line 11; ``hpo.ensembles.caruana.first_argmin``)."""
    individual = individual_errors(folds)
    members = [first_argmin(individual)]
    while len(members) < min(size, len(individual)):
        losses = mean_candidate_losses(folds, members, "zero_one")
        losses[members] = np.inf
        members.append(first_argmin(losses, individual))
    return members


def eo_iteration(pool: Pool, ensemble_size: int = 2, loss: str = "sqm") -> pd.DataFrame:
    """Fig 4.2's numbers per pool model: x, individual validation error, in E
    (:func:`greedy_members`), ``L(E ∪ {h})`` (NaN for members: EO's observations exclude them,
    Alg. 4.1)."""
    members = greedy_members(pool.folds, ensemble_size)
    losses = mean_candidate_losses(pool.folds, members, loss)
    in_e = np.zeros(len(pool.models), dtype=bool)
    in_e[members] = True
    return pd.DataFrame(
        {
            "model": pool.models,
            "x": pool.x,
            "individual": individual_errors(pool.folds),
            "in_E": in_e,
            "ensemble_with": np.where(in_e, np.nan, losses),
        }
    )


def figure_4_2(
    table: pd.DataFrame, loss: str, x_label: str = "γ", title: str = "", seed: int = 0
) -> Figure:
    """Fig 4.2 from :func:`eo_iteration`'s table: red = individual errors and their GP (±1 sd),
    black circles = E, blue = ``L(E ∪ {h})`` and its GP (f(γ | E))."""
    bounds = _bounds(table["x"].to_numpy())
    grid = np.linspace(*bounds, 300)
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    ax = figure.add_subplot()
    outside = table[~table["in_E"]]
    for column, rows, colour, marker, label in (
        ("individual", table, "tab:red", "x", "individual validation error f(γ)"),
        ("ensemble_with", outside, "tab:blue", "+", f"{LOSS_LABELS[loss]} of E ∪ {{h}}"),
    ):
        values = rows[column].to_numpy(dtype=float)
        ax.plot(rows["x"], values, marker, color=colour, ms=8, ls="", label=label)
        if len(rows) >= 2:
            mean, sd = _gp_posterior(rows["x"].to_numpy(), values, bounds, grid, seed)
            ax.plot(grid, mean, color=colour)
            ax.fill_between(grid, mean - sd, mean + sd, color=colour, alpha=0.15)
    members = table[table["in_E"]]
    ax.plot(
        members["x"], members["individual"], "o", mfc="none", mec="black", ms=12, mew=2,
        label=f"members of E ({len(members)})",
    )  # fmt: skip
    ax.set_xlabel(x_label)
    ax.set_ylabel("validation loss")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return figure


def leave_one_out_losses(pool: Pool, members: Sequence[int], loss: str) -> pd.DataFrame:
    """Fig 4.4's numbers: per member i (column), ``L(E \\ {h_i} ∪ {h})`` for every pool model h
    (rows), plus ``x`` and the individual error."""
    table = pd.DataFrame({"x": pool.x, "individual": individual_errors(pool.folds)})
    for i, member in enumerate(members):
        rest = [m for j, m in enumerate(members) if j != i]
        table[f"without member {i + 1} (model {int(pool.models[member])})"] = mean_candidate_losses(
            pool.folds, rest, loss
        )
    return table


def figure_4_4(pool: Pool, members: Sequence[int], loss: str = "sqm", seed: int = 0) -> Figure:
    """Fig 4.4: dashed = GP of the single-model error; diamonds = the members at their error;
    dash-dot line = the ensemble's zero-one error; one colour per member i = GP mean of
    f(γ | E \\ {h_i}) conditioned on every pool model, with the pool's values."""
    table = leave_one_out_losses(pool, members, loss)
    bounds = _bounds(pool.x)
    grid = np.linspace(*bounds, 300)
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    ax = figure.add_subplot()
    mean, _ = _gp_posterior(pool.x, table["individual"].to_numpy(), bounds, grid, seed)
    ax.plot(grid, mean, "--", color="black", label="single-model error (GP mean)")
    colours = [f"C{i}" for i in range(len(members))]
    for colour, column in zip(colours, table.columns[2:], strict=True):
        values = table[column].to_numpy()
        ax.plot(pool.x, values, ".", color=colour, ms=5)
        mean, _ = _gp_posterior(pool.x, values, bounds, grid, seed)
        ax.plot(grid, mean, color=colour, label=f"f(γ | E \\ h), {column}")
    ax.plot(
        pool.x[list(members)], table["individual"].to_numpy()[list(members)], "D", color="black",
        ms=8, label="members (individual error)",
    )  # fmt: skip
    error = np.mean([ensemble_loss("zero_one", p[list(members)], y) for p, y in pool.folds])
    ax.axhline(error, ls="-.", color="grey", label=f"ensemble zero-one error {error:.3f}")
    ax.set_xlabel(pool.x_label)
    ax.set_ylabel(f"validation loss ({LOSS_LABELS[loss]} for the coloured curves)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return figure


# --------------------------------------------------------------------------- run files → pool


def read_pool(
    run_file: Path, labels: np.ndarray, param: str | None = None, method: str | None = None
) -> Pool:
    """The pool of a run file and its predictions sidecar (layout: README, "Predictions
    sidecar", read directly: ``analysis`` does not import ``experiments``).

    ``labels``: the dataset's labels as loaded (``[y; y_test]`` when a test file is predefined),
    indexed by the sidecar's ``row``. ``param``: the hyper-parameter of the 1-D axis (default:
    the first ``param_*`` column with numbers), plotted as log10 when positive. ``method``: the
    outcome method whose final ``members`` fill ``Pool.members`` (default: the first with
    several members).
    """
    sidecar = layout.predictions_path(run_file)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar} not found: the run kept no predictions")
    predictions = pd.read_parquet(sidecar)
    run = pd.read_parquet(run_file)
    trace = run[run["row_type"] == "trace"].sort_values("iteration", kind="stable")
    models = trace["iteration"].to_numpy(dtype=np.int64)
    valid = predictions[predictions["split"] == 0]
    folds = []
    for _, block in valid.groupby("fold", sort=True):
        matrix = block.pivot(index="model", columns="row", values="prediction").reindex(models)
        rows = matrix.columns.to_numpy()
        folds.append((matrix.to_numpy(dtype=np.int64), labels[rows]))
    test_rows = predictions[predictions["split"] == 2]
    test: dict[int, np.ndarray] = {}
    test_index = np.array([], dtype=np.int64)
    for model, block in test_rows.groupby("model", sort=True):
        block = block.sort_values("row", kind="stable")
        test[int(model)] = block["prediction"].to_numpy(dtype=np.int64)
        test_index = block["row"].to_numpy()
    x, x_label = _axis(trace, param)
    return Pool(models, folds, test, labels[test_index], x, x_label, _members(run, models, method))


def _axis(trace: pd.DataFrame, param: str | None) -> tuple[np.ndarray, str]:
    candidates = [c for c in trace.columns if c.startswith("param_")]
    numeric = [c for c in candidates if pd.api.types.is_numeric_dtype(trace[c])]
    column = f"param_{param}" if param is not None else (numeric[0] if numeric else None)
    if column is None or column not in trace.columns:
        raise ValueError(f"no numeric hyper-parameter {param!r}; choices: {numeric}")
    values = trace[column].to_numpy(dtype=float)
    name = column.removeprefix("param_")
    if np.nanmin(values) > 0:
        return np.log10(values), f"log10 {name}"
    return values, name


def _members(run: pd.DataFrame, models: np.ndarray, method: str | None) -> tuple[int, ...]:
    outcomes = run[run["row_type"] == "outcome"]
    if "members" not in outcomes.columns:
        return ()
    if method is not None:
        outcomes = outcomes[outcomes["method"] == method]
    final = outcomes[outcomes["iteration"] == outcomes["iteration"].max()]
    position = {int(m): i for i, m in enumerate(models)}
    for text in final["members"].dropna():
        ids = [int(t) for t in str(text).split(",") if t.strip().lstrip("-").isdigit()]
        if len(set(ids)) > 1 and all(i in position for i in ids):
            return tuple(sorted({position[i] for i in ids}))
    return ()


def dataset_labels(run_file: Path, data_dir: str | None = None) -> np.ndarray:
    """Labels ``[y; y_test]`` of the run's dataset (``hpo.data.catalog.load_dataset``)."""
    from hpo.data.catalog import load_dataset

    run = pd.read_parquet(run_file, columns=["dataset"])
    data = load_dataset(str(run["dataset"].iloc[0]), data_dir)
    return data.y if data.y_test is None else np.concatenate([data.y, data.y_test])


# ------------------------------------------------------------------------------ command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.chapter4.figures",
        description="Draw Figs 4.1, 4.2 and 4.4 from one run file with a predictions sidecar "
        "(<run>.predictions.parquet); Figs 4.5-4.7 need no run.",
    )
    parser.add_argument("run_file", nargs="?", help="results file of one run (with its sidecar)")
    parser.add_argument("--out", default="figures", help="output folder (default: figures)")
    parser.add_argument("--data-dir", default=None, help="UCI-121 folder (default: HPO_UCI121_DIR)")
    parser.add_argument("--param", default=None, help="hyper-parameter of the 1-D axis")
    parser.add_argument("--loss", default="sqm", help="EO loss of Figs 4.2 and 4.4 (default sqm)")
    parser.add_argument("--n-init", type=int, default=5, help="Fig 4.1 kick-start (default 5)")
    parser.add_argument("--iterations", type=int, default=50, help="Fig 4.1 selection steps")
    parser.add_argument("--pool-size", type=int, default=20, help="Fig 4.2 pool (default 20)")
    parser.add_argument("--members-of", default=None, help="method whose ensemble Fig 4.4 uses")
    parser.add_argument("--ensemble-size", type=int, default=5, help="Fig 4.4 fallback m")
    return parser


def write_run_figures(
    pool: Pool, out: Path, args: argparse.Namespace | None = None
) -> Mapping[str, list[Path]]:
    """Figs 4.1, 4.2 and 4.4 of ``pool`` written to ``out`` (PNG + PDF, numbers as CSV)."""
    args = args or _parser().parse_args([])
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    curves = posthoc_curves(pool, args.n_init, args.iterations)
    curves.to_csv(out / "fig4_1_posthoc.csv")
    written["fig4_1"] = save(
        figure_4_1(curves, "post-hoc forward greedy selection"), out, "fig4_1_posthoc"
    )
    small = pool.head(args.pool_size)
    table = eo_iteration(small, 2, args.loss)
    table.to_csv(out / "fig4_2_eo_iteration.csv", index=False)
    title = f"one EO iteration, {len(small.models)} models, |E| = 2"
    written["fig4_2"] = save(
        figure_4_2(table, args.loss, pool.x_label, title), out, "fig4_2_eo_iteration"
    )
    members = pool.members or tuple(greedy_members(pool.folds, args.ensemble_size))
    leave_one_out_losses(pool, members, args.loss).to_csv(out / "fig4_4_members.csv")
    written["fig4_4"] = save(figure_4_4(pool, members, args.loss), out, "fig4_4_members")
    return written


def main(argv: list[str] | None = None) -> int:
    """Write the figures; 0 on success, 2 (one line on stderr) when inputs are missing."""
    args = _parser().parse_args(argv)
    out = Path(args.out)
    for name, figure in (
        ("fig4_5", figure_4_5()),
        ("fig4_6", figure_4_6()),
        ("fig4_7", figure_4_7()),
    ):
        save(figure, out, name)
    if args.run_file is None:
        print(f"Figs 4.5-4.7 in {out} (give a run file for Figs 4.1, 4.2, 4.4)")
        return 0
    run_file = Path(args.run_file)
    try:
        labels = dataset_labels(run_file, args.data_dir)
        pool = read_pool(run_file, labels, args.param, args.members_of)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    write_run_figures(pool, out, args)
    print(f"Figs 4.1, 4.2, 4.4-4.7 in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
