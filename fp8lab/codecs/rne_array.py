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
    biased = (bits >> 52) & 0x7FF
    significand = bits & _MANTISSA_MASK
    np.bitwise_or(significand, np.int64(1) << 52, out=significand, where=biased > 0)
    np.maximum(biased, 1, out=biased)
    quantum_exp = biased - 1023
    np.maximum(quantum_exp, fmt.minexp, out=quantum_exp)
    quantum_exp -= mant_bits
    # shift >= 49; at shift >= 54 the significand (< 2**53) is below half a quantum.
    shift = np.subtract(quantum_exp, biased - 1075, out=biased)
    np.minimum(shift, 55, out=shift)
    n = significand >> shift
    shift -= 1
    half = np.left_shift(1, shift, out=shift)
    remainder = np.bitwise_and(significand, (half << 1) - 1, out=significand)
    round_up = remainder > half
    round_up |= (remainder == half) & (n & 1 == 1)
    n += round_up
    quantum_exp -= fmt.minexp - mant_bits
    index: npt.NDArray[np.int64] = quantum_exp << mant_bits
    index += n
    if not fmt.has_subnormals:
        index -= 1 << mant_bits
        np.maximum(index, 0, out=index)
    return index


def encode_float64(x: npt.NDArray[np.float64], fmt: FormatSpec, codes: SpecialCodes) -> np.ndarray:
    """Encode a float64 array with RNE and the resolved policy ``codes``.

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
    is_nan = magnitude_bits > 0x7FF0_0000_0000_0000
    is_inf = magnitude_bits == 0x7FF0_0000_0000_0000
    finite = ~(is_nan | is_inf)
    if finite.all():
        index = _magnitude_index(magnitude_bits, fmt)
    else:
        index = np.zeros(bits.shape, np.int64)
        index[finite] = _magnitude_index(magnitude_bits[finite], fmt)
    out = index.astype(np.uint8)
    np.bitwise_or(out, np.uint8(fmt.sign_bit), out=out, where=negative)
    zero = (index == 0) if fmt.has_zero else (magnitude_bits == 0)
    if codes.negative is not None:
        out[negative & finite] = codes.negative
    special = (
        (finite & zero, codes.zero),
        (finite & (index > fmt.max_code), codes.overflow),
        (is_inf, codes.inf),
        (is_nan, codes.nan),
    )
    for hits, code in special:  # disjoint classes: the order of assignment is immaterial
        if hits.any():
            out[hits & ~negative] = code[0]
            out[hits & negative] = code[1]
    return out.reshape(x.shape)
