"""Fused multi-term accumulation (a tensor core's MMA chain), in numpy integers (G3's reference).

The model follows MMA-Sim's description of Hopper's fp8 ``wgmma``
(microsoft/MMA-Sim ``mmasim/simulator/arithmetic.py`` ``fused_dot_add`` and
``nv_fused_dot_add``; Xie et al., arXiv 2511.10909).
These claims rest on that description alone: nothing here was checked
against hardware (no GPU). For each output, K is cut into groups of
``group`` summands; the accumulator c starts at +0 and each group does:

1. every term (c and each product a·b) has a significand and an exponent:
   an operand's exponent is ``max(floor(log2|v|), operand_min_exponent)``
   (-6 for e4m3fn: subnormals keep the smallest normal exponent), a zero's is
   -126; a product's exponent is the sum of its operands' exponents (its
   significand, in [0, 4), is not renormalised); c's exponent is
   ``max(floor(log2|c|), -126)``;
2. E = the largest term exponent; each term is truncated toward zero to a
   multiple of 2**(E - term_bits) (``term_bits`` = 13 for fp8 inputs);
3. the truncated terms are added exactly; the sum is normalised
   (exponent at least -126) and truncated toward zero to ``result_bits``
   fractional bits (13: "f32_e8m13"; 23: float32 by RZ) -- not RNE;
4. NaN and inf follow the float64 sum of the products and c (MMA-Sim): a
   NaN gives the float32 NaN 0x7FFFFFFF, an infinite sum that infinity; a
   finite result of 2**128 or more becomes inf.

``interval`` (a multiple of ``group``) restarts the chain at +0 every
``interval`` summands and adds the partials into a float32 accumulator by
RNE (CUTLASS's promotion, ``mma_promotion_interval``); None never promotes
(``FP8FastAccum``). Written apart from every kernel: numpy and the standard
library only. Slow twin: :mod:`fp8lab.refs.gemm_fused_scalar` (exact fractions).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["FUSED_DEFAULTS", "fused"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
FUSED_DEFAULTS = {"group": 32, "term_bits": 13, "result_bits": 13, "operand_min_exponent": -6}
ZERO_EXPONENT = -126  # MMA-Sim gives a zero the exponent -126
ACC_MIN_EXPONENT = -126  # float32's smallest normal exponent
NAN_BITS = np.uint32(0x7FFFFFFF)


def _parts(v: np.ndarray, min_exp: int) -> tuple[I64, I64, I64]:
    """V = mant·2**shift exactly (|mant| < 2**24), and MMA-Sim's exponent of v.

    NaN and inf read as 0 here; the float64 check decides those outputs.
    """
    v = np.where(np.isfinite(v), v, 0).astype(np.float64)
    frac, e = np.frexp(v)  # v = frac·2**e, 0.5 <= |frac| < 1
    mant = np.ldexp(frac, 24).astype(np.int64)
    shift = e.astype(np.int64) - 24
    expo = np.where(v == 0, ZERO_EXPONENT, np.maximum(e.astype(np.int64) - 1, min_exp))
    return mant, shift, expo


def _scaled(mant: I64, shift: I64) -> I64:
    """trunc(mant·2**shift) toward zero; shifts clipped (a tiny term truncates to 0)."""
    mag = np.abs(mant)
    left = np.left_shift(mag, np.clip(shift, 0, 62))
    right = np.right_shift(mag, np.clip(-shift, 0, 63))
    out: I64 = np.sign(mant) * np.where(shift >= 0, left, right)
    return out


def _fused_step(c: F32, a: F32, b: F32, p: dict[str, int]) -> F32:
    """One fused group: c [M,N] plus the products of a [M,g] and b [N,g]."""
    tb, rb = p["term_bits"], p["result_bits"]
    ma, qa, ea = _parts(a, p["operand_min_exponent"])
    mb, qb, eb = _parts(b, p["operand_min_exponent"])
    mc, qc, ec = _parts(c, ACC_MIN_EXPONENT)
    prod = ma[:, None, :] * mb[None, :, :]  # exact: < 2**48
    q = qa[:, None, :] + qb[None, :, :]
    e = ea[:, None, :] + eb[None, :, :]
    top = np.maximum(ec, e.max(axis=-1))
    total = _scaled(prod, q - top[..., None] + tb).sum(axis=-1) + _scaled(mc, qc - top + tb)
    # normalise: |total|·2**(top-tb); keep rb fractional bits below its exponent
    _, bits = np.frexp(np.abs(total).astype(np.float64))  # exact: |total| < 2**53
    e_res = np.maximum(bits.astype(np.int64) - 1 + top - tb, ACC_MIN_EXPONENT)
    kept = _scaled(total, (top - tb) - (e_res - rb))
    with np.errstate(over="ignore"):
        out = np.ldexp(kept.astype(np.float64), (e_res - rb).astype(np.int64)).astype(np.float32)
    out[total == 0] = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        check = (a.astype(np.float64)[:, None, :] * b.astype(np.float64)[None, :, :]).sum(-1)
        check = check + c.astype(np.float64)
    special = ~np.isfinite(check)
    if special.any():
        nan = np.full(out.shape, NAN_BITS).view(np.float32)
        out = np.where(np.isnan(check), nan, np.where(special, check.astype(np.float32), out))
    result: F32 = out.astype(np.float32)
    return result


def fused(
    a: F32,
    b: F32,
    *,
    group: int = 32,
    term_bits: int = 13,
    result_bits: int = 13,
    operand_min_exponent: int = -6,
    interval: int | None = None,
) -> F32:
    """A·Bᵀ by chained ``group``-way fused adds (see the module docstring).

    Raises:
        ValueError: unless A is [M,K] and B is [N,K], group >= 1, 1 <= term_bits
            <= 40, 1 <= result_bits <= 23, and interval is None or a multiple
            of group.
    """
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"want A [M,K] and B [N,K], got {a.shape} and {b.shape}")
    if group < 1 or not 1 <= term_bits <= 40 or not 1 <= result_bits <= 23:
        raise ValueError("want group >= 1, term_bits 1..40, result_bits 1..23")
    if interval is not None and (interval < group or interval % group):
        raise ValueError(f"interval must be a multiple of group {group}, got {interval}")
    p = {"term_bits": term_bits, "result_bits": result_bits}
    p["operand_min_exponent"] = operand_min_exponent
    k = a.shape[1]
    step = k if interval is None else interval
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for start in range(0, k, step):
        part = np.zeros_like(acc)
        for g in range(start, min(k, start + step), group):
            stop = min(k, start + step, g + group)
            part = _fused_step(part, a[:, g:stop], b[:, g:stop], p)
        with np.errstate(over="ignore", invalid="ignore"):
            acc = (acc + part).astype(np.float32)
    return acc
