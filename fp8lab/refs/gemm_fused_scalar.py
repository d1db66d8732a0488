"""Slow twin of the fused accumulation model: exact fractions, one output at a time.

Written from MMA-Sim's description (not checked
against hardware), apart from :mod:`fp8lab.refs.gemm_fused`: each term is a
``fractions.Fraction``, its exponent comes from ``math.frexp``, truncation is
``math.trunc`` of an exact quotient.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

__all__ = ["fused_scalar"]

F32 = npt.NDArray[np.float32]


def _exponent(v: float, floor_exp: int) -> int:
    if v == 0.0:
        return -126
    return max(math.frexp(v)[1] - 1, floor_exp)


def _step(c: float, xs: list[float], ys: list[float], tb: int, rb: int, emin: int) -> float:
    check = sum(x * y for x, y in zip(xs, ys, strict=True)) + c
    if math.isnan(check):
        return float(np.uint32(0x7FFFFFFF).view(np.float32))
    if math.isinf(check):
        return check
    terms = [(Fraction(c), _exponent(c, -126))]
    terms += [
        (Fraction(x) * Fraction(y), _exponent(x, emin) + _exponent(y, emin))
        for x, y in zip(xs, ys, strict=True)
    ]
    top = max(e for _, e in terms)
    grid = Fraction(2) ** (top - tb)
    total = sum((math.trunc(v / grid) * grid for v, _ in terms), Fraction(0))
    if total == 0:
        return 0.0
    e = math.floor(math.log2(abs(total)))
    while Fraction(2) ** e > abs(total):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(total):
        e += 1
    unit = Fraction(2) ** (max(e, -126) - rb)
    kept = math.trunc(total / unit) * unit
    return float(kept) if abs(kept) < 2**128 else math.copysign(math.inf, kept)


def fused_scalar(
    a: F32,
    b: F32,
    *,
    group: int = 32,
    term_bits: int = 13,
    result_bits: int = 13,
    operand_min_exponent: int = -6,
    interval: int | None = None,
) -> F32:
    """Twin of :func:`fp8lab.refs.gemm_fused.fused` (same arguments, same bits)."""
    a64 = np.asarray(a, np.float32).astype(np.float64)
    b64 = np.asarray(b, np.float32).astype(np.float64)
    k = a64.shape[1]
    step = k if interval is None else interval
    out = np.zeros((a64.shape[0], b64.shape[0]), np.float32)
    for i, row in enumerate(a64.tolist()):
        for j, col in enumerate(b64.tolist()):
            acc = np.float32(0.0)
            for s in range(0, k, step):
                part = 0.0
                for g in range(s, min(k, s + step), group):
                    stop = min(k, s + step, g + group)
                    part = float(
                        np.float32(
                            _step(
                                part,
                                row[g:stop],
                                col[g:stop],
                                term_bits,
                                result_bits,
                                operand_min_exponent,
                            )
                        )
                    )
                with np.errstate(over="ignore", invalid="ignore"):
                    acc = np.float32(acc + np.float32(part))
            out[i, j] = acc
    return out
