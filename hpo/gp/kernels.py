"""Stationary correlation functions of the GP engine, batched over hyperparameter samples.

A kernel here is the *unit-amplitude* correlation ``rho_l(x, x')`` of a stationary kernel; the
model owns amplitude, jitter and noise (Spearmint's covariance is
``amp2 * (rho_l(X, X) + 1e-6 I) + noise * I``, thesis §2.1). Every function is batched over
``S`` length-scale samples ``ls`` of shape ``(S, d)`` and returns arrays of shape
``(S, n1, n2)``, so that the ``S`` slice samples of one BO iteration are handled by one
vectorized call.

Chapter 3's kernels are functions of the scaled squared distance
``r2 = sum_d (x_d - x'_d)^2 / l_d^2``: a new kernel of that family is one subclass that gives its
profile ``rho(r2)`` and derivative. Chapter 5's kernels subclass :class:`Kernel` directly:

* :class:`Laplace` — ``exp(-sum_d |x_d - x'_d| / l_d)`` (thesis Eq. 5.15 with per-dimension
  length-scales, §5.5);
* :class:`Conditional` — a base kernel where two points share their active conditional
  structure, 0 elsewhere (thesis Eq. 5.9). Its Gram matrix is block diagonal (Eq. 5.10), which
  :meth:`Kernel.blocks` exposes so that the posterior and the slice sampler can factor it block
  by block (Eq. 5.11).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo.gp import elementwise
from hpo.registry import Registry
from hpo.space.search_space import Categorical, Space


class Kernel(ABC):
    """A stationary correlation function with ARD length-scales, batched over ``S`` samples."""

    @abstractmethod
    def __call__(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """Correlations ``rho(X1[i], X2[j])``: ``ls (S, d)``, ``X1 (n1, d)``, ``X2 (n2, d)`` ->
        ``(S, n1, n2)``."""

    @abstractmethod
    def grad_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """Derivative of ``rho(X1[i], X2[j])`` w.r.t. ``X2[j]``: ``(S, n1, n2, d)``."""

    def vjp_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray, W: np.ndarray) -> np.ndarray:
        """``sum_i W[..., s, i, j] d rho_s(X1[i], X2[j]) / d X2[j]``: ``W (..., S, n1, n2)`` ->
        ``(..., S, n2, d)``. How posterior gradients contract the kernel gradient."""
        return np.einsum("...sij,sijd->...sjd", W, self.grad_x2(ls, X1, X2))

    def corr_f32(
        self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Correlations in float32 ``(S, n1, n2)`` and a bound ``(S,)`` on their absolute error,
        for the acquisition's screening pass. Default: the float64 values, rounded (a subclass
        with a faster float32 path overrides it)."""
        return self(ls, X1, X2).astype(np.float32), np.full(ls.shape[0], 2.0**-23)

    @abstractmethod
    def gram_terms(self, X: np.ndarray) -> np.ndarray:
        """Hyperparameter-free pairwise terms of the training points ``X (n, d)`` that
        :meth:`gram` turns into correlations (computed once per iteration while ``ls`` is
        sampled)."""

    @abstractmethod
    def gram(self, ls: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """Correlations of the training points from :meth:`gram_terms`: ``(S, n, n)``."""

    def covariance_lower(
        self, ls: np.ndarray, terms: np.ndarray, amp2: float, diag: float
    ) -> np.ndarray:
        """``amp2 rho_ls(X, X) + diag I`` for one sample ``ls (d,)``, as a Fortran-ordered
        ``(n, n)`` array of which only the lower triangle is meaningful (what the slice sampler's
        Cholesky reads; a subclass may skip the upper half)."""
        cov = amp2 * self.gram(ls[None], terms)[0]
        cov[np.diag_indices_from(cov)] += diag
        return np.asfortranarray(cov)

    def blocks(self, X: np.ndarray) -> list[np.ndarray] | None:
        """Index arrays of independent groups of the points ``X (n, d)`` (zero correlation
        between groups), in which the Gram matrix is block diagonal; ``None`` (the default): one
        dense block. Posteriors and the slice sampler may then factor block by block."""
        return None


class ScaledDistanceKernel(Kernel):
    """Kernels of the ARD-scaled squared distance ``r2`` (Matérn, squared exponential).

    A subclass sets ``scale`` and gives the profile ``rho(t)`` of ``t = scale * r2`` and its
    derivative, both elementwise (``scale`` folds the kernel's constant into the distance
    computation, saving one pass over the largest arrays).
    """

    scale: float = 1.0
    profile_id: int  # the profile's id in :mod:`hpo.gp.elementwise`'s fused loops

    @abstractmethod
    def profile(self, t: np.ndarray) -> np.ndarray:
        """``rho(t)`` elementwise; may overwrite ``t`` (callers pass a scratch array)."""

    @abstractmethod
    def profile_grad(self, t: np.ndarray) -> np.ndarray:
        """``d rho / d t`` elementwise."""

    def scaled_sqdist(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """``t = scale * r2`` between ``X1 (n1, d)`` and ``X2 (n2, d)``: ``(S, n1, n2)``.

        One matrix product per sample, ``[a, |a|^2, 1] . [-2b, 1, |b|^2]`` with
        ``a = sqrt(scale) X1 / l``, instead of ``n1 n2 d`` differences. Its rounding error,
        ``~1e-16 |a|^2``, is negligible for the length-scales the priors allow.
        """
        inv_ls = np.sqrt(self.scale) / ls[:, None, :]  # (S, 1, d)
        A = X1[None] * inv_ls
        B = X2[None] * inv_ls
        a2 = np.einsum("snd,snd->sn", A, A)[..., None]
        b2 = np.einsum("snd,snd->sn", B, B)[..., None]
        A_aug = np.concatenate([A, a2, np.ones_like(a2)], axis=2)
        B_aug = np.concatenate([-2.0 * B, np.ones_like(b2), b2], axis=2)
        t = A_aug @ B_aug.transpose(0, 2, 1)
        return np.maximum(t, 0.0, out=t)

    def __call__(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        return self.profile(self.scaled_sqdist(ls, X1, X2))

    def corr_f32(
        self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        weights = np.sqrt(self.scale) / ls
        return (
            elementwise.scaled_corr_f32(self.profile_id, X1, X2, weights),
            elementwise.scaled_corr_f32_error(weights),
        )

    def grad_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        diff = X2[None, :, :] - X1[:, None, :]  # (n1, n2, d)
        inv_ls2 = self.scale / ls**2  # (S, d)
        t = np.moveaxis(diff**2 @ inv_ls2.T, -1, 0)  # (S, n1, n2)
        return (2.0 * self.profile_grad(t))[..., None] * diff * inv_ls2[:, None, None, :]

    def vjp_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray, W: np.ndarray) -> np.ndarray:
        # d rho / d X2[j] = 2 rho'(t_ij) scale (X2[j] - X1[i]) / l^2: contract over i first.
        diff = X2[None, :, :] - X1[:, None, :]  # (n1, n2, d)
        inv_ls2 = self.scale / ls**2  # (S, d)
        t = np.moveaxis(diff**2 @ inv_ls2.T, -1, 0)  # (S, n1, n2)
        weighted = W * (2.0 * self.profile_grad(t))  # (..., S, n1, n2)
        lead = weighted.shape[:-2]
        flat = np.moveaxis(weighted.reshape(-1, *weighted.shape[-2:]), -1, 0)  # (n2, K, n1)
        contracted = np.moveaxis(flat @ diff.transpose(1, 0, 2), 0, -2)  # (K, n2, d)
        return contracted.reshape(*lead, X2.shape[0], -1) * inv_ls2[:, None, :]

    def gram_terms(self, X: np.ndarray) -> np.ndarray:
        """Squared differences per dimension of the pairs ``j < i`` (in the order of
        ``np.triu_indices(n, 1)``): ``(d, n (n - 1) / 2)``. The diagonal and the symmetric
        half are implied, so every profile is evaluated once per pair."""
        rows, cols = np.triu_indices(X.shape[0], 1)
        coords = np.ascontiguousarray(X.T)
        return np.ascontiguousarray((coords[:, rows] - coords[:, cols]) ** 2)

    def gram(self, ls: np.ndarray, terms: np.ndarray) -> np.ndarray:
        values = self.profile((self.scale / ls**2) @ terms)  # (S, pairs)
        return elementwise.symmetric_from_pairs(values, elementwise.n_from_pairs(terms.shape[1]))

    def covariance_lower(
        self, ls: np.ndarray, terms: np.ndarray, amp2: float, diag: float
    ) -> np.ndarray:
        inv_ls2 = self.scale / ls**2
        return elementwise.scaled_cov_lower(self.profile_id, terms, inv_ls2, amp2, diag)


class Matern52(ScaledDistanceKernel):
    """Matérn-5/2 ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)`` (Spearmint's ``Matern52``).

    With ``t = 5 r^2`` and ``s = sqrt(t)``: ``rho = (1 + s + t / 3) exp(-s)``.
    """

    scale = 5.0
    profile_id = elementwise.MATERN52

    def profile(self, t: np.ndarray) -> np.ndarray:
        return elementwise.matern52_inplace(t)

    def profile_grad(self, t: np.ndarray) -> np.ndarray:
        return elementwise.matern52_grad(t)


class SquaredExponential(ScaledDistanceKernel):
    """Squared exponential ``exp(-r^2 / 2)`` (thesis Eq. 2.15 with its minus sign restored)."""

    scale = 0.5
    profile_id = elementwise.EXP_NEG

    def profile(self, t: np.ndarray) -> np.ndarray:
        return elementwise.exp_neg_inplace(t)

    def profile_grad(self, t: np.ndarray) -> np.ndarray:
        return elementwise.exp_neg_inplace(t.copy(), sign=-1.0)


class Laplace(Kernel):
    """Laplace kernel with one length-scale per dimension, ``exp(-sum_d |x_d - x'_d| / l_d)``
    (thesis Eq. 5.15, per-dimension form of §5.5; the limit of the Mondrian kernel, Eq. 5.14).

    Not differentiable where ``x_d = x'_d``; :meth:`grad_x2` returns the one-sided derivative
    ``sign(x2 - x1)`` (0 at equality), enough for gradient-free acquisition searches (the
    thesis uses none with it).
    """

    def __call__(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        dist = np.abs(X1[:, None, :] - X2[None, :, :]) @ (1.0 / ls).T  # (n1, n2, S)
        return elementwise.exp_neg_inplace(np.ascontiguousarray(np.moveaxis(dist, -1, 0)))

    def grad_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        sign = np.sign(X2[None, :, :] - X1[:, None, :])  # (n1, n2, d)
        return -self(ls, X1, X2)[..., None] * sign * (1.0 / ls)[:, None, None, :]

    def gram_terms(self, X: np.ndarray) -> np.ndarray:
        """Absolute differences per dimension of the pairs ``j < i`` (``np.triu_indices``
        order): ``(d, n (n - 1) / 2)``."""
        rows, cols = np.triu_indices(X.shape[0], 1)
        coords = np.ascontiguousarray(X.T)
        return np.ascontiguousarray(np.abs(coords[:, rows] - coords[:, cols]))

    def gram(self, ls: np.ndarray, terms: np.ndarray) -> np.ndarray:
        values = elementwise.exp_neg_inplace((1.0 / ls) @ terms)  # (S, pairs)
        return elementwise.symmetric_from_pairs(values, elementwise.n_from_pairs(terms.shape[1]))

    def covariance_lower(
        self, ls: np.ndarray, terms: np.ndarray, amp2: float, diag: float
    ) -> np.ndarray:
        # exp(-t) with t = (1 / l) . |diff|: the fused pass of the squared-exponential profile,
        # fed absolute differences and inverse length-scales instead of squares
        return elementwise.scaled_cov_lower(elementwise.EXP_NEG, terms, 1.0 / ls, amp2, diag)


@dataclass(frozen=True)
class ConditionalTerms:
    """:meth:`Conditional.gram_terms`: the base kernel's terms of all points and which pairs
    of points differ in structure (``(n, n)`` booleans)."""

    base: Any
    apart: np.ndarray


class Conditional(Kernel):
    """The conditional kernel (thesis Eq. 5.9): ``k_C(x, x') = k(x, x')`` when ``x`` and ``x'``
    agree on every active conditional hyperparameter, else 0.

    A *conditional hyperparameter* is a categorical that some condition of ``space`` refers to
    (e.g. the classifier choice). Two points agree when, descending the conditions from the
    root, the same conditional hyperparameters are active with the same values (an active one
    against an inactive one counts as different); with one level of conditions: the same
    classifier. The base kernel ``k`` (default Matérn-5/2 ARD, thesis §5.5) sees every
    dimension of the imputed encoding: inactive dimensions sit at the imputed value in both
    points of a pair that agree, so they add nothing to the distance (thesis §5.3.1, §5.4.1).

    The Gram matrix is block diagonal by structure (thesis Eq. 5.10): :meth:`blocks` gives the
    groups. Derivatives are the base kernel's inside a group and 0 across (the structure is
    piecewise constant in ``x``).
    """

    def __init__(self, space: Space, base: Kernel | None = None) -> None:
        if not space.is_conditional:
            raise ValueError(
                f"the conditional kernel needs conditions; space {space.name!r} has none"
            )
        self.space = space
        self.base = Matern52() if base is None else base
        index = {p.name: i for i, p in enumerate(space.parameters)}
        parents = sorted({index[p.condition.parent] for p in space.parameters if p.condition})
        self._parents = parents  # dimensions of the conditional hyperparameters

    def structure(self, X: np.ndarray) -> np.ndarray:
        """Integer label ``(n,)`` of each point's active conditional structure: equal labels
        iff the points agree on every active conditional hyperparameter (active flags from
        :meth:`~hpo.space.search_space.Space.active_mask`, values from the parameters'
        ``from_unit``)."""
        X = np.atleast_2d(X)
        keys = np.empty((X.shape[0], len(self._parents)), dtype=np.int64)
        for column, dim in enumerate(self._parents):
            parameter = self.space.parameters[dim]
            assert isinstance(parameter, Categorical)
            values, inverse = np.unique(X[:, dim], return_inverse=True)
            codes = np.array([parameter.choices.index(parameter.from_unit(v)) for v in values])
            keys[:, column] = codes[inverse.ravel()]
        if any(self.space.parameters[dim].condition is not None for dim in self._parents):
            # nested conditions: a conditional hyperparameter may itself be inactive
            active = np.array([self.space.active_mask(x)[self._parents] for x in X])
            keys = np.where(active, keys, -1)
        return np.unique(keys, axis=0, return_inverse=True)[1].ravel()

    def _same(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        labels = self.structure(np.concatenate([X1, X2]))
        return labels[: len(X1), None] == labels[None, len(X1) :]

    def __call__(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        return self.base(ls, X1, X2) * self._same(X1, X2)

    def grad_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        return self.base.grad_x2(ls, X1, X2) * self._same(X1, X2)[..., None]

    def vjp_x2(self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray, W: np.ndarray) -> np.ndarray:
        return self.base.vjp_x2(ls, X1, X2, W * self._same(X1, X2))

    def corr_f32(
        self, ls: np.ndarray, X1: np.ndarray, X2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        corr, error = self.base.corr_f32(ls, X1, X2)
        return corr * self._same(X1, X2), error

    def gram_terms(self, X: np.ndarray) -> ConditionalTerms:  # type: ignore[override]
        labels = self.structure(X)
        return ConditionalTerms(self.base.gram_terms(X), labels[:, None] != labels[None, :])

    def gram(self, ls: np.ndarray, terms: ConditionalTerms) -> np.ndarray:  # type: ignore[override]
        corr = self.base.gram(ls, terms.base)
        corr[:, terms.apart] = 0.0
        return corr

    def covariance_lower(
        self,
        ls: np.ndarray,
        terms: ConditionalTerms,  # type: ignore[override]
        amp2: float,
        diag: float,
    ) -> np.ndarray:
        cov = self.base.covariance_lower(ls, terms.base, amp2, diag)
        cov[terms.apart] = 0.0  # (the base may leave the upper triangle unset)
        return cov

    def blocks(self, X: np.ndarray) -> list[np.ndarray]:
        labels = self.structure(X)
        return [np.flatnonzero(labels == label) for label in np.unique(labels)]


KERNELS: Registry[type[Kernel]] = Registry(
    "kernel",
    {
        "matern52": Matern52,
        "se_ard": SquaredExponential,
        "laplace": Laplace,
        "conditional": Conditional,
    },
)


def make_kernel(name: str, space: Space | None = None) -> Kernel:
    """The kernel registered as ``name`` (``matern52``, ``se_ard``, ``laplace``, or
    ``conditional`` = :class:`Conditional` around Matérn-5/2, which needs ``space``)."""
    kernel = KERNELS.get(name)
    if name == "conditional":
        if space is None:
            raise ValueError("the conditional kernel needs the search space")
        return Conditional(space)
    return kernel()
