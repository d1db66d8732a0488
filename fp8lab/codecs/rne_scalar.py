"""Exact scalar round-to-nearest-even in ``fractions.Fraction`` (the slow twin).

Written from the definition (IEEE 754 §4.3.1, OFP8 §4.2): find the binade of
|x|, divide by its quantum, round the quotient half to even, and read the code
off the linear index. Same signature as the array twin, one element at a time.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fp8lab.codecs.policy import SpecialCodes
from fp8lab.formats import FormatSpec

__all__ = ["encode_scalar", "encode_scalars"]


def _round_half_even(q: Fraction) -> int:
    floor = q.numerator // q.denominator
    rest = q - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1):
        return floor + 1
    return floor


def _binade(a: Fraction) -> int:
    """The e with 2**e <= a < 2**(e+1), for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return e


def encode_scalar(x: float, fmt: FormatSpec, codes: SpecialCodes) -> int:
    """Encode one Python float exactly.

    Args:
        x: the value; a float32 or bfloat16 value is a float exactly.
        fmt: target format.
        codes: what NaN, ±inf, overflow and ±0 become.

    Returns:
        The code, an int in [0, 256).
    """
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return codes.nan[sign]
    if math.isinf(x):
        return codes.inf[sign]
    a = abs(Fraction(x))
    if a == 0:
        return codes.zero[sign]
    quantum_exp = max(_binade(a), fmt.minexp) - fmt.mantissa_bits
    n = _round_half_even(a / Fraction(2) ** quantum_exp)
    index = (quantum_exp - (fmt.minexp - fmt.mantissa_bits)) * (1 << fmt.mantissa_bits) + n
    if index == 0:
        return codes.zero[sign]
    if index > fmt.max_code:
        return codes.overflow[sign]
    return index | (fmt.sign_bit if sign else 0)


def encode_scalars(x: np.ndarray, fmt: FormatSpec, codes: SpecialCodes) -> np.ndarray:
    """Run :func:`encode_scalar` over every element; same contract as the array twin."""
    flat = [encode_scalar(float(v), fmt, codes) for v in x.reshape(-1)]
    return np.array(flat, dtype=np.uint8).reshape(x.shape)
