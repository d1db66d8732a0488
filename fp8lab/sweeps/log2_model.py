"""When a correctly rounded float32 ``log2`` lands on an integer: exact thresholds per binade.

For a float32 ``s = 2**k * (1 + m / 2**23)`` with ``m > 0``, ``log2(s) = k + d``
with ``d = log2(1 + m / 2**23)`` in (0, 1), irrational. A correctly rounded
float32 ``log2f`` returns exactly ``k`` iff ``d`` is below half the float32 gap
next to ``k`` on the side ``k + d`` lies, so ``ceilf(log2f(s))`` is ``k``
where the exponent bits say ``k + 1``; and ``k + 1`` iff ``1 - d`` is below
half the gap below ``k + 1``, so ``floorf(log2f(s))`` is ``k + 1`` where the
bits say ``k``. Both are monotone in ``m``, so each binade has one threshold
mantissa, found here with ``decimal`` at 60 digits (``ln`` is correctly
rounded there) and checked to sit at least 1e-30 from an integer. This
models a *correctly rounded* ``log2f``; CUDA's ``log2f`` is documented to 1 ulp
(CUDA Math API, single-precision accuracy), so a device may differ near the
thresholds: that is a device check, owed.
"""

from __future__ import annotations

import decimal
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = ["ceil_thresholds", "floor_thresholds"]

_CTX = decimal.Context(prec=60)
_LN2 = _CTX.ln(decimal.Decimal(2))


def _half_gap(v: int, above: bool) -> decimal.Decimal:
    """Half the float32 gap next to the integer ``v`` (above it, or below it)."""
    a = abs(v)
    e = a.bit_length() - 1  # 2**e <= |v|
    toward_zero = (v > 0) != above  # the side nearer zero
    gap_exp = e - 23 - (1 if toward_zero and a == 1 << e else 0)
    return _CTX.power(decimal.Decimal(2), gap_exp - 1)


def _mantissa_below(delta: decimal.Decimal) -> int:
    """Count of m in [1, 2**23) with log2(1 + m/2**23) < delta (delta in (0, 1])."""
    bound = (_CTX.exp(delta * _LN2) - 1) * (1 << 23)
    whole = int(bound.to_integral_value(rounding=decimal.ROUND_FLOOR))
    if abs(bound - whole) < decimal.Decimal("1e-30"):
        raise ArithmeticError(f"threshold {bound} too close to an integer to decide")
    return max(0, min(whole, (1 << 23) - 1))


@cache
def ceil_thresholds() -> npt.NDArray[np.int64]:
    """For each biased exponent 1..254: the m in [1, T] where ``ceil(RN(log2 s)) == k``."""
    out = np.zeros(256, np.int64)
    for biased in range(1, 255):
        k = biased - 127
        out[biased] = 0 if k == 0 else _mantissa_below(_half_gap(k, above=True))
    return out


@cache
def floor_thresholds() -> npt.NDArray[np.int64]:
    """For each biased exponent 1..254: the m in [T, 2**23) where ``floor(RN(log2 s)) == k + 1``.

    Stored as the first such m (2**23 when there is none).
    """
    out = np.full(256, 1 << 23, np.int64)
    for biased in range(1, 255):
        k1 = biased - 127 + 1
        if k1 == 0:
            continue
        # 1 - d < h  <=>  d > 1 - h  <=>  m > bound(1 - h)
        out[biased] = _mantissa_below(1 - _half_gap(k1, above=False)) + 1
    return out
