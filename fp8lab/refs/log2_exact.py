"""Exact powers of two and float32-rounded base-2 logarithms of positive rationals.

``floor_log2``/``ceil_log2`` compare with ``2**k`` exactly; the ``*_float32``
forms model ``floorf``/``ceilf`` of a correctly rounded float32 ``log2``
(decided with 60 decimal digits: ``log2`` of a rational that is not a power
of two is irrational, so never a tie).
"""

from __future__ import annotations

import decimal
from fractions import Fraction

__all__ = ["ceil_log2", "ceil_log2_float32", "floor_log2", "floor_log2_float32"]


def floor_log2(v: Fraction) -> int:
    """The k with 2**k <= v < 2**(k+1), for v > 0."""
    k = v.numerator.bit_length() - v.denominator.bit_length()
    return k - 1 if Fraction(2) ** k > v else k


def ceil_log2(v: Fraction) -> int:
    """The least k with 2**k >= v, for v > 0."""
    k = floor_log2(v)
    return k if Fraction(2) ** k == v else k + 1


def _fraction_part(v: Fraction, k: int) -> Fraction:
    """``log2(v) - k`` to 60 digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        r = decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)
        return Fraction(r.ln() / decimal.Decimal(2).ln() - k)


def floor_log2_float32(v: Fraction) -> int:
    """``floor(float32(log2(v)))`` for v > 0, ``log2`` rounded to nearest float32.

    With ``2**k < v < 2**(k+1)``, ``log2(v) = k + t`` rounds up onto ``n = k + 1``
    exactly when ``1 - t`` is under half the float32 spacing below ``n`` (towards
    zero for a positive ``n``, a power of two's spacing there being half); ``n =
    0`` is never reached (float32 holds values that near 0). 60 digits decide.
    """
    k = floor_log2(v)
    n = k + 1
    if Fraction(2) ** k == v or n == 0:
        return k
    e = floor_log2(Fraction(abs(n)))
    if n > 0 and n == 2**e:
        e -= 1  # the spacing just below a power of two is half
    half = Fraction(2) ** (e - 24)
    t = _fraction_part(v, k)
    return n if 1 - t < half else k


def ceil_log2_float32(v: Fraction) -> int:
    """``ceil(float32(log2(v)))`` for v > 0, ``log2`` rounded to nearest float32.

    With ``2**k < v < 2**(k+1)``, ``log2(v) = k + t`` (0 < t < 1) rounds to ``k``
    exactly when ``t`` is under half the float32 spacing next to ``k`` on the
    side of ``k + t`` (towards zero for a negative ``k``); else the ceiling is
    ``k + 1``. ``t`` is irrational, so no tie; 60 digits decide it.
    """
    k = floor_log2(v)
    if Fraction(2) ** k == v:
        return k
    if k == 0:
        return 1
    e = floor_log2(Fraction(abs(k)))
    if k < 0 and abs(k) == 2**e:
        e -= 1  # the spacing just below a power of two is half
    half = Fraction(2) ** (e - 24)
    t = _fraction_part(v, k)
    return k if t < half else k + 1
