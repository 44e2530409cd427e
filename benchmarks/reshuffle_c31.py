"""Claim C3.1 (thesis §3.2.1, Table 3.2): is gp-r better than gp with hold-out, and by how much?

Reads the runs of ``conf/experiment/reshuffle.yaml`` (gp and gp-r paired: same seed, same outer
test split per repetition, same optimizer stream) and reports, per part of the profile and at
each requested budget, the paired comparison the thesis makes (thesis §3.3.1: per dataset the
mean test error over repetitions; a dataset counts for the method with the lower mean):

* datasets where gp-r is better / worse / tied, and the count (better − worse), the thesis's
  Table 3.2 cell (+36 over 118 datasets, hold-out);
* the mean over datasets of gp − gp-r in percentage points, with its standard error;
* the two-sided Wilcoxon signed-rank p (zero differences dropped, as :mod:`analysis.stats`);
* the power: the smallest true mean difference this design detects with 80 % power at
  α = 0.05 two-sided (normal approximation, from the measured SD of the per-dataset differences
  without the datasets whose final retraining reached the fit guard's limit and scored 100 %),
  and how many datasets it would take to detect the thesis's +0.56 pp with the same SD;
* how optimistic each method's incumbent is: mean of (test error − the incumbent's validation
  error), the overfitting the thesis attributes the difference to (§3.3.2);
* for every other part (a variant of GP-EI's noise handling, docs/reshuffling.md "Ablations"),
  what the variant changed against the baseline part (``fractions``), paired by dataset on the
  datasets both have: gp − gp-r, gp alone and gp-r alone, each as mean ± SE in points with the
  signed-rank p.

Thesis reference for the same 87 datasets (|D_TVS| ≤ 1403), from a reading of the thesis's
Appendix B per-dataset tables (not in this repository): gp-r better on 53, worse on 26, mean
+0.56 pp, p = 0.0004.

    python -m benchmarks.reshuffle_c31 --profile local [--parts fractions pm_incumbent]
                                       [--budgets 25 50] [--repetitions 1 2] [--json FILE]
                                       [--per-dataset FILE] [--thesis FILE] [--gp-noise N]

Every part present in the profile's results is reported (``--parts``: only those named).
``--repetitions`` keeps only those repetitions (e.g. the ones a variant was not chosen on).
``--per-dataset FILE`` writes each part's per-dataset means (CSV: part, dataset, gp, gp-r, in %).
``--thesis FILE`` checks each method's own per-dataset agreement with the thesis: a CSV of the
thesis's per-dataset mean test errors (columns ``dataset``, ``method`` (gp / gp-r),
``test_error_pct``, e.g. typed from Appendix B), against which each part's means are compared
method by method (:func:`thesis_agreement`).

``--gp-noise N`` also refits, on the final trace of N runs per (part, method), the GP the
optimizer ends with (Spearmint's chain, 100 burn-in + 10 samples) at loss scales 1 and 50, and
reports what it believes: the noise and the amplitude as standard deviations in percentage
points, beside the binomial standard deviation of a hold-out error on that run's validation size.

``sweep run reshuffle --profile <p>`` produces the runs (docs/reshuffling.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from analysis.load import load_outcomes
from analysis.stats import wilcoxon_pvalue
from experiments.configuration.spaces import space_config
from hpo.gp.kernels import make_kernel
from hpo.gp.slice_sampler import HyperChain, SpearmintPriors
from hpo.space.search_space import space_from_config
from runfiles import layout

THESIS_118 = {"count": 36, "datasets": 118, "p": 0.0001}  # Table 3.2; App. B p (ch2-3 spec §6)
THESIS_87 = {"better": 53, "worse": 26, "mean_pp": 0.56, "p": 0.0004, "datasets": 87}
Z_ALPHA, Z_POWER = scipy_stats.norm.ppf(0.975), scipy_stats.norm.ppf(0.80)


def errors_at(outcomes: pd.DataFrame, budget: int | None) -> pd.DataFrame:
    """Per (part, dataset, repetition, method): test error and incumbent validation error in %
    of the incumbent after ``budget`` evaluations (None: the run's last)."""
    rows = outcomes
    if budget is not None:
        rows = rows[rows["iteration"] <= budget]
    last = rows.groupby(["run_id", "method"])["iteration"].transform("max")
    final = rows[rows["iteration"] == last]
    return final.assign(
        test=100.0 * final["test_error"],
        valid=100.0 * final["incumbent_valid_loss"],
        limit=final["test_fit_limit_hit"].fillna(False).astype(float),
    )[["part", "dataset", "repetition", "method", "iteration", "test", "valid", "limit"]]


def compare(final: pd.DataFrame, first: str = "gp", second: str = "gp-r") -> dict[str, float]:
    """The paired comparison of ``first`` and ``second`` on one part's final rows."""
    runs = final.pivot_table(
        index=["dataset", "repetition"], columns="method", values=["test", "valid", "limit"]
    ).dropna()
    per_dataset = runs["test"].groupby(level="dataset").mean()
    diff = (per_dataset[first] - per_dataset[second]).to_numpy()
    run_diff = (runs["test"][first] - runs["test"][second]).to_numpy()
    n = len(diff)
    sd = float(diff.std(ddof=1)) if n > 1 else float("nan")
    optimism = runs["test"] - runs["valid"]
    # a retraining that reaches the fit guard's iteration limit scores 100 % (docs/deviations.md,
    # "Fit guard"): one such run dominates a mean, so the mean is also given without them
    hit = runs["limit"].max(axis=1).groupby(level="dataset").max().reindex(per_dataset.index) > 0
    clean = diff[~hit.to_numpy()]
    return {
        "datasets": n,
        "repetitions": int(runs.groupby(level="dataset").size().min()) if n else 0,
        "second_better": int((diff > 0).sum()),
        "second_worse": int((diff < 0).sum()),
        "ties": int((diff == 0).sum()),
        "count": int(np.sign(diff).sum()),
        "mean_pp": float(diff.mean()),
        "se_pp": sd / np.sqrt(n),
        "p": wilcoxon_pvalue(per_dataset[first].to_numpy(), per_dataset[second].to_numpy()),
        "datasets_at_fit_limit": int(hit.sum()),
        "mean_pp_without_fit_limit": float(clean.mean()),
        "se_pp_without_fit_limit": float(clean.std(ddof=1) / np.sqrt(len(clean))),
        "median_pp": float(np.median(diff)),
        "sd_dataset_pp": sd,
        "sd_run_pp": float(run_diff.std(ddof=1)) if len(run_diff) > 1 else float("nan"),
        # power from the SD without the fit-limit datasets (an outlier of ~100 pp would make
        # every design look hopeless)
        "detectable_pp": (Z_ALPHA + Z_POWER) * float(clean.std(ddof=1)) / np.sqrt(n),
        "datasets_for_thesis_effect": float(
            np.ceil(((Z_ALPHA + Z_POWER) * float(clean.std(ddof=1)) / THESIS_87["mean_pp"]) ** 2)
        ),
        f"optimism_{first}_pp": float(optimism[first].mean()),
        f"optimism_{second}_pp": float(optimism[second].mean()),
        f"test_{first}_pct": float(per_dataset[first].mean()),
        f"test_{second}_pct": float(per_dataset[second].mean()),
    }


def per_dataset(final: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, each method's mean test error over repetitions (%) and gp − gp-r."""
    means = final.pivot_table(index=["dataset", "repetition"], columns="method", values="test")
    means = means.dropna().groupby(level="dataset").mean()
    return means.assign(diff=means["gp"] - means["gp-r"])


def against_baseline(final: pd.DataFrame, baseline: pd.DataFrame) -> dict[str, float]:
    """What a variant's part changed against the baseline part, paired by dataset (the
    datasets both have): mean ± SE in points and the signed-rank p of the change in gp − gp-r
    (``diff``) and in each method's test error."""
    variant, base = per_dataset(final), per_dataset(baseline)
    shared = variant.index.intersection(base.index)
    record: dict[str, float] = {"paired_datasets": len(shared)}
    for column in ("diff", "gp", "gp-r"):
        after, before = variant.loc[shared, column], base.loc[shared, column]
        change = (after - before).to_numpy()
        record[f"change_{column}_pp"] = float(change.mean())
        record[f"change_{column}_se_pp"] = float(change.std(ddof=1) / np.sqrt(len(change)))
        record[f"change_{column}_p"] = wilcoxon_pvalue(after.to_numpy(), before.to_numpy())
    return record


def outcomes_of(folder: Path, repetitions: list[int] | None = None) -> pd.DataFrame:
    """The sweep's outcomes, only ``repetitions`` when given (one clear error for an absent one)."""
    outcomes = load_outcomes(folder)
    if repetitions is None:
        return outcomes
    present = sorted(int(r) for r in outcomes["repetition"].unique())
    missing = sorted(set(repetitions) - set(present))
    if missing:
        raise ValueError(f"no runs of repetition {missing[0]}; present: {present}")
    return outcomes[outcomes["repetition"].isin(repetitions)]


def report(
    outcomes: pd.DataFrame,
    budgets: list[int | None],
    parts: list[str] | None = None,
    baseline: str = "fractions",
    thesis: pd.DataFrame | None = None,
) -> list[dict[str, object]]:
    """One record per (part, budget) of a sweep's ``outcomes`` (:func:`outcomes_of`), of
    ``parts`` (all present when None); a part other than ``baseline`` also carries
    :func:`against_baseline` when the baseline's runs are there, and every part
    :func:`thesis_agreement` when ``thesis`` is given."""
    present = sorted(outcomes["part"].unique())
    unknown = sorted(set(parts or []) - set(present))
    if unknown:
        raise ValueError(f"no runs of part {unknown[0]!r}; present: {', '.join(present)}")
    records = []
    for budget in budgets:
        final = errors_at(outcomes, budget)
        base = final[final["part"] == baseline]
        for part, rows in final.groupby("part", sort=True):
            if parts and part not in parts:
                continue
            record: dict[str, object] = {"part": part, "budget": budget or "final"}
            record.update(compare(rows))
            if part != baseline and len(base):
                record.update(against_baseline(rows, base))
            if thesis is not None:
                record.update(thesis_agreement(rows, thesis))
            records.append(record)
    return records


def thesis_agreement(final: pd.DataFrame, thesis: pd.DataFrame) -> dict[str, float]:
    """Each method's per-dataset means on one part against the thesis's (``thesis``: columns
    ``dataset``, ``method``, ``test_error_pct``), on the datasets both have: the mean offset
    (ours − thesis) ± SE in points, its signed-rank p and the Spearman correlation over datasets;
    and the thesis's own gp − gp-r split on those datasets, so that the pattern is compared on
    the same set."""
    ours = per_dataset(final)
    theirs = thesis.pivot_table(index="dataset", columns="method", values="test_error_pct")
    record: dict[str, float] = {}
    for method in ("gp", "gp-r"):
        if method not in theirs:
            raise ValueError(f"the thesis file has no rows of method {method!r}")
        shared = ours.index.intersection(theirs[method].dropna().index)
        a, b = ours.loc[shared, method].to_numpy(), theirs.loc[shared, method].to_numpy()
        offset = a - b
        record[f"thesis_{method}_datasets"] = len(shared)
        record[f"thesis_{method}_offset_pp"] = float(offset.mean())
        record[f"thesis_{method}_offset_se_pp"] = float(offset.std(ddof=1) / np.sqrt(len(a)))
        record[f"thesis_{method}_p"] = wilcoxon_pvalue(a, b)
        varies = np.ptp(a) > 0 and np.ptp(b) > 0  # else the correlation is undefined
        record[f"thesis_{method}_spearman"] = (
            float(scipy_stats.spearmanr(a, b).statistic) if varies else float("nan")
        )
    both = theirs[["gp", "gp-r"]].dropna()
    thesis_diff = (both["gp"] - both["gp-r"]).reindex(ours.index).dropna()
    record["thesis_better"] = int((thesis_diff > 0).sum())
    record["thesis_worse"] = int((thesis_diff < 0).sum())
    record["thesis_mean_pp"] = float(thesis_diff.mean())
    return record


def read_thesis(path: Path) -> pd.DataFrame:
    """The thesis's per-dataset means for ``--thesis`` (one clear error if a column is missing)."""
    frame = pd.read_csv(path)
    missing = {"dataset", "method", "test_error_pct"} - set(frame.columns)
    if missing:
        raise ValueError(
            f"{path}: no column {sorted(missing)[0]!r}; needs dataset, method, test_error_pct"
        )
    return frame


def gp_beliefs(run_file: Path, loss_scale: float, seed: int = 0) -> dict[str, float]:
    """The GP fitted to a finished run's whole trace at ``loss_scale``: posterior means of the
    noise and amplitude standard deviations (in pp of the unscaled loss) and of the
    length-scales, and the binomial standard deviation of a hold-out error at that run's
    validation size and mean loss."""
    trace = pd.read_parquet(run_file)
    trace = trace[trace["row_type"] == "trace"]
    space = space_from_config(space_config("svm_rbf"))
    X = trace[[f"u_{name}" for name in space.names]].to_numpy(dtype=float)
    y = trace["valid_loss"].to_numpy(dtype=float)
    chain = HyperChain(make_kernel("matern52", space), SpearmintPriors(), burnin=100)
    hypers = chain.sample(X, y * loss_scale, 10, np.random.default_rng(seed))
    n_valid = float(trace["n_valid"].iloc[0])
    p = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    return {
        "noise_sd_pp": float(100 * np.sqrt(hypers.noise).mean() / loss_scale),
        "amp_sd_pp": float(100 * np.sqrt(hypers.amp2).mean() / loss_scale),
        "ls_mean": float(hypers.ls.mean()),
        "binomial_sd_pp": 100 * np.sqrt(p * (1 - p) / n_valid),
    }


def beliefs_table(folder: Path, n_runs: int) -> pd.DataFrame:
    """:func:`gp_beliefs` at scales 1 and 50 for the first ``n_runs`` runs (in dataset order)
    of each (part, method) of a sweep folder; one row per (part, method, scale), means."""
    rows = []
    for part_dir in sorted((folder / layout.RUNS).iterdir()):
        for method in ("gp", "gp-r"):
            files = sorted(part_dir.glob(f"*/{method}__*.parquet"))[:n_runs]
            for scale in (1.0, 50.0):
                values = pd.DataFrame([gp_beliefs(f, scale) for f in files])
                rows.append(
                    {"part": part_dir.name, "method": method, "scale": scale, "runs": len(files)}
                    | values.mean().to_dict()
                )
    return pd.DataFrame(rows)


def _print(records: list[dict[str, object]]) -> None:
    print(
        f"thesis, 118 datasets (Table 3.2): count(gp-r, gp) = +{THESIS_118['count']}, "
        f"p = {THESIS_118['p']}; on the 87 with |D_TVS| <= 1403 (App. B): "
        f"{THESIS_87['better']} better / {THESIS_87['worse']} worse, "
        f"+{THESIS_87['mean_pp']} pp, p = {THESIS_87['p']}"
    )
    for r in records:
        print(
            f"[{r['part']}, budget {r['budget']}] {r['datasets']} datasets x "
            f"{r['repetitions']} rep: gp-r better {r['second_better']}, worse "
            f"{r['second_worse']}, tied {r['ties']} (count {r['count']:+d}); mean gp - gp-r = "
            f"{r['mean_pp']:+.2f} ± {r['se_pp']:.2f} pp (median {r['median_pp']:+.2f}; "
            f"{r['mean_pp_without_fit_limit']:+.2f} ± {r['se_pp_without_fit_limit']:.2f} without "
            f"the {r['datasets_at_fit_limit']} datasets whose retraining reached the fit "
            f"limit), signed-rank p = {r['p']:.3g}; "
            f"SD per dataset {r['sd_dataset_pp']:.2f} pp (per run {r['sd_run_pp']:.2f}); "
            "without the fit-limit datasets: "
            f"detectable at 80 % power: {r['detectable_pp']:.2f} pp; datasets needed for "
            f"+0.56 pp: {r['datasets_for_thesis_effect']:.0f}; optimism (test - valid) gp "
            f"{r['optimism_gp_pp']:+.2f}, gp-r {r['optimism_gp-r_pp']:+.2f} pp; mean test "
            f"gp {r['test_gp_pct']:.2f} %, gp-r {r['test_gp-r_pct']:.2f} %"
        )
        if "paired_datasets" in r:
            changes = ", ".join(
                f"{label} {r[f'change_{key}_pp']:+.2f} ± {r[f'change_{key}_se_pp']:.2f} pp "
                f"(p = {r[f'change_{key}_p']:.3g})"
                for key, label in (("diff", "gp - gp-r"), ("gp", "gp"), ("gp-r", "gp-r"))
            )
            print(f"    against fractions on {r['paired_datasets']} datasets: {changes}")
        if "thesis_gp_datasets" in r:
            agreement = ", ".join(
                f"{m} {r[f'thesis_{m}_offset_pp']:+.2f} ± {r[f'thesis_{m}_offset_se_pp']:.2f} pp "
                f"(p = {r[f'thesis_{m}_p']:.3g}, Spearman {r[f'thesis_{m}_spearman']:.2f}, "
                f"{r[f'thesis_{m}_datasets']} datasets)"
                for m in ("gp", "gp-r")
            )
            print(
                f"    against the thesis's per-dataset means (ours - thesis): {agreement}; the "
                f"thesis's own split there: {r['thesis_better']} / {r['thesis_worse']}, "
                f"{r['thesis_mean_pp']:+.2f} pp"
            )


def write_per_dataset(outcomes: pd.DataFrame, parts: list[str] | None, path: Path) -> None:
    """Each part's per-dataset means at the final budget (CSV), for checks against values
    outside this repository (the thesis's Appendix B)."""
    final = errors_at(outcomes, None)
    frames = [
        per_dataset(rows).reset_index().assign(part=part)
        for part, rows in final.groupby("part", sort=True)
        if not parts or part in parts
    ]
    table = pd.concat(frames)[["part", "dataset", "gp", "gp-r"]]
    table.round(4).to_csv(path, index=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="local")
    parser.add_argument("--results-root", type=Path, default=layout.RESULTS_ROOT)
    parser.add_argument("--parts", nargs="*", default=None, help="default: every part present")
    parser.add_argument("--budgets", type=int, nargs="*", default=[], help="besides the final")
    parser.add_argument("--repetitions", type=int, nargs="*", default=None, help="only these")
    parser.add_argument("--json", type=Path, default=None, help="also write the records here")
    parser.add_argument("--per-dataset", type=Path, default=None, help="CSV of per-dataset means")
    parser.add_argument("--thesis", type=Path, default=None, help="the thesis's per-dataset CSV")
    parser.add_argument("--gp-noise", type=int, default=0, help="refit the GP on N runs' traces")
    args = parser.parse_args(argv)
    folder = layout.sweep_dir("reshuffle", args.profile, args.results_root)
    try:
        thesis = read_thesis(args.thesis) if args.thesis else None
        outcomes = outcomes_of(folder, args.repetitions)
        records = report(outcomes, [*args.budgets, None], args.parts, "fractions", thesis)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    _print(records)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1, default=float))
    if args.per_dataset:
        write_per_dataset(outcomes, args.parts, args.per_dataset)
    if args.gp_noise:
        print(beliefs_table(folder, args.gp_noise).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
