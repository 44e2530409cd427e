"""The Chapter-5 figures (thesis Figs 5.2, 5.3, 5.5, 5.7, 5.8, 5.9), drawn from prepared tables.

Every function returns a ``matplotlib.figure.Figure`` (no pyplot state, any backend);
``analysis.render.FigureSet`` saves it as PNG and PDF. Fig 5.6 (Nemenyi CD diagram) is
``analysis.cd_diagram``'s.

* Figs 5.2, 5.3, 5.5 — kernels' covariance on the dummy space of thesis §5.4 (spec ch4-6 §2.6):
  a choice among 3 classifiers and one real parameter per classifier (d = 4), n = 100 points
  uniform in [0, 1]^4, the choice snapped to its category, points sorted by choice. The space is
  a real ``hpo.space.search_space.Space`` (:func:`dummy_space`, built by
  ``hpo.space.search_space.space_from_config``) and
  the kernels are the GP engine's (``hpo.gp.kernels``: ``SquaredExponential``, ``Conditional``,
  ``Laplace``), not re-implementations:

  - Fig 5.2: ``exp(−‖x − x'‖² / ℓ)`` with ℓ = 0.5 — ``SquaredExponential`` with ARD
    length-scale 0.5 is ``exp(−‖x − x'‖² / (2 · 0.5²))``, the same function; left without
    imputation (inactive dimensions keep their random values), right with imputation at 0.5;
  - Fig 5.3: the conditional kernel (Eq. 5.9), ``Conditional`` around the same squared
    exponential [decide: the thesis does not name the base kernel of its illustration; the
    benchmark's is Matérn-5/2], on the imputed points;
  - Fig 5.5: the Laplace kernel (Eq. 5.15) with ℓ = 0.75 on the imputed points [decide: the
    thesis says ℓ = 0.75 while calling it "the same length-scale as the previous examples"
    (0.5); we follow the stated number]. The Mondrian kernel (left panel of Fig 5.5, and Fig
    5.4) is not provided by the GP engine and is not drawn.

* Fig 5.7 — average rank vs iteration, left on the incumbent's validation (5-fold CV) error,
  right on its test error.
* Figs 5.8 / 5.9 — classifiers chosen by GP-cond-ls: counts over all runs, and stacked bars per
  dataset.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.figures import method_styles, no_data
from hpo.gp.kernels import Conditional, Kernel, Laplace, SquaredExponential
from hpo.space.search_space import Space, space_from_config

# ------------------------------------------------------------------------ Figs 5.2, 5.3, 5.5

DUMMY_CLASSIFIERS = ("a", "b", "c")
N_POINTS, SE_LENGTH_SCALE, LAPLACE_LENGTH_SCALE = 100, 0.5, 0.75


def dummy_space() -> Space:
    """The illustrations' space (thesis §5.4): ``classifier`` ∈ {a, b, c} and one real parameter
    in [0, 1] per classifier, active when that classifier is chosen; imputation at 0.5."""
    parameters: dict[str, object] = {
        "classifier": {"type": "categorical", "choices": list(DUMMY_CLASSIFIERS)}
    }
    for name in DUMMY_CLASSIFIERS:
        parameters[f"{name}__x"] = {
            "type": "real", "low": 0.0, "high": 1.0, "condition": {"classifier": [name]},
        }  # fmt: skip
    return space_from_config(
        {
            "name": "dummy",
            "learner": {"choice": "classifier"},
            "impute": "default",
            "parameters": parameters,
        }
    )


def dummy_points(space: Space, n: int = N_POINTS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(raw, imputed)``: ``n`` points uniform in [0, 1]^4 with the choice snapped to its
    category's encoding, sorted by choice; ``imputed`` = ``space.impute_point`` of each."""
    raw = np.random.default_rng(seed).uniform(size=(n, space.dim))
    choice = space.parameters[0]
    raw[:, 0] = [choice.to_unit(choice.from_unit(u)) for u in raw[:, 0]]
    raw = raw[np.argsort(raw[:, 0], kind="stable")]
    return raw, np.array([space.impute_point(u) for u in raw])


def covariance(kernel: Kernel, X: np.ndarray, length_scale: float) -> np.ndarray:
    """``kernel``'s correlation matrix on ``X`` with every length-scale at ``length_scale``."""
    ls = np.full((1, X.shape[1]), length_scale)
    return kernel(ls, X, X)[0]


def kernel_matrices(seed: int = 0) -> dict[str, np.ndarray]:
    """The covariance matrices of Figs 5.2 (``se_raw``, ``se_imputed``), 5.3 (``conditional``)
    and 5.5 (``laplace``) on the dummy sample."""
    space = dummy_space()
    raw, imputed = dummy_points(space, seed=seed)
    se = SquaredExponential()
    return {
        "se_raw": covariance(se, raw, SE_LENGTH_SCALE),
        "se_imputed": covariance(se, imputed, SE_LENGTH_SCALE),
        "conditional": covariance(Conditional(space, base=se), imputed, SE_LENGTH_SCALE),
        "laplace": covariance(Laplace(), imputed, LAPLACE_LENGTH_SCALE),
    }


def _matrix_panels(panels: Mapping[str, np.ndarray]) -> Figure:
    figure = Figure(figsize=(4.2 * len(panels) + 0.8, 4), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    image = None
    for ax, (title, matrix) in zip(axes, panels.items(), strict=True):
        image = ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("sample (sorted by classifier)")
    axes[0].set_ylabel("sample (sorted by classifier)")
    figure.colorbar(image, ax=list(axes), shrink=0.8, label="k(x, x')")
    return figure


def figure_5_2(matrices: Mapping[str, np.ndarray]) -> Figure:
    """Fig 5.2: squared exponential, ℓ = 0.5, without (left) and with (right) imputation."""
    return _matrix_panels(
        {
            "exp(−‖x−x'‖²/0.5), inactive dims random": matrices["se_raw"],
            "exp(−‖x−x'‖²/0.5), inactive dims imputed (0.5)": matrices["se_imputed"],
        }
    )


def figure_5_3(matrices: Mapping[str, np.ndarray]) -> Figure:
    """Fig 5.3: the conditional kernel (block diagonal, ones on the diagonal)."""
    return _matrix_panels(
        {"conditional kernel (Eq. 5.9), SE base, ℓ = 0.5": matrices["conditional"]}
    )


def figure_5_5(matrices: Mapping[str, np.ndarray]) -> Figure:
    """Fig 5.5, right panel only: the Laplace kernel, ℓ = 0.75 (no Mondrian kernel)."""
    return _matrix_panels({"Laplace exp(−‖x−x'‖₁/0.75), imputed": matrices["laplace"]})


# ----------------------------------------------------------------------------------- Fig 5.7

FIG57_METHODS = ("RS", "SMAC", "GP-matern-ls", "GP-cond-ls", "GP-laplace-ls", "Spearmint")


def figure_5_7(curves: Mapping[str, pd.DataFrame], n_datasets: int) -> Figure:
    """Fig 5.7: average rank vs iteration; ``curves["validation"]`` (left) and
    ``curves["test"]`` (right), iteration × method; the methods of :data:`FIG57_METHODS` drawn
    (ranks are among all the methods of the table), in the thesis's styles
    (``analysis.figures.THESIS_STYLES``)."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True, squeeze=False)[0]
    for ax, (which, title) in zip(
        axes, (("validation", "validation (CV) error"), ("test", "test error")), strict=True
    ):
        table = curves.get(which)
        if table is None or table.empty:
            no_data(ax, f"{which} curves")
        else:
            styles = method_styles(table.columns)
            for method in FIG57_METHODS:
                if method in table.columns:
                    values = table[method].dropna()
                    ax.plot(values.index, values, label=method, **styles[method].line(False))
            ax.legend(fontsize=8)
        ax.set_title(f"rank on the incumbent's {title}")
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"average rank over {n_datasets} datasets (among all methods)")
    return figure


# ------------------------------------------------------------------------------- Figs 5.8-5.9


def figure_5_8(choices: pd.DataFrame) -> Figure:
    """Fig 5.8: how often GP-cond-ls's final model is each classifier (all runs)."""
    figure = Figure(figsize=(7, 4), layout="constrained")
    ax = figure.add_subplot()
    if choices.empty:
        no_data(ax, "classifier choices")
        return figure
    totals = choices.sum().sort_values(ascending=False, kind="stable")
    share = 100 * totals / totals.sum()
    bars = ax.bar(range(len(totals)), totals.to_numpy(), color="tab:red")
    ax.bar_label(bars, labels=[f"{p:.0f}%" for p in share], fontsize=8)
    ax.set_xticks(range(len(totals)), list(totals.index), rotation=30, ha="right")
    ax.set_ylabel(f"runs (of {int(totals.sum())})")
    ax.set_title("GP-cond-ls: classifier of the final model")
    return figure


def figure_5_9(choices: pd.DataFrame) -> Figure:
    """Fig 5.9: per dataset, stacked bars of GP-cond-ls's final classifiers."""
    figure = Figure(figsize=(max(6, 0.45 * len(choices) + 3), 4.5), layout="constrained")
    ax = figure.add_subplot()
    if choices.empty:
        no_data(ax, "classifier choices")
        return figure
    bottom = np.zeros(len(choices))
    colours = [f"C{i}" for i in range(len(choices.columns))]
    for colour, classifier in zip(colours, choices.columns, strict=True):
        values = choices[classifier].to_numpy(dtype=float)
        ax.bar(range(len(choices)), values, bottom=bottom, color=colour, label=classifier)
        bottom += values
    ax.set_xticks(range(len(choices)), list(choices.index), rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("runs")
    ax.set_title("GP-cond-ls: classifier of the final model per dataset")
    figure.legend(loc="outside right upper", fontsize=8)
    return figure
