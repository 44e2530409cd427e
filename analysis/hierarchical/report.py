"""The seed-003 report sections (Bermúdez-Chacón 2014, §5): the datasets of Appendix B and what
ran for each, Table 5.1 ours beside the seed's (the seed's columns labelled as such), the cost of
the model-selection stage, Figs 5.1/5.2 (per learner, the defaults' thin box and the optimised
model's thick box of hold-out scores, the models tied with the best in blue, their p-values
against the best in the right margin, the baseline at 0 dotted), Fig 5.3 (the SVM's gamma priors
learned over datasets by Algorithm 4 from the ``priors`` part, :mod:`analysis.hierarchical.priors`,
and the prior file they make) and the seed's claims.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import yaml
from matplotlib.figure import Figure

from analysis.claims import UNDERPOWERED_NOTE, claims_display, records_frame, run_claim
from analysis.hierarchical import claims, data, priors, seed
from analysis.plugins import ReportContext
from analysis.render import FigureSet, format_number, tables_dir
from hpo.data.catalog import SEED003_DATASETS

TIED_COLOUR, OTHER_COLOUR, DEFAULT_COLOUR = "tab:blue", "0.45", "0.7"


def dataset_section(rows: pd.DataFrame, context: ReportContext) -> str:
    """Every dataset of Appendix B: the name it runs as (and how it maps), or why not."""
    ran = {data.SEED_NAME_OF.get(d, d) for d in rows["dataset"]}
    sweep_notes = context.options.get("dataset_notes") or {}
    records = []
    for name, (run_as, how) in SEED003_DATASETS.items():
        if run_as is None:
            status = "not run (no copy here)"
        elif name in ran:
            status = "run"
        elif run_as in sweep_notes:
            status = sweep_notes[run_as]
        else:
            status = "not in this profile"
        records.append(
            {"seed's dataset": name, "run as": run_as or "–", "status": status, "how": how}
        )
    table = pd.DataFrame(records).set_index("seed's dataset")
    return (
        "## Datasets (Appendix B)\n\n"
        "Every set of the seed, mapped to what the framework has offline "
        "(`hpo.data.catalog.SEED003_DATASETS`); none is dropped silently.\n\n"
        + context.write(table, "hierarchical_datasets", "Appendix B's datasets and what ran")
    )


def table_beside_seed(ours: pd.DataFrame) -> pd.DataFrame:
    """Table 5.1: per dataset and method our row, then the seed's row (labelled ``seed``)."""
    reference = seed.table_5_1()
    columns = ["default worst", "default best", "optimized", "boost %", "family"]
    rows = []
    for dataset, frame in ours.groupby("dataset", sort=False):
        label = data.dataset_label(str(frame["run as"].iloc[0]))
        for record in frame.to_dict("records"):
            rows.append({**record, "dataset": label, "source": f"ours, {record['method']}"})
        if dataset in reference.index:
            printed = reference.loc[dataset]
            rows.append(
                {
                    "dataset": label,
                    "source": "seed (Table 5.1)",
                    "default worst": printed["default_worst"],
                    "default best": printed["default_best"],
                    "optimized": printed["optimized"],
                    "boost %": printed["boost_printed"],
                    "family": printed["family"],
                }
            )
    table = pd.DataFrame(rows).set_index(["dataset", "source"])[columns]
    shown = table.copy().astype(object)
    for column in columns[:3]:
        shown[column] = table[column].map(lambda v: format_number(v, 4))
    shown["boost %"] = table["boost %"].map(lambda v: format_number(v, 2))
    return shown


def table_section(rows: pd.DataFrame, context: ReportContext) -> str:
    ours = data.table_5_1(rows)
    if ours.empty:
        return "## Table 5.1\n\nNo run with a model-selection stage in these results.\n"
    shown = table_beside_seed(ours)
    return (
        "## Table 5.1: defaults against the optimised model\n\n"
        "Performance index S (eq. 3.7: accuracy, macro-F1, Brier, MCC, weights 1/4; 0 = the "
        "class-frequency baseline, 1 = ideal), mean over the CV folds of the hold-out part H. "
        "*Default worst/best*: the lowest and highest of the 17 learners at scikit-learn's "
        "defaults; *optimized*: the model ranked first by the cascade; *boost* = (optimized − "
        "best) / best × 100. Rows *seed (Table 5.1)* are the seed's printed numbers (8 hours per "
        "dataset, its own data files, scikit-learn 0.14), not ours; the seed does not say which "
        "optimiser produced them.\n\n"
        + context.write(shown, "hierarchical_table_5_1", "Table 5.1, ours beside the seed's", ours)
    )


def cost_section(rows: pd.DataFrame, context: ReportContext) -> str:
    table = data.cost_table(rows)
    if table.empty:
        return ""
    share = table["CV fits s"].sum() / table["run s"].sum() * 100
    shown = table.set_index(["dataset", "method"]).map(lambda v: format_number(v, 1))
    return (
        "## Cost of the model-selection stage\n\n"
        f"The stage's CV fits on H took {share:.0f} % of the runs' seconds in total (the cascade "
        "itself is a fraction of a second; docs/hierarchical.md, Speed).\n\n"
        + context.write(shown, "hierarchical_cost", "Seconds per run", table)
    )


def _learner_boxes(rows: pd.DataFrame, dataset: str, method: str) -> pd.DataFrame:
    """Per learner (seed's name): the defaults' scores and the optimised model's (its best
    candidate at the root, else its best candidate by mean), its p-value and tied flag."""
    defaults = data.defaults_of(rows, dataset).set_index("learner")
    mine = rows[
        (rows["dataset"] == dataset) & (rows["method"] == method) & (rows["ms_kind"] == "optimized")
    ]
    records = []
    for learner in sorted(set(defaults.index) | set(mine["learner"])):
        candidates = mine[mine["learner"] == learner]
        ranked = candidates[candidates["ms_rank"].notna()].sort_values("ms_rank", kind="stable")
        pick = (
            ranked
            if len(ranked)
            else candidates.sort_values("ms_holdout_mean", ascending=False, kind="stable")
        )
        best = pick.iloc[0] if len(pick) else None
        records.append(
            {
                "learner": data.SEED_FAMILY.get(learner, learner),
                "default": defaults.loc[learner, "scores"] if learner in defaults.index else None,
                "optimized": None if best is None else best["scores"],
                "p_value": np.nan if best is None else best["ms_p_value"],
                "tied": best is not None and _tied(best["ms_tied"]),
            }
        )
    return pd.DataFrame(records)


def _tied(flag: object) -> bool:
    """The cascade's tied flag as read from the runs' files: a Python or a numpy boolean (a
    file whose column has no null gives numpy's), or None/NaN for a model it did not rank."""
    return bool(pd.notna(flag) and flag)


def boxes_figure(boxes: pd.DataFrame, title: str) -> Figure:
    """Fig 5.1/5.2: one row per learner, the defaults thin (grey) and the optimised model thick
    (blue when tied with the best), the p-value against the best at the right margin, the
    baseline (index 0) dotted."""
    figure = Figure(figsize=(8, 0.42 * len(boxes) + 1.4), layout="constrained")
    ax = figure.subplots()
    for i, row in enumerate(boxes.itertuples()):
        y = len(boxes) - i
        if row.default is not None:
            ax.boxplot(
                [row.default], positions=[y + 0.18], orientation="horizontal", widths=0.12,
                patch_artist=True, boxprops={"facecolor": DEFAULT_COLOUR, "linewidth": 0.6},
                medianprops={"color": "k", "linewidth": 0.6}, flierprops={"markersize": 2},
            )  # fmt: skip
        if row.optimized is not None:
            colour = TIED_COLOUR if row.tied else OTHER_COLOUR
            ax.boxplot(
                [row.optimized], positions=[y - 0.12], orientation="horizontal", widths=0.32,
                patch_artist=True, boxprops={"facecolor": colour, "linewidth": 1.2},
                medianprops={"color": "k"}, flierprops={"markersize": 3},
            )  # fmt: skip
        if np.isfinite(row.p_value):
            ax.annotate(
                f"p={row.p_value:.3g}", (1.01, y), xycoords=("axes fraction", "data"),
                va="center", fontsize=7, color=TIED_COLOUR if row.tied else "k",
            )  # fmt: skip
    ax.axvline(0.0, linestyle=":", color="k", linewidth=1)
    ax.set_yticks(range(len(boxes), 0, -1), boxes["learner"].tolist(), fontsize=8)
    ax.set_xlabel("performance index S on the hold-out folds")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    return figure


def figures_section(rows: pd.DataFrame, context: ReportContext) -> str:
    figures = FigureSet(context.out_dir)
    optimized = rows[rows["ms_kind"] == "optimized"]
    for (dataset, method), _ in optimized.groupby(["dataset", "method"], sort=True):
        boxes = _learner_boxes(rows, str(dataset), str(method))
        label = data.METHOD_NAMES.get(str(method), str(method))
        name = data.dataset_label(str(dataset))
        seed_name = data.SEED_NAME_OF.get(str(dataset), str(dataset))
        table = boxes.assign(
            default_mean=[np.mean(s) if s is not None else np.nan for s in boxes["default"]],
            optimized_mean=[np.mean(s) if s is not None else np.nan for s in boxes["optimized"]],
        ).drop(columns=["default", "optimized"])
        figures.add(
            boxes_figure(boxes, f"{name}, {label}: α = {claims.ALPHA}"),
            f"hierarchical_boxes_{seed_name}_{method}",
            f"Figs 5.1/5.2 layout, {name}, {label}: per learner the defaults (thin, grey) "
            "and the optimised model (thick; blue = not significantly worse than the best, "
            "p-value vs the best at the right); dotted: the baseline",
            {"summary": table.set_index("learner")},
        )
    return (
        "## Figs 5.1/5.2: defaults and optimised models per learner\n\n"
        "The optimised box of a learner is its model that reached the root of Algorithm 3 (its "
        "best one), else its best candidate by mean; a learner without a candidate shows its "
        "defaults only.\n\n" + "\n".join(figures.markdown)
    )


def prior_section(context: ReportContext) -> tuple[str, pd.DataFrame]:
    """Fig 5.3 and the learned prior file, from the ``priors`` part (Algorithm 4); the claim
    records on the learned priors (*not evaluated* without the part)."""
    head = "## Fig 5.3: general priors of the SVM's gamma learned over datasets (Algorithm 4)\n\n"
    space = priors.run_space(context.source)
    learned = priors.NOTHING_LEARNED if space is None else priors.learn(context.source, space)
    records = records_frame(run_claim(claim, learned) for claim in priors.CLAIMS)
    if space is None:
        return head + "No run of the `priors` part in these results: nothing to learn.\n", records
    if not learned.learned:
        return head + "No value of `svm__gamma` was accepted: no prior learned.\n", records
    prior = yaml.safe_dump(priors.learned_prior_file(learned, space), sort_keys=False)
    (tables_dir(context.out_dir) / "learned_priors.yaml").write_text(prior)
    figures = FigureSet(context.out_dir)
    figures.add(
        partial(priors.figure, learned),
        "fig5_3_learned_gamma_priors",
        "Fig 5.3 (ours): the learned general prior of the SVM's gamma per signature (kernel, "
        "shrinking), over the values the `priors` runs evaluated (grey)",
    )
    datasets = ", ".join(sorted(set(learned.observations["dataset"])))
    table = priors.summary(learned).set_index(["kernel", "shrinking"])
    return (
        head + f"Learned from {len(learned.observations)} evaluations of the SVM's subtree on "
        f"{datasets} (in this order; a value accepted with probability equal to its index, "
        "then COMBINE and SIMPLIFY, `hpo.space.prior_learning`). The prior file "
        "[tables/learned_priors.yaml](tables/learned_priors.yaml) gives `pds` these priors "
        "(`optimizer.settings.priors`), the runs' sampling prior elsewhere.\n\n"
        + context.write(
            table.map(lambda v: format_number(v, 3) if isinstance(v, float) else v),
            "learned_gamma_priors",
            "Learned priors of svm__gamma per signature",
            table,
        )
        + "\n"
        + "\n".join(figures.markdown),
        records,
    )


def claims_section(rows: pd.DataFrame, context: ReportContext, extra: pd.DataFrame) -> str:
    records = records_frame(run_claim(claim, rows) for claim in claims.CLAIMS)
    records = pd.concat([records, extra])
    shown, tally = claims_display(records)
    return (
        "## The seed's claims\n\n"
        f"Read on the {claims.METHOD} runs (the seed's random search). {UNDERPOWERED_NOTE} "
        f"{tally}.\n\n"
        + context.write(shown, "hierarchical_claims", "Claims checklist (seed 003, §5)", records)
    )


def sections(context: ReportContext) -> list[str]:
    """The report's Markdown sections, title first."""
    rows = data.selection_rows(context.source)
    prior_text, prior_claims = prior_section(context)
    return [
        "# Seed 003: hierarchical priors, the performance index and statistical model "
        "selection (Bermúdez-Chacón 2014) — reproduction\n",
        "Methods: HRS = `hrs` (hierarchical random search, §3.4(a)), PDS = `pds` "
        "(parametric-density sampler, §3.4(c)), HC = `hypercube` (shrinking hypercube, "
        "§3.4(b)); the 17-learner tree `conf/space/seed003.yaml`; S/H = 50/50; the cascade "
        "(Algorithm 2) at α = 0.05. Details, decisions and deviations: docs/hierarchical.md.\n",
        dataset_section(rows, context),
        table_section(rows, context),
        cost_section(rows, context),
        figures_section(rows, context),
        prior_text,
        claims_section(rows, context, prior_claims),
    ]
