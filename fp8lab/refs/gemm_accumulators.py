"""Order-faithful float32 accumulator models for A·Bᵀ, in numpy alone (G3's references).

Every model takes decoded operands A [M,K] and B [N,K] (float32) and returns
the float32 accumulator [M,N]; the epilogue is applied apart
(:mod:`fp8lab.refs.gemm_model`). Every sum starts from +0.0f and adds in the
order stated. Products are rounded to float32 before they are added, except
in the FMA model. A product of two e4m3fn values has at most 8 significant
bits, so it is exact in float32 and FMA and multiply-then-add give the same
sums for fp8 operands; the FMA model differs only for
operands that are not fp8 values. Each numpy ufunc call rounds once to
float32, so no step can be contracted into an FMA. Written apart from every
kernel under test: it imports numpy and the standard library only. Slow
twins: :mod:`fp8lab.refs.gemm_scalar`.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

import numpy as np
import numpy.typing as npt

from fp8lab.refs.gemm_fused import fused

__all__ = [
    "FAST_ACCUM_ROUNDINGS",
    "MODELS",
    "AccumulatorModel",
    "fast_accum",
    "fused",
    "pairwise",
    "round_mantissa",
    "sequential",
    "sequential_fma",
    "split_k",
]

F32 = npt.NDArray[np.float32]
FAST_ACCUM_ROUNDINGS = ("truncate", "rne")
_CHUNK = 1 << 22
_BLOCK = 1 << 15  # outputs per row block of the sequential model (stays in cache)


class AccumulatorModel(Protocol):
    """``model(a, b) -> acc``: float32 [M,K] and [N,K] to float32 [M,N]."""

    def __call__(self, a: F32, b: F32) -> F32: ...  # noqa: D102


def _operands(a: np.ndarray, b: np.ndarray) -> tuple[F32, F32]:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"want A [M,K] and B [N,K], got {a.shape} and {b.shape}")
    return a, b


def sequential(a: F32, b: F32) -> F32:
    """``acc = 0; for k: acc = f32(acc + f32(a[k]*b[k]))`` (vllm.cpp MatmulFp8).

    Vectorised over the outputs, never over k: for each block of rows, step k
    forms the float32 products of column k and adds them to the block.
    """
    a, b = _operands(a, b)
    m, k = a.shape
    n = b.shape[0]
    out = np.zeros((m, n), np.float32)
    bt = np.ascontiguousarray(b.T)  # [K,N]: row k is column k of B
    rows = max(1, _BLOCK // max(1, n))
    for start in range(0, m, rows):
        acc = out[start : start + rows]
        at = np.ascontiguousarray(a[start : start + rows].T)  # [K,rows]
        prod = np.empty_like(acc)
        for kk in range(k):
            np.multiply(at[kk][:, None], bt[kk][None, :], out=prod)
            np.add(acc, prod, out=acc)
    return out


def _fma_round(p: np.ndarray, c: np.ndarray) -> F32:
    """``f32(p + c)`` rounded once: float64 sum rounded to odd, then to float32.

    p = a*b is exact in float64 (24+24 bits). The float64 sum s and its error
    e (TwoSum, exact) give round-to-odd: if e != 0 and s is even, step s one
    ulp toward e. Round-to-odd in 53 >= 24 + 2 bits then RNE to float32 is the
    correctly rounded float32 of p + c (Boldo and Melquiond, 2008).
    """
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    even = (s.view(np.int64) & 1) == 0
    bump = (err != 0) & even
    s = np.where(bump, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    rounded: F32 = s.astype(np.float32)
    return rounded


def sequential_fma(a: F32, b: F32) -> F32:
    """``acc = fmaf(a[k], b[k], acc)`` for k in order, emulated exactly."""
    a, b = _operands(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for kk in range(a.shape[1]):
        acc = _fma_round(np.multiply.outer(a64[:, kk], b64[:, kk]), acc.astype(np.float64))
    return acc


def pairwise(a: F32, b: F32) -> F32:
    """Tree sum of the float32 products: add neighbours level by level.

    At each level term 2i+1 is added to term 2i in float32; an odd last term
    moves up unchanged.
    """
    a, b = _operands(a, b)
    m, k = a.shape
    n = b.shape[0]
    out = np.empty((m, n), np.float32)
    rows = max(1, _CHUNK // max(1, n * k))
    for start in range(0, m, rows):
        t = a[start : start + rows, None, :] * b[None, :, :]
        while t.shape[-1] > 1:
            half = t.shape[-1] // 2
            summed = t[..., 0 : 2 * half : 2] + t[..., 1 : 2 * half : 2]
            t = np.concatenate([summed, t[..., 2 * half :]], axis=-1)
        out[start : start + rows] = t[..., 0]
    return out


def split_k(a: F32, b: F32, *, block: int = 128) -> F32:
    """Split-K: per-block sequential sums from 0, then added in block order from 0.

    Raises:
        ValueError: for a block below 1.
    """
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    a, b = _operands(a, b)
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for start in range(0, a.shape[1], block):
        acc += sequential(a[:, start : start + block], b[:, start : start + block])
    return acc


def round_mantissa(x: np.ndarray, mantissa_bits: int, rounding: str) -> np.ndarray:
    """Round float64 ``x`` to ``mantissa_bits`` stored bits (1 + that significant).

    Unbounded exponent (no overflow or subnormals; an e8 accumulator at
    these magnitudes never meets either). ``truncate`` rounds toward zero.
    """
    frac, exp = np.frexp(x)  # x = frac * 2**exp, 0.5 <= |frac| < 1
    scaled = np.ldexp(frac, mantissa_bits + 1)
    q = np.trunc(scaled) if rounding == "truncate" else np.rint(scaled)
    out: np.ndarray = np.ldexp(q, exp - (mantissa_bits + 1))
    return out


def fast_accum(
    a: F32,
    b: F32,
    *,
    mantissa_bits: int = 13,
    rounding: str = "truncate",
    interval: int | None = 128,
) -> F32:
    """Reduced-precision accumulation with periodic promotion to float32.

    Model of Hopper FP8 tensor-core accumulation (reported, not
    measured). Assumptions: the float32 product is added to the partial sum
    exactly and the exact sum is rounded once to ``mantissa_bits`` stored bits
    (hardware may instead drop the addend's shifted-out bits first; the sum is
    formed in float64, exact for fp8 operands, possibly rounded twice for
    others); the exponent range is unbounded (e8: no overflow here); every
    ``interval`` products the partial is added to a float32 accumulator (RNE)
    and restarts at 0; ``interval=None`` never promotes (cuBLASLt FAST_ACCUM).

    Raises:
        ValueError: for an unknown rounding, mantissa_bits outside 1..23, or
            an interval below 1.
    """
    if rounding not in FAST_ACCUM_ROUNDINGS or not 1 <= mantissa_bits <= 23:
        raise ValueError(f"want rounding in {FAST_ACCUM_ROUNDINGS} and 1..23 bits")
    if interval is not None and interval < 1:
        raise ValueError(f"interval must be >= 1 or None, got {interval}")
    a, b = _operands(a, b)
    k = a.shape[1]
    step = k if interval is None else interval
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for start in range(0, k, step):
        part = np.zeros(acc.shape, np.float64)
        for kk in range(start, min(k, start + step)):
            # The float32 product; part + prod is exact in float64 for fp8
            # operands (multiples of 2**-18 below 2**36 units, 53 bits).
            prod = np.multiply.outer(a[:, kk], b[:, kk]).astype(np.float64)
            part = round_mantissa(part + prod, mantissa_bits, rounding)
        acc = acc + part.astype(np.float32)  # exact: part has <= 24 significant bits
    return acc


MODELS: dict[str, AccumulatorModel] = {
    "sequential": sequential,
    "sequential_fma": sequential_fma,
    "pairwise": pairwise,
    "split_k_128": partial(split_k, block=128),
    "fast_accum_e8m13_trunc_128": partial(fast_accum, mantissa_bits=13, interval=128),
    # MMA-Sim's Hopper fp8 wgmma (not checked against hardware): refs/gemm_fused.py
    "fused_32_e8m13": fused,
    "fused_32_e8m13_promote_128": partial(fused, interval=128),
}
