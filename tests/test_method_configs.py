"""The method configs (conf/optimizer/*.yaml) against the definitions of the thesis and the
papers it builds on, and which methods share one run in the Chapter-3 experiment.

Definitions (Lévesque 2018, §3.3-3.4, Table 3.1; §3.4.1 for gp-pm / gp-pm-r): ``-r`` reshuffles
the training/validation split every iteration (every generation for CMA-ES); ``-sel`` and the
CMA-ES rules ``-pv`` (partial validation, Eq. 3.6), ``-bw`` (backwarding, Eq. 3.7) and ``-gv``
(global validation, Eq. 3.8) hold out a selection split; ``-pm`` returns the minimiser of the GP
posterior mean; every other method returns its best validation error. Beyond Chapter 3:
``smac`` (thesis §5.5: SMAC, best validation), ``esmbo`` and ``ers`` (Lacoste et al., UAI 2014:
the agnostic-Bayes ensemble of a GP-EI round robin over bootstraps, or of a random search, and
the same run's best single model) and ``smbo`` (the paper's GP-EI baseline), with the paper's
SVM space and protocol by default. Chapter 5 (§5.5, Table 5.2): the GP variants by kernel
(Matérn-5/2, conditional Eq. 5.9, Laplace Eq. 5.15), imputation (§5.3.1) and acquisition
optimizer (random candidates or local search, §5.3.2), with Chapter 5's priors, space and protocol.
Chapter 4 (§4.4, method names of Tables 4.3-4.6): ``-best`` = the single best model, ``-post`` =
the post-hoc ensemble (post_hoc rule) over the same run, EO = the ensemble of Alg. 4.1 (eo rule)
with the squared margin (EO, EO-sqm), the adapted C-bound (EO-C) or the sigmoid loss (EO-sig);
the scikit-learn space and Chapter 4's protocol by default, BO-best's GP = GP-matern-ls's there
and Spearmint's in the SVM space (§4.4.1).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from experiments.configuration.compose import compose_run
from experiments.configuration.config import CONF_DIR
from experiments.sweep import load_experiment, plan

# method: (family, reshuffle, selection split, rule or {reported method: rule})
THESIS_METHODS: dict[str, tuple[str, bool, bool, str | dict[str, str]]] = {
    "grid": ("grid", False, False, "best_validation"),
    "rs": ("rs", False, False, "best_validation"),
    "gp": ("gp", False, False, "best_validation"),
    "gp-r": ("gp", True, False, "best_validation"),
    "gp-sel": ("gp", False, True, "best_selection"),
    "gp-sel-r": ("gp", True, True, "best_selection"),
    "gp-pm": ("gp", False, False, "posterior_mean"),
    "gp-pm-r": ("gp", True, False, "posterior_mean"),
    "cma": ("cma", False, False, "best_validation"),
    "cma-r": ("cma", True, False, "best_validation"),
    "cma-pv": ("cma", False, True, "partial_validation"),
    "cma-pv-r": ("cma", True, True, "partial_validation"),
    "cma-bw": ("cma", False, True, "backwarding"),
    "cma-bw-r": ("cma", True, True, "backwarding"),
    "cma-gv": ("cma", False, True, "global_validation"),
    "cma-gv-r": ("cma", True, True, "global_validation"),
    "smac": ("smac", False, False, {"SMAC": "best_validation"}),
    # beyond the thesis: SMAC3's BlackBoxFacade beside its SMAC (docs/optimizers.md)
    "smac_blackbox": ("smac", False, False, {"smac_blackbox": "best_validation"}),
    "spearmint": ("gp", False, False, {"Spearmint": "best_validation"}),
    "gp_matern_noimp": ("gp", False, False, {"GP-matern-noimpute": "best_validation"}),
    "gp_matern": ("gp", False, False, {"GP-matern": "best_validation"}),
    "gp_cond": ("gp", False, False, {"GP-cond": "best_validation"}),
    "gp_laplace": ("gp", False, False, {"GP-laplace": "best_validation"}),
    "gp_matern_ls": ("gp", False, False, {"GP-matern-ls": "best_validation"}),
    "gp_cond_ls": ("gp", False, False, {"GP-cond-ls": "best_validation"}),
    "gp_laplace_ls": ("gp", False, False, {"GP-laplace-ls": "best_validation"}),
    "esmbo": (
        "esmbo",
        False,
        False,
        {"esmbo": "agnostic_bayes", "esmbo-argmin": "best_validation"},
    ),
    "ers": ("rs", False, False, {"ers": "agnostic_bayes", "ers-argmin": "best_validation"}),
    "bo_best": ("gp", False, False, {"BO-best": "best_validation"}),
    "bo_post": ("gp", False, False, {"BO-post": "post_hoc"}),
    "rs_best": ("rs", False, False, {"RS-best": "best_validation"}),
    "rs_post": ("rs", False, False, {"RS-post": "post_hoc"}),
    "eo": ("eo", False, False, {"EO": "eo"}),
    "eo_post": ("eo", False, False, {"EO-post": "post_hoc"}),
    "eo_sqm": ("eo", False, False, {"EO-sqm": "eo"}),
    "eo_c": ("eo", False, False, {"EO-C": "eo"}),
    "eo_sig": ("eo", False, False, {"EO-sig": "eo"}),
    "smbo": ("gp", False, False, {"smbo": "best_validation"}),
    "hyperband": ("hyperband", False, False, {"hyperband": "best_validation"}),  # seed 002
    "tpe": ("tpe", False, False, {"tpe": "best_validation"}),  # seed 002
    "bohb": ("bohb", False, False, {"bohb": "best_validation"}),  # beyond seed 002
    "skopt-gp": ("surrogate", False, False, {"skopt-gp": "best_validation"}),  # seed 002
    "skopt-rf": ("surrogate", False, False, {"skopt-rf": "best_validation"}),  # seed 002
    # seed 003 (docs/hierarchical.md): its tree, its protocol, the index and the selection stage
    "hrs": ("prior_rs", False, False, {"HRS": "best_validation"}),
    "pds": ("pds", False, False, {"PDS": "best_validation"}),
    "hypercube": ("hypercube", False, False, {"HC": "best_validation"}),
    # seed 004 (docs/autoweka.md): the CASH families, the seed's protocol with its 30 % diagnostic
    **{
        f"aw_{name}": (f"cash_{family}", False, True, {f"aw_{name}": "best_validation"})
        for name, family in (
            ("exdef", "exdef"),
            ("grid", "grid"),
            ("random", "random"),
            ("smac", "smac"),
            ("tpe", "tpe"),
            ("tpe_gamma015", "tpe"),
            ("irace", "irace"),
            ("smac_10batch", "smac_batch"),
            ("smac_multilevel", "smac"),
            ("smac_rrsv", "smac"),
            ("smac_long", "smac"),
        )
    },  # fmt: skip
    # beyond the studies: Optuna's samplers through the optuna adapter (docs/optimizers.md)
    **{
        f"optuna_{name}": ("optuna", False, False, {f"optuna_{name}": "best_validation"})
        for name in ("tpe", "gp", "cmaes", "qmc")
    },
    # beyond the studies: CARP-S's optimizers through the carps adapter (docs/optimizers.md)
    **{
        f"carps_{name}": ("carps", False, False, {f"carps_{name}": "best_validation"})
        for name in ("random", "nevergrad_de", "nevergrad_ngopt")
    },
}
SEED003_DEFAULTS = {"hrs", "pds", "hypercube"}
CHAPTER3_METHODS = list(THESIS_METHODS)[:16]
# Chapter 5's GP variants (thesis §5.5): kernel, acquisition optimizer, imputation; all but
# Spearmint use Chapter 5's priors and start from random valid configurations.
CHAPTER5_GP = {
    "gp_matern_noimp": ("matern52", "random", False),
    "gp_matern": ("matern52", "random", True),
    "gp_cond": ("conditional", "random", True),
    "gp_laplace": ("laplace", "random", True),
    "gp_matern_ls": ("matern52", "local_search", True),
    "gp_cond_ls": ("conditional", "local_search", True),
    "gp_laplace_ls": ("laplace", "local_search", True),
}
CHAPTER5_DEFAULTS = {*CHAPTER5_GP, "spearmint", "smac", "smac_blackbox"}
# Chapter 4's methods (thesis §4.4): the EO loss of each (None: not EO)
CHAPTER4_LOSS = {
    "bo_best": None,
    "bo_post": None,
    "rs_best": None,
    "rs_post": None,
    "eo": "sqm",
    "eo_post": "sqm",
    "eo_sqm": "sqm",
    "eo_c": "cbound",
    "eo_sig": "sigmoid",
}
# their GP in each space: scikit-learn = GP-matern-ls (§4.4.2), SVM = Spearmint's (§4.4.1)
CHAPTER4_GP = {
    "sklearn_cash": {"acquisition_optimizer": "local_search", "priors": "lognormal"},
    "svm_kernels": {"acquisition_optimizer": "grid_lbfgs", "priors": "spearmint"},
}
UAI2014_DEFAULTS = {"esmbo", "ers", "smbo"}  # the ESMBO paper's SVM space and 0.4/0.3/0.3 split
# seed 002's methods: its MNIST space; Hyperband's budget is its own plan's (§2.1.2)
SEED002_DEFAULTS = {"hyperband", "bohb", "tpe", "skopt_gp", "skopt_rf"}
OWN_BUDGET = {"hyperband", "bohb", "tpe", "skopt_gp", "skopt_rf"}  # the seed's 10 MNIST evaluations
CONFIGS = sorted(p.stem for p in (CONF_DIR / "optimizer").glob("*.yaml"))


def _method(config_name: str) -> str:
    if config_name in CHAPTER5_DEFAULTS or config_name in CHAPTER4_LOSS:
        return config_name
    if config_name.startswith(("aw_", "optuna_", "carps_")) or config_name == "smac_blackbox":
        return config_name
    return config_name.replace("_", "-")


def test_there_is_one_config_per_thesis_method_and_no_other() -> None:
    assert sorted(_method(c) for c in CONFIGS) == sorted(THESIS_METHODS)


@pytest.mark.parametrize("config_name", CONFIGS)
def test_method_config_matches_the_thesis_definition(config_name: str) -> None:
    method = _method(config_name)
    family, reshuffle, selection_split, rule = THESIS_METHODS[method]
    rules = rule if isinstance(rule, dict) else {method: rule}
    raw = yaml.safe_load(Path(CONF_DIR / "optimizer" / f"{config_name}.yaml").read_text())
    assert raw["name"] == method
    assert raw["rules"] == rules
    # the run the command line builds from it (the composition path of run.py and sweeps)
    spec = compose_run([f"optimizer={config_name}", "dataset=iris"])
    assert spec.method.optimizer == family
    assert spec.task.protocol.reshuffle is reshuffle
    assert spec.task.protocol.selection_split is selection_split
    assert dict(spec.method.rules) == rules
    if config_name in CHAPTER5_DEFAULTS:  # Chapter 5's space and protocol unless overridden
        assert (spec.task.space_name, spec.task.protocol_name) == ("sklearn_cash", "chapter5")
        assert spec.task.protocol.standardize and spec.task.protocol.n_folds == 5
        assert spec.task.protocol.test_frac == 0.2
    elif config_name in CHAPTER4_LOSS:  # Chapter 4's scikit-learn space and protocol
        assert (spec.task.space_name, spec.task.protocol_name) == ("sklearn_cash", "chapter4")
        assert spec.task.protocol.standardize and spec.task.protocol.n_folds == 5
        assert (
            spec.task.protocol.test_frac == pytest.approx(1 / 3)
            and spec.task.protocol.train_cap is None
        )
    elif config_name in SEED003_DEFAULTS:
        assert (spec.task.space_name, spec.task.protocol_name) == ("seed003", "seed003")
        assert (spec.task.protocol.n_folds, spec.task.protocol.test_frac) == (10, 0.5)
        assert (
            spec.task.objective["name"] == "performance_index"
            and "model_selection" in spec.method.stages
        )
        assert spec.task.fit_guard.on_limit == "keep"
    elif config_name in UAI2014_DEFAULTS:
        assert (spec.task.space_name, spec.task.protocol_name) == ("esmbo_svm", "esmbo")
        assert (spec.task.protocol.validation, spec.task.protocol.test_frac) == ("holdout", 0.3)
    elif config_name in SEED002_DEFAULTS:
        assert (spec.task.space_name, spec.task.protocol_name) == ("ffnn_mnist", "holdout")
    elif config_name.startswith("aw_"):  # seed 004 §4.1: 30 % test, 30 % diagnostic, 10 folds
        assert (spec.task.space_name, spec.task.protocol_name) == (
            "autoweka_classification",
            "autoweka",
        )
        assert (spec.task.protocol.n_folds, spec.task.protocol.test_frac) == (10, 0.3)
        assert (spec.task.protocol.selection_frac, spec.task.protocol.train_cap) == (0.3, None)
        assert (spec.budget.seconds, spec.budget.clock) == (60, "cpu")
    else:
        assert spec.task.space_name == "svm_rbf" and not spec.task.protocol.standardize
    if config_name in CHAPTER5_GP:
        kernel, acquisition, impute = CHAPTER5_GP[config_name]
        settings = spec.method.settings
        assert settings["kernel"] == kernel
        assert settings["acquisition_optimizer"] == acquisition
        assert settings.get("impute", True) is impute
        assert (settings["priors"], settings["initial_design"]) == ("lognormal", "random_valid")
    if config_name in CHAPTER4_LOSS:
        _check_chapter4_settings(config_name, spec.method.settings, "sklearn_cash")
        svm = compose_run([f"optimizer={config_name}", "dataset=iris", "space=svm_kernels"])
        assert (svm.task.space_name, svm.task.protocol_name) == ("svm_kernels", "chapter4")
        _check_chapter4_settings(config_name, svm.method.settings, "svm_kernels")
    if config_name == "spearmint":  # Spearmint's own priors and grid + L-BFGS-B, no imputation
        assert spec.method.settings == {"impute": False}


def _check_chapter4_settings(config_name: str, settings: dict, space: str) -> None:
    """BO-best's and EO's GP is GP-matern-ls's in the scikit-learn space (the runs Chapter 4
    shares with Chapter 5, §1.10 of the spec; EO's imputation as BO-best's [decide]) and
    Spearmint's GP-EI in the SVM space (§4.4.1); EO has m = 12 and its loss."""
    family = THESIS_METHODS[config_name][0]
    if family == "rs":
        assert settings == {}
        return
    for key, value in CHAPTER4_GP[space].items():
        assert settings[key] == value, (config_name, space, key)
    if family == "gp":
        matern_ls = compose_run(["optimizer=gp_matern_ls", "dataset=iris"]).method.settings
        if space == "sklearn_cash":
            assert settings == matern_ls
        else:  # Spearmint's GP-EI: the gp family's defaults
            assert settings["initial_design"] == "sobol" and settings["kernel"] == "matern52"
    else:
        assert settings["loss"] == CHAPTER4_LOSS[config_name]
        assert settings["ensemble_size"] == 12
        design = "random_valid" if space == "sklearn_cash" else "random"
        assert settings["initial_design"] == design


def test_chapter4_post_methods_share_the_run_of_their_best_method() -> None:
    """BO-post, RS-post and EO-post differ from BO-best, RS-best and EO only by their rule (one
    run in a sweep), in both spaces."""
    for space in ("sklearn_cash", "svm_kernels"):
        for best, post in (("bo_best", "bo_post"), ("rs_best", "rs_post"), ("eo", "eo_post")):
            a, b = (
                compose_run([f"optimizer={c}", "dataset=iris", f"space={space}"])
                for c in (best, post)
            )
            assert {**a.identity(), "rules": None} == {**b.identity(), "rules": None}


def test_chapter4_and_5_methods_default_to_200_evaluations_chapter3_to_100() -> None:
    """Thesis §4.4 and §5.5: budget 200; §3.3: 100. A command-line budget wins."""
    for config_name in CONFIGS:
        budget = compose_run([f"optimizer={config_name}"]).budget.evaluations
        raw = yaml.safe_load(Path(CONF_DIR / "optimizer" / f"{config_name}.yaml").read_text())
        assert budget == raw.get("budget", 100), config_name
        own = config_name in OWN_BUDGET or config_name.startswith("aw_")  # seed 004: seconds
        assert budget in (100, 150, 200) or own, config_name
        if _method(config_name) in CHAPTER3_METHODS:
            assert budget == 100, config_name
    assert {compose_run([f"optimizer={c}"]).budget.evaluations for c in CHAPTER5_DEFAULTS} == {200}
    assert compose_run(["optimizer=gp_cond_ls", "budget=20"]).budget.evaluations == 20


def test_a_command_line_space_or_protocol_wins_over_a_methods_defaults() -> None:
    spec = compose_run(["optimizer=gp_matern_ls", "space=svm_kernels", "protocol=cv5"])
    assert (spec.task.space_name, spec.task.protocol_name) == ("svm_kernels", "cv5")
    spec = compose_run(["optimizer=rs", "space=sklearn_cash"])
    assert (spec.task.space_name, spec.task.protocol_name) == ("sklearn_cash", "holdout")


def _shared_runs(part: str, tmp_path: Path) -> dict[tuple, set[frozenset[str]]]:
    """For each (protocol, dataset, repetition) of ``part``: the method sets of its runs."""
    runs = defaultdict(set)
    for run in plan("chapter3", "smoke", results_root=tmp_path):
        if run.part == part:
            key = (run.spec.task.protocol_name, run.spec.task.dataset, run.spec.repetition)
            runs[key].add(frozenset(run.spec.method.rules))
    return runs


def test_chapter3_main_part_runs_each_method_once_and_cma_rules_share_their_run(
    tmp_path: Path,
) -> None:
    expected = {
        frozenset(group)
        for group in (
            ["grid"],
            ["rs"],
            ["gp"],
            ["gp-sel"],
            ["gp-r"],
            ["gp-sel-r"],
            ["cma"],
            ["cma-r"],
            ["cma-pv", "cma-bw", "cma-gv"],
            ["cma-pv-r", "cma-bw-r", "cma-gv-r"],
        )
    }
    runs = _shared_runs("main", tmp_path)
    assert len(runs) == 5 * 2 * 2  # smoke: 5 datasets x {holdout, cv5} x 2 repetitions
    for key, groups in runs.items():
        assert groups == expected, key


def test_chapter3_pm_part_reads_gp_pm_from_the_gp_runs(tmp_path: Path) -> None:
    expected = {
        frozenset(["grid"]),
        frozenset(["rs"]),
        frozenset(["gp", "gp-pm"]),
        frozenset(["gp-r", "gp-pm-r"]),
    }
    runs = _shared_runs("pm", tmp_path)
    assert len(runs) == 5 * 2 * 2
    for key, groups in runs.items():
        assert groups == expected, key


def test_chapter3_runs_its_gp_methods_noiseless_and_nothing_else(tmp_path: Path) -> None:
    """Chapter 3's GP-EI runs with Spearmint's noiseless option in every profile (the setting is
    the experiment's, not a profile's; docs/reshuffling.md, "Decision"); its other methods, and
    the `gp` optimizer run alone, are untouched."""
    gp_methods = {"gp", "gp_sel", "gp_r", "gp_sel_r", "gp_pm", "gp_pm_r"}
    config = load_experiment("chapter3")
    assert set(config["method_overrides"]) == gp_methods
    assert all("method_overrides" not in p for p in _all_parts(config))
    for run in plan("chapter3", "smoke", results_root=tmp_path):
        gp = next(iter(run.spec.method.rules)).startswith("gp")
        assert run.spec.method.settings.get("fixed_noise") == (1e-3 if gp else None), run.path
    alone = compose_run(["optimizer=gp", "dataset=sklearn-iris"])
    assert "fixed_noise" not in alone.method.settings


def _all_parts(config: dict) -> list[dict]:
    return [part for profile in config["profiles"].values() for part in profile["parts"].values()]
