"""Exact scalar round-to-nearest-even in ``fractions.Fraction`` (the slow twin).

Written from the definition (IEEE 754 §4.3.1, OFP8 §4.2): find the binade of
|x|, divide by its quantum, round the quotient half to even, and read the code
off the linear index. Same signature as the array twin, one element at a time.
The exact part does not depend on the policy and is memoised per distinct
float64 bit pattern, so running several policies over the same 65536 bfloat16
or float16 patterns costs one exact pass.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from functools import lru_cache

import numpy as np

from fp8lab.codecs.policy import SpecialCodes
from fp8lab.specs.format import FormatSpec

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


@lru_cache(maxsize=1 << 17)
def _classify(bits: int, fmt: FormatSpec) -> tuple[int, str, int]:
    """``(sign, kind, index)`` of the float64 with bit pattern ``bits``.

    ``kind`` is ``nan``, ``inf``, ``zero``, ``overflow`` or ``finite``; ``index`` is
    the linear code index of a finite result. Policy-free, so every policy reuses
    it: one exact computation per distinct value.
    """
    x = struct.unpack("<d", struct.pack("<Q", bits))[0]
    sign = bits >> 63
    if math.isnan(x):
        return sign, "nan", 0
    if math.isinf(x):
        return sign, "inf", 0
    a = abs(Fraction(x))
    if a == 0:
        return sign, "zero", 0
    if sign and not fmt.signed:
        return sign, "negative", 0
    quantum_exp = max(_binade(a), fmt.minexp) - fmt.mantissa_bits
    n = _round_half_even(a / Fraction(2) ** quantum_exp)
    index = (quantum_exp - (fmt.minexp - fmt.mantissa_bits)) * (1 << fmt.mantissa_bits) + n
    if not fmt.has_subnormals:  # codes start at the bottom binade's 2**M; no zero to fall to
        index = max(index - (1 << fmt.mantissa_bits), 0)
    elif index == 0:
        return sign, "zero", 0
    if index > fmt.max_code:
        return sign, "overflow", 0
    return sign, "finite", index


def encode_scalar(x: float, fmt: FormatSpec, codes: SpecialCodes) -> int:
    """Encode one Python float exactly.

    Args:
        x: the value; a float32, float16 or bfloat16 value is a float exactly.
        fmt: target format.
        codes: what NaN, ±inf, overflow and ±0 become.

    Returns:
        The code, an int in [0, 256).
    """
    return _code(struct.unpack("<Q", struct.pack("<d", x))[0], fmt, codes)


def _code(bits: int, fmt: FormatSpec, codes: SpecialCodes) -> int:
    sign, kind, index = _classify(bits, fmt)
    if kind == "finite":
        return index | (fmt.sign_bit if sign else 0)
    if kind == "negative" and codes.negative is not None:
        return codes.negative
    special: tuple[int, int] = getattr(codes, kind)
    return special[sign]


def encode_scalars(x: np.ndarray, fmt: FormatSpec, codes: SpecialCodes) -> np.ndarray:
    """Run :func:`encode_scalar` over every element; same contract as the array twin."""
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        bits = x.reshape(-1).astype(np.float64).view(np.uint64).tolist()
    flat = [_code(b, fmt, codes) for b in bits]
    return np.array(flat, dtype=np.uint8).reshape(x.shape)
