"""Vectorised round-to-nearest-even from float64 bit fields (the array twin).

Any float input is widened exactly to float64 and rounded once (no double
rounding). For a finite magnitude ``a = sig * 2**(e - 1075)`` the target
quantum is ``2**q`` with ``q = max(e - 1023, minexp) - M``; ``n = RNE(a / 2**q)``
is found with integer shifts, and the magnitude's linear code index is
``(q - qmin) * 2**M + n`` with ``qmin = minexp - M``. The formula runs on
across binades, so the carry of ``n == 2**(M+1)`` needs no special case,
and an index above ``max_code`` is overflow (OFP8 §4.2, IEEE 754 §4.3.1).
A format without subnormals (e8m0fnu) starts its codes at ``n = 2**M`` of the
bottom binade, so its index is ``formula - 2**M``, and anything below its
smallest value rounds up to it (it has no zero; OCP MX v1.0, E8M0 scale). With
``M = 0`` a tie ``1.5 * 2**k`` rounds the integer significand 1.5 to the even
2, so ties go to the larger power of two, as ml_dtypes does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.policy import SpecialCodes
from fp8lab.specs.format import FormatSpec

__all__ = ["encode_float64"]

_MANTISSA_MASK = np.int64((1 << 52) - 1)


def _magnitude_index(bits: npt.NDArray[np.int64], fmt: FormatSpec) -> npt.NDArray[np.int64]:
    """Linear code index of RNE(|x|) for finite ``x`` given as float64 bits.

    Each step writes over an array the earlier steps no longer need, so a
    block allocates a handful of temporaries, not one per operation.
    """
    mant_bits = fmt.mantissa_bits
    biased = bits >> 52  # the sign bit is clear
    significand = bits & _MANTISSA_MASK
    np.bitwise_or(significand, np.int64(1) << 52, out=significand, where=biased > 0)
    # q - (max(biased, 1) - 1075) with q = max(biased - 1023, minexp) - M, the
    # quantum's exponent: 52 - M in the normal binades, more below. Capped at
    # 55: a significand (< 2**53) is then below half a quantum whatever the
    # shift, so a float64 subnormal (biased 0, taken as 1) needs no case of its own.
    shift = (fmt.minexp - mant_bits + 1075) - biased
    np.maximum(shift, 52 - mant_bits, out=shift)
    np.minimum(shift, 55, out=shift)
    # RNE: add one less than half a quantum, and one more when the kept lowest
    # bit is odd (a tie then carries, to even), then truncate.
    lowest = significand >> shift
    lowest &= 1
    significand += lowest
    lowest = np.left_shift(np.int64(1), shift - 1, out=lowest)
    lowest -= 1
    significand += lowest
    n = np.right_shift(significand, shift, out=significand)
    # q - (minexp - M): the binade's steps above the bottom one, in quanta of 2**M codes
    index: npt.NDArray[np.int64] = np.subtract(biased, 1023 + fmt.minexp, out=biased)
    np.maximum(index, 0, out=index)
    index <<= mant_bits
    index += n
    if not fmt.has_subnormals:
        index -= 1 << mant_bits
        np.maximum(index, 0, out=index)
    return index


def encode_float64(x: npt.NDArray[np.float64], fmt: FormatSpec, codes: SpecialCodes) -> np.ndarray:
    """Encode a float64 array with RNE and the resolved policy ``codes``.

    Every lane is rounded (a NaN's or an infinity's index is meaningless and
    replaced); then, lowest precedence first, the sign, an unsigned format's
    negative code, and the zero, overflow, inf and NaN codes of the lane's sign.

    Args:
        x: C-contiguous float64 array.
        fmt: target format.
        codes: what NaN, ±inf, overflow and ±0 become.

    Returns:
        uint8 codes, same shape as ``x``.
    """
    bits = x.view(np.int64).reshape(-1)
    negative = bits < 0
    magnitude_bits = bits & np.int64(0x7FFF_FFFF_FFFF_FFFF)
    index = _magnitude_index(magnitude_bits, fmt)  # shifts stay in [49, 55] for every lane
    out = index.astype(np.uint8)
    np.bitwise_or(out, np.uint8(fmt.sign_bit), out=out, where=negative)
    if codes.negative is not None:
        np.copyto(out, np.uint8(codes.negative), where=negative)
    for mask, pair in (
        ((index == 0) if fmt.has_zero else (magnitude_bits == 0), codes.zero),
        (index > fmt.max_code, codes.overflow),
        (magnitude_bits == 0x7FF0_0000_0000_0000, codes.inf),
        (magnitude_bits > 0x7FF0_0000_0000_0000, codes.nan),
    ):
        if mask.any():  # most blocks hold no zero, overflow, inf or NaN
            np.copyto(out, np.uint8(pair[0]), where=mask & ~negative)
            np.copyto(out, np.uint8(pair[1]), where=mask & negative)
    return out.reshape(x.shape)
