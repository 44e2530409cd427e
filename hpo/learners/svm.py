"""Chapter 4's SVM with a choice of kernel (thesis §4.4.1), libsvm through scikit-learn.

Kernels: linear ``x.x'``, RBF ``exp(-gamma |x - x'|^2)``, polynomial ``(g x.x' + coef0)^degree``
and sigmoid ``tanh(gamma x.x' + coef0)``. The thesis tunes C for every kernel, the width
``tau_RBF`` (scikit-learn's ``gamma``) for RBF and sigmoid, the degree for the polynomial and the
intercept ``c`` (``coef0``) for polynomial and sigmoid. The polynomial kernel's scale ``g`` is not
a hyperparameter of the thesis: scikit-learn's default (``"scale"``, ``1 / (n_features var(X))``)
is used. Fits run under the fit guard's iteration limit, like Chapter 3's.
"""

from __future__ import annotations

from collections.abc import Mapping

from sklearn.svm import SVC

from hpo.learners.guard import FitGuard, libsvm_limits
from hpo.learners.registry import Value, as_bool, register_learner

KERNELS = ("linear", "rbf", "poly", "sigmoid")


@register_learner("svm")
def kernel_svm(config: Mapping[str, Value], guard: FitGuard, seed: int, n_train: int) -> SVC:
    """``SVC`` with the configuration's kernel and that kernel's parameters (deterministic).
    Seed 003 also tunes ``shrinking``; an absent argument keeps scikit-learn's default (RBF,
    C = 1, the baseline of seed 003 §5)."""
    kernel = str(config.get("kernel", "rbf"))
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; valid choices: {', '.join(KERNELS)}")
    return SVC(
        kernel=kernel,
        C=float(config.get("C", 1.0)),
        gamma=float(config["gamma"]) if "gamma" in config else "scale",
        degree=int(config.get("degree", 3)),
        coef0=float(config.get("coef0", 0.0)),
        shrinking=as_bool(config.get("shrinking", True), "shrinking"),
        **libsvm_limits(guard, n_train),
    )
