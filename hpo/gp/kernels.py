"""Stationary correlation functions of the GP engine, batched over hyperparameter samples.

A kernel here is the *unit-amplitude* correlation ``rho_l(x, x')`` of a stationary kernel; the
model owns amplitude, jitter and noise (Spearmint's covariance is
``amp2 * (rho_l(X, X) + 1e-6 I) + noise * I``, spec ch2-3 §1.1). Every function is batched over
``S`` length-scale samples ``ls`` of shape ``(S, d)`` and returns arrays of shape
``(S, n1, n2)``, so that the ``S`` slice samples of one BO iteration are handled by one
vectorized call.

Both kernels provided here are functions of the scaled squared distance
``r2 = sum_d (x_d - x'_d)^2 / l_d^2``: a new kernel of that family is one subclass that gives its
profile ``rho(r2)`` and derivative. Kernels of other forms (Chapter 5's Laplace kernel, the
conditional kernel) subclass :class:`Kernel` directly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from hpo.gp import elementwise


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


KERNELS: dict[str, type[Kernel]] = {"matern52": Matern52, "se_ard": SquaredExponential}


def make_kernel(name: str) -> Kernel:
    """The kernel registered as ``name`` (``matern52`` or ``se_ard``)."""
    if name not in KERNELS:
        raise KeyError(f"unknown kernel {name!r}; valid: {', '.join(KERNELS)}")
    return KERNELS[name]()
