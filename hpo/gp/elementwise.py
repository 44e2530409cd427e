"""Compiled elementwise profiles of the stationary kernels: the hot loop of acquisition scoring.

Scoring Spearmint's 20 000-point candidate grid evaluates ``rho(t)`` for ``S * n * m`` (about
2 * 10^7) scaled distances per BO iteration. In numpy that is half a dozen passes over the array,
and numpy's float64 ``exp`` is scalar on CPUs without AVX-512 (about 5 ns per element here), so
the profile cost three times everything else in the grid scoring together. These loops fuse the
passes and use an ``exp`` written so that LLVM can vectorise it: Cody-Waite reduction
``x = k ln2 + r`` (``|r| <= ln2 / 2``), a degree-13 Taylor polynomial for ``e^r`` (truncation
error < 1e-17 relative) and ``2^k`` added to the exponent bits. Accuracy: within 6e-16 relative of
numpy's ``exp``-based formulas (tested in ``tests/test_gp_model.py``). ``exp(-x)`` is flushed to
0 for ``x > 700`` (values below 1e-304), which keeps the exponent addition clear of underflow.

Every function takes and returns C-contiguous float64 arrays; the ``*_inplace`` ones overwrite
their argument. Compiled once per machine (numba's on-disk cache) and run without the GIL, so the
acquisition's chunk threads run them in parallel.
"""

from __future__ import annotations

import math

import numba
import numpy as np

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k * _LN2_HI is exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
_FLUSH = 700.0  # exp(-x) := 0 beyond: keeps k >= -1010, so p * 2^k stays a normal number
_JIT = {"nogil": True, "cache": True, "fastmath": {"contract"}}  # FMA only: no approximate math


@numba.njit(inline="always", **_JIT)
def _exp_neg_parts(x: float) -> tuple[float, int]:
    """``(p, k)`` with ``exp(-x) = p * 2^k`` for ``0 <= x <= _FLUSH`` (``p = 0`` beyond)."""
    flushed = x > _FLUSH
    x = -min(x, _FLUSH)
    k = math.floor(x * _LOG2E + 0.5)
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
    return (0.0 if flushed else p), (0 if flushed else int(k))


@numba.njit(**_JIT)
def _matern52_inplace(flat: np.ndarray) -> None:
    bits = flat.view(np.int64)
    for j in range(flat.size):
        t = flat[j]
        s = math.sqrt(t)
        p, k = _exp_neg_parts(s)
        flat[j] = p * (1.0 + s + t * (1.0 / 3.0))
        bits[j] += np.int64(k) << 52


@numba.njit(**_JIT)
def _matern52_grad(flat: np.ndarray, out: np.ndarray) -> None:
    bits = out.view(np.int64)
    for j in range(flat.size):
        s = math.sqrt(flat[j])
        p, k = _exp_neg_parts(s)
        out[j] = p * (-(1.0 + s) * (1.0 / 6.0))
        bits[j] += np.int64(k) << 52


@numba.njit(**_JIT)
def _exp_neg_inplace(flat: np.ndarray, sign: float) -> None:
    bits = flat.view(np.int64)
    for j in range(flat.size):
        p, k = _exp_neg_parts(flat[j])
        flat[j] = sign * p
        bits[j] += np.int64(k) << 52


@numba.njit(**_JIT)
def _exp_neg_scaled(flat: np.ndarray, scale: float, out: np.ndarray) -> None:
    bits = out.view(np.int64)
    for j in range(flat.size):
        p, k = _exp_neg_parts(scale * flat[j])
        out[j] = p
        bits[j] += np.int64(k) << 52


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
