"""Figures 2.1-2.4 of the thesis (Chapter 2), drawn with the GP engine (thesis §2.1-2.2, §2.6.1).

* Figs 2.1, 2.2: the GP posterior (mean +- 1 sd, hyperparameters slice-sampled and integrated)
  of ``f(x) = sin(3x) + 0.3 x^2`` on ``[-2, 2]`` from 6 noisy points (noise sd 0.1), and below it
  the expected improvement (Fig 2.2).
* Fig 2.3: BO of the RBF-SVM width ``tau`` on Ionosphere (C = 1, ``tau`` in ``[1e-5, 1e2]``, log
  scale; test = 1/5, validation = 1/5 of the rest), snapshots after 2, 5, 10, 20 and 50
  iterations: observations and integrated posterior mean +- sd (top), integrated EI and the point
  it picks next (bottom).
* Fig 2.4: validation error of the incumbent and test error of the same model, per iteration.

    python -m experiments.figures_chapter2 [--out results/figures/chapter2] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from hpo.data.catalog import GET_DATA_HINT, load_dataset, missing_datasets  # noqa: E402
from hpo.gp.acquisition import ExpectedImprovement  # noqa: E402
from hpo.gp.kernels import make_kernel  # noqa: E402
from hpo.gp.model import GPPosterior  # noqa: E402
from hpo.gp.slice_sampler import HyperChain, SpearmintPriors  # noqa: E402
from hpo.optimizers.bayes import GPEIOptimizer  # noqa: E402
from hpo.seeding import int_seed, rng, seed_sequence  # noqa: E402
from hpo.space.search_space import Real, Space  # noqa: E402

DEFAULT_OUT = Path("results/figures/chapter2")
SNAPSHOTS = (2, 5, 10, 20, 50)  # [decide] Fig 2.3 snapshots, docs/deviations.md
N_ITERATIONS = 50
TAU_LOW, TAU_HIGH = 1e-5, 1e2
ORANGE = "tab:orange"


def integrated_mean_sd(acquisition: ExpectedImprovement, U: np.ndarray) -> tuple:
    """Mean and sd of the sample mixture of latent posteriors at ``U (m, d)``: two ``(m,)``."""
    mean, var = acquisition.posterior.mean_var(U)
    mix_mean = mean.mean(axis=0)
    return mix_mean, np.sqrt(np.maximum((var + mean**2).mean(axis=0) - mix_mean**2, 0.0))


def _save(fig: plt.Figure, out: Path, name: str) -> None:
    for suffix in ("png", "pdf"):
        fig.savefig(out / f"{name}.{suffix}", dpi=150, bbox_inches="tight")
    plt.close(fig)


def _posterior_panel(ax, x, truth, mean, sd, x_obs, y_obs) -> None:
    if truth is not None:
        ax.plot(x, truth, "k--", lw=1, label="true function")
    ax.plot(x, mean, color=ORANGE, label="GP posterior mean")
    ax.fill_between(x, mean - sd, mean + sd, color=ORANGE, alpha=0.25, label="$\\pm$ 1 sd")
    ax.plot(x_obs, y_obs, "o", color=ORANGE, mec="k", ms=5, label="observations")


def figures_2_1_and_2_2(out: Path, seed: int) -> None:
    stream = rng(seed, "figure2.1")
    x_obs = np.sort(stream.uniform(-2.0, 2.0, 6))
    y_obs = np.sin(3 * x_obs) + 0.3 * x_obs**2 + 0.1 * stream.standard_normal(6)
    U_obs = ((x_obs + 2.0) / 4.0)[:, None]
    chain = HyperChain(make_kernel("matern52"), SpearmintPriors(), burnin=100)
    hypers = chain.sample(U_obs, y_obs, 10, stream)
    acquisition = ExpectedImprovement(GPPosterior(chain.kernel, U_obs, y_obs, hypers), y_obs.min())
    x = np.linspace(-2.0, 2.0, 400)
    U = ((x + 2.0) / 4.0)[:, None]
    mean, sd = integrated_mean_sd(acquisition, U)
    truth = np.sin(3 * x) + 0.3 * x**2

    fig, ax = plt.subplots(figsize=(6, 3.2))
    _posterior_panel(ax, x, truth, mean, sd, x_obs, y_obs)
    ax.set(xlabel="$x$", ylabel="$f(x)$", title="Fig. 2.1 — GP posterior")
    ax.legend(fontsize=7, loc="upper center")
    _save(fig, out, "fig2_1_gp_posterior")

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True, height_ratios=(2, 1))
    _posterior_panel(top, x, truth, mean, sd, x_obs, y_obs)
    top.set(ylabel="$f(x)$", title="Fig. 2.2 — GP posterior and expected improvement")
    top.legend(fontsize=7, loc="upper center")
    ei = acquisition(U)
    bottom.plot(x, ei, color="tab:blue")
    bottom.plot(x[np.argmax(ei)], ei.max(), "v", color="tab:red", label="max EI")
    bottom.set(xlabel="$x$", ylabel="EI$(x)$")
    bottom.legend(fontsize=7)
    _save(fig, out, "fig2_2_gp_ei")


def ionosphere_splits(seed: int) -> tuple:
    """(train X, y), (valid X, y), (test X, y): test 1/5, validation 1/5 of the rest, stratified."""
    data = load_dataset("ionosphere")
    seq = seed_sequence(seed, "ionosphere", "figure2.3")
    X_rest, X_test, y_rest, y_test = train_test_split(
        data.X, data.y, test_size=0.2, stratify=data.y, random_state=int_seed(seq)
    )
    X_train, X_valid, y_train, y_valid = train_test_split(
        X_rest, y_rest, test_size=0.2, stratify=y_rest, random_state=int_seed(seq.spawn(1)[0])
    )
    return (X_train, y_train), (X_valid, y_valid), (X_test, y_test)


def svm_width_run(seed: int) -> dict:
    """50 BO iterations on log10(tau); returns the trace and the posterior snapshots."""
    (X_tr, y_tr), (X_va, y_va), (X_te, y_te) = ionosphere_splits(seed)
    space = Space("svm_width", (Real("gamma", TAU_LOW, TAU_HIGH, log=True),))
    opt = GPEIOptimizer(space, N_ITERATIONS, rng(seed, "ionosphere", "figure2.3", "gp"))
    U_plot = np.linspace(0.0, 1.0, 500)[:, None]
    snapshots, valid, test = {}, [], []
    for t in range(1, N_ITERATIONS + 2):
        proposal = opt.ask()
        if t - 1 in SNAPSHOTS:  # the GP given t - 1 results and the EI that picks point t
            mean, sd = integrated_mean_sd(opt.last_acquisition, U_plot)
            ei = opt.last_acquisition(U_plot)
            snapshots[t - 1] = dict(
                X=np.array(opt.X)[:, 0], y=np.array(opt.y), mean=mean, sd=sd, ei=ei,
                next_u=proposal.u[0], next_ei=float(opt.last_acquisition(proposal.u[None])[0]),
            )  # fmt: skip
        if t > N_ITERATIONS:
            break
        model = SVC(C=1.0, gamma=space.decode(proposal.u)["gamma"]).fit(X_tr, y_tr)
        valid.append(float(np.mean(model.predict(X_va) != y_va)))
        test.append(float(np.mean(model.predict(X_te) != y_te)))
        opt.tell(proposal, valid[-1])
    incumbents = [int(np.argmin(valid[: t + 1])) for t in range(N_ITERATIONS)]  # ties: earliest
    return dict(
        u_plot=U_plot[:, 0], snapshots=snapshots, incumbents=incumbents, valid=valid, test=test,
        gammas=[space.decode(u)["gamma"] for u in opt.X],
    )  # fmt: skip


def _log_tau(u: np.ndarray) -> np.ndarray:
    return np.log10(TAU_LOW) + u * (np.log10(TAU_HIGH) - np.log10(TAU_LOW))


def figure_2_3(run: dict, out: Path) -> None:
    fig, axes = plt.subplots(
        2, len(SNAPSHOTS), figsize=(3.2 * len(SNAPSHOTS), 5), sharex=True, height_ratios=(2, 1)
    )
    x = _log_tau(run["u_plot"])
    for col, t in enumerate(SNAPSHOTS):
        snap = run["snapshots"][t]
        top, bottom = axes[0, col], axes[1, col]
        _posterior_panel(top, x, None, snap["mean"], snap["sd"], _log_tau(snap["X"]), snap["y"])
        top.set_title(f"after {t} iterations", fontsize=9)
        bottom.plot(x, snap["ei"], color="tab:blue")
        bottom.plot(_log_tau(snap["next_u"]), snap["next_ei"], "v", color="tab:red")
        bottom.set_xlabel("$\\log_{10} \\tau$")
    axes[0, 0].set_ylabel("validation error")
    axes[1, 0].set_ylabel("EI")
    axes[0, 0].legend(fontsize=6, loc="upper left")
    fig.suptitle("Fig. 2.3 — BO of the RBF-SVM width on Ionosphere (C = 1)", fontsize=10)
    _save(fig, out, "fig2_3_svm_width_snapshots")


def figure_2_4(run: dict, out: Path) -> None:
    t = np.arange(1, N_ITERATIONS + 1)
    incumbents = run["incumbents"]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.step(t, [run["valid"][i] for i in incumbents], where="post", label="validation error")
    ax.step(t, [run["test"][i] for i in incumbents], where="post", label="test error")
    final = run["gammas"][incumbents[-1]]
    ax.set(xlabel="iteration", ylabel="error of the incumbent",
           title=f"Fig. 2.4 — incumbent errors (final $\\tau$ = {final:.4g})")  # fmt: skip
    ax.legend(fontsize=8)
    _save(fig, out, "fig2_4_svm_width_errors")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    missing = missing_datasets(["ionosphere"])
    if missing:  # Figs 2.3-2.4 need it: say so before drawing anything
        print(
            f"error: Figs 2.3-2.4 need the UCI-121 dataset ionosphere: {GET_DATA_HINT}",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    figures_2_1_and_2_2(args.out, args.seed)
    run = svm_width_run(args.seed)
    figure_2_3(run, args.out)
    figure_2_4(run, args.out)
    print(f"wrote Figs 2.1-2.4 to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
