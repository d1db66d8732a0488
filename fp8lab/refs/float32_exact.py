"""Exact float32 arithmetic for the references: one rounding per operation, from IEEE 754.

Values are Python floats that hold float32 values exactly. Each operation
forms the exact result as a ratio of Python integers (``float.as_integer_ratio``
of each operand) and rounds it once to float32 in integer arithmetic
(roundTiesToEven, IEEE 754 §4.3.1; overflow to ±inf, gradual underflow), with
the special cases of §6 (NaN, infinities, signed zeros) written out. ``fmaxf``
and ``fminf`` are C99 F.9.9.2-3: a NaN operand is ignored unless both are NaN.
``f64_div`` and ``f64_mul`` round once to float64 instead, for rules that
compute their scale in double. Nothing here calls numpy's arithmetic, which
the ports use.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from fractions import Fraction

__all__ = [
    "bits_of",
    "f32",
    "f32_div",
    "f32_mul",
    "f64_div",
    "f64_mul",
    "fmaxf",
    "fminf",
    "from_bits",
    "round_bf16",
    "round_f32",
]

_MIN_EXP = -126  # float32 smallest normal exponent
_MANT = 23
_OVERFLOW = (1 << 128) - (1 << (127 - 24))  # max + half ulp: rounds to inf
_BF16_OVERFLOW = (1 << 128) - (1 << (127 - 8))  # bfloat16's


def bits_of(x: float) -> int:
    """The float32 bit pattern of ``x`` (which must be a float32 value)."""
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def from_bits(bits: int) -> float:
    """The float32 with bit pattern ``bits``, as a Python float."""
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def round_f32(value: Fraction, negative: bool) -> float:
    """RNE of the exact magnitude ``value`` to float32, signed; overflow gives ±inf."""
    return _ratio_f32(value.numerator, value.denominator, negative)


def _ratio_f32(p: int, q: int, negative: bool) -> float:
    """RNE of the exact magnitude ``p / q`` (``p >= 0``, ``q > 0``) to float32, signed."""
    return _ratio(p, q, negative, _MANT, _OVERFLOW)


def round_bf16(x: float) -> float:
    """Round a Python float to bfloat16 once (8 significant bits, float32's exponents, RNE).

    Overflow gives ±inf; NaN, infinities and zeros are returned as they are.
    """
    return _round_float(x, 7, _BF16_OVERFLOW)


def _round_float(x: float, mant: int, overflow: int) -> float:
    """A Python float rounded once by :func:`_ratio`; NaN and infinities as they are."""
    if math.isnan(x) or math.isinf(x):
        return x
    return _ratio(*abs(x).as_integer_ratio(), math.copysign(1.0, x) < 0, mant, overflow)


def _ratio(p: int, q: int, negative: bool, mant: int, overflow: int) -> float:
    """RNE of ``p / q`` to ``mant`` fraction bits and float32's exponent range, signed.

    In integers: ``e = floor(log2(p / q))``, the quantum ``2**(max(e, -126) - mant)``,
    the quotient by it and its remainder, ties to the even quotient; from ``overflow``
    (the largest finite value plus half its quantum) up, ±inf.
    """
    sign = -1.0 if negative else 1.0
    if p == 0:
        return math.copysign(0.0, sign)
    if p >= overflow * q:
        return sign * math.inf
    e = p.bit_length() - q.bit_length()  # floor(log2(p / q)) is e or e - 1
    if (q << e > p) if e >= 0 else (q > p << -e):
        e -= 1
    shift = max(e, _MIN_EXP) - mant
    num, den = (p, q << shift) if shift >= 0 else (p << -shift, q)
    n, rest = divmod(num, den)
    if 2 * rest > den or (2 * rest == den and n % 2 == 1):
        n += 1
    return sign * math.ldexp(float(n), shift)  # n <= 2**(mant + 1): exact


def f32(x: float) -> float:
    """Round a Python float (float64) to float32 once."""
    return _round_float(x, _MANT, _OVERFLOW)


Rounding = Callable[[int, int, bool], float]  # exact magnitude p / q, sign -> the rounded value


def _mul(a: float, b: float, rounding: Rounding) -> float:
    """``a * b`` rounded once by ``rounding`` (IEEE 754 §6.1-6.3: inf * 0 is NaN)."""
    negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return math.nan
        return -math.inf if negative else math.inf
    pa, qa = abs(a).as_integer_ratio()
    pb, qb = abs(b).as_integer_ratio()
    return rounding(pa * pb, qa * qb, negative)


def _div(a: float, b: float, rounding: Rounding) -> float:
    """``a / b`` rounded once by ``rounding`` (IEEE 754 §6.1-6.3, §7.3: x/0 is ±inf, 0/0 NaN)."""
    negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    if math.isnan(a) or math.isnan(b) or (a == 0 and b == 0):
        return math.nan
    if math.isinf(a):
        return math.nan if math.isinf(b) else (-math.inf if negative else math.inf)
    if math.isinf(b):
        return -0.0 if negative else 0.0
    if b == 0:
        return -math.inf if negative else math.inf
    pa, qa = abs(a).as_integer_ratio()
    pb, qb = abs(b).as_integer_ratio()
    return rounding(pa * qb, qa * pb, negative)


def _f64(p: int, q: int, negative: bool) -> float:
    """RNE of the exact magnitude ``p / q`` to float64 (int / int is correctly rounded)."""
    try:
        magnitude = p / q
    except OverflowError:
        magnitude = math.inf
    return -magnitude if negative else magnitude


def f32_mul(a: float, b: float) -> float:
    """float32 ``a * b``."""
    return _mul(a, b, _ratio_f32)


def f32_div(a: float, b: float) -> float:
    """float32 ``a / b``."""
    return _div(a, b, _ratio_f32)


def f64_mul(a: float, b: float) -> float:
    """float64 ``a * b``."""
    return _mul(a, b, _f64)


def f64_div(a: float, b: float) -> float:
    """float64 ``a / b``."""
    return _div(a, b, _f64)


def fmaxf(a: float, b: float) -> float:
    """C99 ``fmaxf``: the larger; a NaN operand is ignored unless both are NaN."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a > b else b


def fminf(a: float, b: float) -> float:
    """C99 ``fminf``: the smaller; a NaN operand is ignored unless both are NaN."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a < b else b
