"""Compiled elementwise profiles of the stationary kernels: the hot loop of acquisition scoring.

Scoring Spearmint's 20 000-point candidate grid evaluates ``rho(t)`` for ``S * n * m`` (about
2 * 10^7) scaled distances per BO iteration. In numpy that is half a dozen passes over the array,
and numpy's float64 ``exp`` is scalar on CPUs without AVX-512 (about 5 ns per element here), so
the profile cost three times everything else in the grid scoring together. These loops fuse the
passes and use an ``exp`` written so that LLVM can vectorise it: Cody-Waite reduction
``x = k ln2 + r`` (``|r| <= ln2 / 2``), a degree-13 Taylor polynomial for ``e^r`` (truncation
error < 1e-17 relative) and an exact multiplication by ``2^k`` built from its bits. Accuracy:
within 6e-16 relative of numpy's ``exp``-based formulas (tested in ``tests/test_gp_model.py``).
``exp(-x)`` is flushed to 0 for ``x > 700`` (values below 1e-304), which keeps ``2^k`` a normal
number.

Every function takes and returns C-contiguous float64 arrays; the ``*_inplace`` ones overwrite
their argument. Compiled once per machine (numba's on-disk cache) and run without the GIL, so the
acquisition's chunk threads run them in parallel.

:func:`scaled_corr_f32` is the exception: whole correlation matrices in float32 for the
acquisition's screening pass (:meth:`hpo.gp.acquisition.ExpectedImprovement.top_k`), distances and
profile fused in one loop that runs eight lanes wide (about 7 times faster than the float64 path).
Its error is bounded by :func:`scaled_corr_f32_error`, so screening stays exact.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k * _LN2_HI is exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
_FLUSH = 700.0  # exp(-x) := 0 beyond: keeps k >= -1010, so p * 2^k stays a normal number
_ROUND_SHIFTER = 6755399441055744.0  # 1.5 * 2^52: the low mantissa bits of k + this hold k
_JIT = {"nogil": True, "cache": True, "fastmath": {"contract"}}  # FMA only: no approximate math
# profile ids of the fused loops (a kernel's ``profile_id``)
MATERN52 = 0  # profile (1 + s + t/3) exp(-s), s = sqrt(t)
EXP_NEG = 1  # profile exp(-t)
PROFILES = (MATERN52, EXP_NEG)


@intrinsic
def _float64_from_bits(typingctx, bits):  # noqa: ANN001, ANN202 (numba intrinsic signature)
    """Reinterpret an int64 as the float64 with those bits (``2^k`` from ``(k + 1023) << 52``)."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _bits_of_float64(typingctx, value):  # noqa: ANN001, ANN202 (numba intrinsic signature)
    """The int64 with the bits of a float64."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@numba.njit(inline="always", **_JIT)
def exp_neg_scalar(x: float) -> float:
    """``exp(-x)`` for ``x >= 0`` (0 beyond ``_FLUSH``), in operations LLVM vectorises.

    ``k`` stays a float (``np.floor``; ``math.floor`` returns an int64, whose conversion has no
    AVX2 instruction and kept the loops scalar); ``2^k`` is built from the low bits of
    ``k + 1.5 * 2^52``, whose mantissa holds ``k`` exactly, and ``p * 2^k`` is exact.
    """
    flushed = x > _FLUSH
    x = -min(x, _FLUSH)
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    power = _float64_from_bits((_bits_of_float64(k + _ROUND_SHIFTER) + np.int64(1023)) << 52)
    return 0.0 if flushed else p * power


@numba.njit(**_JIT)
def _symmetric_from_pairs(values: np.ndarray, out: np.ndarray) -> None:
    n_samples, n, _ = out.shape
    for s in range(n_samples):
        k = 0
        for j in range(n):
            out[s, j, j] = 1.0
            for i in range(j + 1, n):
                out[s, j, i] = values[s, k]
                out[s, i, j] = values[s, k]
                k += 1


def symmetric_from_pairs(values: np.ndarray, n: int) -> np.ndarray:
    """Symmetric ``(S, n, n)`` matrices with unit diagonal from ``values (S, n (n - 1) / 2)`` of
    the pairs ``j < i`` in row-major order (the layout of ``np.triu_indices(n, 1)``)."""
    out = np.empty((values.shape[0], n, n))
    _symmetric_from_pairs(np.ascontiguousarray(values, dtype=float), out)
    return out


@numba.njit(**_JIT)
def _scaled_cov_lower(
    profile: int,
    terms: np.ndarray,
    inv_ls2: np.ndarray,
    amp2: float,
    diag: float,
    out_t: np.ndarray,
) -> None:
    t = np.zeros(terms.shape[1])
    for q in range(terms.shape[0]):
        weight = inv_ls2[q]
        for k in range(t.size):
            t[k] += terms[q, k] * weight
    if profile == MATERN52:
        _matern52_inplace(t)
    else:
        _exp_neg_inplace(t, 1.0)
    # ``out_t`` is the transpose (C order) of the Fortran-ordered result: its row j holds column
    # j of the result, whose lower part is rows i > j.
    n = out_t.shape[0]
    k = 0
    for j in range(n):
        out_t[j, j] = amp2 + diag
        for i in range(j + 1, n):
            out_t[j, i] = amp2 * t[k]
            k += 1


def scaled_cov_lower(
    profile: int, terms: np.ndarray, inv_ls2: np.ndarray, amp2: float, diag: float
) -> np.ndarray:
    """``amp2 rho(t) + diag I`` with ``t = inv_ls2 . terms``, one fused pass: ``terms (d, pairs)``
    in the layout of :func:`symmetric_from_pairs`, ``rho`` the profile ``profile``. Returns an
    ``(n, n)`` Fortran-ordered matrix whose upper triangle is left unset (LAPACK's lower
    Cholesky reads only the lower one)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    n = n_from_pairs(terms.shape[1])
    out = np.empty((n, n), order="F")
    inv_ls2 = np.ascontiguousarray(inv_ls2, dtype=float)
    _scaled_cov_lower(profile, terms, inv_ls2, float(amp2), float(diag), out.T)
    return out


def n_from_pairs(n_pairs: int) -> int:
    """``n`` such that ``n (n - 1) / 2 == n_pairs``."""
    n = (1 + math.isqrt(1 + 8 * n_pairs)) // 2
    if n * (n - 1) // 2 != n_pairs:
        raise ValueError(f"{n_pairs} is not a number of pairs n (n - 1) / 2")
    return n


@numba.njit(**_JIT)
def _matern52_inplace(flat: np.ndarray) -> None:
    for j in range(flat.size):
        t = flat[j]
        s = math.sqrt(t)
        flat[j] = exp_neg_scalar(s) * (1.0 + s + t * (1.0 / 3.0))


@numba.njit(**_JIT)
def _matern52_grad(flat: np.ndarray, out: np.ndarray) -> None:
    for j in range(flat.size):
        s = math.sqrt(flat[j])
        out[j] = exp_neg_scalar(s) * (-(1.0 + s) * (1.0 / 6.0))


@numba.njit(**_JIT)
def _exp_neg_inplace(flat: np.ndarray, sign: float) -> None:
    for j in range(flat.size):
        flat[j] = sign * exp_neg_scalar(flat[j])


@numba.njit(**_JIT)
def _exp_neg_scaled(flat: np.ndarray, scale: float, out: np.ndarray) -> None:
    for j in range(flat.size):
        out[j] = exp_neg_scalar(scale * flat[j])


def _contiguous(t: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(t, dtype=np.float64)


def matern52_inplace(t: np.ndarray) -> np.ndarray:
    """``(1 + s + t/3) exp(-s)``, ``s = sqrt(t)``, elementwise; overwrites ``t`` if contiguous."""
    t = _contiguous(t)
    _matern52_inplace(t.reshape(-1))
    return t


def matern52_grad(t: np.ndarray) -> np.ndarray:
    """``d/dt`` of the Matérn-5/2 profile: ``-(1 + s) exp(-s) / 6``, as a new array."""
    t = _contiguous(t)
    out = np.empty_like(t)
    _matern52_grad(t.reshape(-1), out.reshape(-1))
    return out


def exp_neg_inplace(t: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """``sign * exp(-t)`` elementwise (``t >= 0``); overwrites ``t`` if contiguous."""
    t = _contiguous(t)
    _exp_neg_inplace(t.reshape(-1), sign)
    return t


def exp_neg_scaled(t: np.ndarray, scale: float, out: np.ndarray | None = None) -> np.ndarray:
    """``exp(-scale * t)`` elementwise (``scale * t >= 0``) into ``out`` (a new array if None):
    an RBF Gram matrix from squared distances, ``t`` left unchanged."""
    t = _contiguous(t)
    if out is None:
        out = np.empty_like(t)
    if not (out.flags.c_contiguous and out.dtype == np.float64 and out.shape == t.shape):
        raise ValueError("out must be a C-contiguous float64 array of the shape of t")
    _exp_neg_scaled(t.reshape(-1), float(scale), out.reshape(-1))
    return out


# --- float32 correlations for screening -------------------------------------------------------

UNIT_ROUNDOFF_F32 = 2.0**-24
_F32 = np.float32
_LOG2E_F32 = _F32(_LOG2E)
_LN2_HI_F32 = _F32(0.693359375)  # Cephes' split: k * _LN2_HI_F32 is exact for |k| < 2^9
_LN2_LO_F32 = _F32(-2.12194440e-4)
_FLUSH_F32 = _F32(80.0)  # exp(-x) := 0 beyond (1.8e-35): keeps 2^k a normal float32


@intrinsic
def _float32_from_bits(typingctx, bits):  # noqa: ANN001, ANN202 (numba intrinsic signature)
    """Reinterpret an int32 as the float32 with those bits (``2^k`` from ``(k + 127) << 23``)."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@numba.njit(inline="always", **_JIT)
def _exp_neg_f32(x: float) -> float:
    """``exp(-x)`` in float32 for ``x >= 0`` (0 beyond ``_FLUSH_F32``); degree-6 Taylor
    polynomial after Cody-Waite reduction, relative error below 3e-7."""
    flushed = x > _FLUSH_F32
    x = -min(x, _FLUSH_F32)
    k = np.floor(x * _LOG2E_F32 + _F32(0.5))
    r = (x - k * _LN2_HI_F32) - k * _LN2_LO_F32
    p = _F32(1.0 / 720.0)
    p = p * r + _F32(1.0 / 120.0)
    p = p * r + _F32(1.0 / 24.0)
    p = p * r + _F32(1.0 / 6.0)
    p = p * r + _F32(0.5)
    p = p * r + _F32(1.0)
    p = p * r + _F32(1.0)
    scale = _float32_from_bits((numba.int32(k) + numba.int32(127)) << 23)
    return _F32(0.0) if flushed else p * scale


@numba.njit(**_JIT)
def _scaled_corr_f32(
    profile: int, X1: np.ndarray, X2_T: np.ndarray, weights: np.ndarray, out: np.ndarray
) -> None:
    n_samples, n1, n2 = out.shape
    dim = X2_T.shape[0]
    scaled = np.empty((dim, n2), dtype=np.float32)
    t = np.empty(n2, dtype=np.float32)
    for s in range(n_samples):
        for q in range(dim):
            for j in range(n2):
                scaled[q, j] = X2_T[q, j] * weights[s, q]
        for i in range(n1):
            t[:] = 0.0
            for q in range(dim):
                center = X1[i, q] * weights[s, q]
                for j in range(n2):
                    diff = scaled[q, j] - center
                    t[j] += diff * diff
            row = out[s, i]
            if profile == MATERN52:
                for j in range(n2):
                    root = math.sqrt(t[j])
                    row[j] = _exp_neg_f32(root) * (_F32(1.0) + root + t[j] * _F32(1.0 / 3.0))
            else:
                for j in range(n2):
                    row[j] = _exp_neg_f32(t[j])


def scaled_corr_f32(
    profile: int, X1: np.ndarray, X2: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """``rho(|(X1[i] - X2[j]) * weights[s]|^2)`` in float32: ``(S, n1, n2)``.

    ``profile``: :data:`MATERN52` or :data:`EXP_NEG`; ``X1 (n1, d)``, ``X2 (n2, d)`` in the unit
    cube; ``weights (S, d)`` = ``sqrt(scale) / length-scales``. The absolute error of every value
    is at most :func:`scaled_corr_f32_error` (``weights``).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    out = np.empty((weights.shape[0], X1.shape[0], X2.shape[0]), dtype=np.float32)
    _scaled_corr_f32(
        profile,
        np.ascontiguousarray(X1, dtype=np.float32),
        np.ascontiguousarray(X2.T, dtype=np.float32),
        np.ascontiguousarray(weights, dtype=np.float32),
        out,
    )
    return out


def scaled_corr_f32_error(weights: np.ndarray) -> np.ndarray:
    """Bound ``(S,)`` on the absolute error of :func:`scaled_corr_f32` with ``weights (S, d)``.

    With ``u = 2^-24``: rounding the inputs (in ``[0, 1]``) and the products ``x_q w_q`` moves
    each scaled coordinate difference by at most ``4 u w_q``, hence ``s = sqrt(t)`` by at most
    ``4 u |w|``, and the profiles' slopes in ``s`` are below 1. Rounding the weights, the
    differences, the sum of ``d`` squares and the square root adds ``(d + 3) u`` relative to
    ``t``, and ``|t rho'(t)| <= 1``; the exp polynomial and the last products add less than
    ``8 u``. The bound doubles the sum as a margin (tested against float64 in
    ``tests/test_gp_model.py``).
    """
    weights = np.asarray(weights, dtype=float)
    dim = weights.shape[1]
    u = UNIT_ROUNDOFF_F32
    return 2.0 * u * (4.0 * np.linalg.norm(weights, axis=1) + dim + 11.0)
