"""Vectorised round-to-nearest-even from a float's bit fields (the array twin).

A float64 input is rounded from its own bits in 64-bit lanes; float32 in
32-bit lanes, with float16 and bfloat16 widened exactly to float32 first
(:mod:`fp8lab.codecs.api`): one rounding each, never two. The arithmetic is
the same for both layouts (``W`` stored significand bits, bias ``B``: 52 and
1023, or 23 and 127). For a finite magnitude ``a = sig * 2**(e - B - W)``,
``e = max(biased, 1)``, the target quantum is ``2**q`` with
``q = max(e - B, minexp) - M``; ``n = RNE(a / 2**q)``
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

from functools import cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.policy import SpecialCodes
from fp8lab.specs.format import FormatSpec

__all__ = ["encode_float32", "encode_float64"]


class _Layout(NamedTuple):
    """A binary float's bit fields, and the integer lanes its bits are worked in."""

    lanes: type[np.signedinteger[Any]]  # int64 for float64, int32 for float32
    mantissa: int  # stored significand bits: 52, 23
    bias: int  # exponent bias: 1023, 127
    inf: int  # the bits of +inf

    @property
    def shift_cap(self) -> int:
        """A shift from which on every significand (< 2**(mantissa + 1)) rounds to 0.

        55 for float64, 26 for float32: a larger shift changes no code.
        """
        return self.mantissa + 3


_FLOAT64 = _Layout(np.int64, 52, 1023, 0x7FF0_0000_0000_0000)
_FLOAT32 = _Layout(np.int32, 23, 127, 0x7F80_0000)


# numpy's maximum and minimum against a scalar take a slow strided loop; against a
# contiguous array of the same value, its vector loop (about a third of the time here).
# Arrays up to this size (the encode API's block) get a slice of such an operand, one per
# lane type and value, made once; larger ones the scalar (the same result).
_OPERAND_MAX = 1 << 16


@cache
def _filled(lanes: np.dtype[Any], value: int) -> npt.NDArray[Any]:
    operand = np.full(_OPERAND_MAX, value, lanes)
    operand.setflags(write=False)
    return operand


def _bound(a: npt.NDArray[Any], value: int, ufunc: np.ufunc) -> None:
    """``a = ufunc(a, value)`` in place (``np.maximum``: a floor; ``np.minimum``: a cap)."""
    if a.size <= _OPERAND_MAX:
        ufunc(a, _filled(a.dtype, value)[: a.size], out=a)
    else:
        ufunc(a, value, out=a)


def _magnitude_index(bits: npt.NDArray[Any], fmt: FormatSpec, layout: _Layout) -> npt.NDArray[Any]:
    """Linear code index of RNE(|x|) for finite ``x`` given as its bits (sign clear).

    Each step writes over an array the earlier steps no longer need, so a
    block allocates a handful of temporaries, not one per operation.
    """
    mant_bits, width = fmt.mantissa_bits, layout.mantissa
    one = layout.lanes(1)
    # e = max(biased, 1): a subnormal's exponent is the bottom binade's.
    exponent = bits >> width
    _bound(exponent, 1, np.maximum)
    # The significand with its implicit bit, bits - (e - 1) * 2**width: a normal
    # number's biased exponent becomes the one bit, and a subnormal (e = 1) keeps
    # its stored bits, without it.
    significand = np.left_shift(exponent, width)
    np.subtract(bits, significand, out=significand)
    significand += one << width
    # q - (e - bias - width) with q = max(e - bias, minexp) - M, the quantum's
    # exponent: width - M in the normal binades, more below. Capped where a
    # significand is below half a quantum whatever the shift.
    shift = (fmt.minexp - mant_bits + layout.bias + width) - exponent
    _bound(shift, width - mant_bits, np.maximum)
    _bound(shift, layout.shift_cap, np.minimum)
    # RNE: add one less than half a quantum, and one more when the kept lowest
    # bit is odd (a tie then carries, to even), then truncate.
    lowest = significand >> shift
    lowest &= 1
    significand += lowest
    shift -= 1
    lowest = np.left_shift(one, shift, out=lowest)
    shift += 1
    lowest -= 1
    significand += lowest
    n = np.right_shift(significand, shift, out=significand)
    # q - (minexp - M): the binade's steps above the bottom one, in quanta of 2**M codes
    index: npt.NDArray[Any] = np.subtract(exponent, layout.bias + fmt.minexp, out=exponent)
    _bound(index, 0, np.maximum)
    index <<= mant_bits
    index += n
    if not fmt.has_subnormals:
        index -= 1 << mant_bits
        _bound(index, 0, np.maximum)
    return index


def _encode(
    bits: npt.NDArray[Any], fmt: FormatSpec, codes: SpecialCodes, layout: _Layout
) -> np.ndarray:
    negative = bits < 0
    magnitude_bits = bits & layout.lanes(layout.inf | ((1 << layout.mantissa) - 1))
    index = _magnitude_index(magnitude_bits, fmt, layout)
    out = index.astype(np.uint8)
    # the sign bit by arithmetic: a masked ufunc branches on each lane, slow on mixed signs
    out |= negative.view(np.uint8) * np.uint8(fmt.sign_bit)
    if codes.negative is not None:
        np.copyto(out, np.uint8(codes.negative), where=negative)
    if not out.size:
        return out
    # Most blocks hold no zero, overflow, inf or NaN: reductions tell, and only the
    # kinds present are looked for lane by lane, lowest precedence first.
    special = []
    if (index.min() == 0) if fmt.has_zero else (magnitude_bits.min() == 0):
        special.append(((index == 0) if fmt.has_zero else (magnitude_bits == 0), codes.zero))
    if index.max() > fmt.max_code:
        special.append((index > fmt.max_code, codes.overflow))
    if magnitude_bits.max() >= layout.inf:
        special.append((magnitude_bits == layout.inf, codes.inf))
        special.append((magnitude_bits > layout.inf, codes.nan))
    for lanes, pair in special:
        np.copyto(out, np.uint8(pair[0]), where=lanes & ~negative)
        np.copyto(out, np.uint8(pair[1]), where=lanes & negative)
    return out


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
    return _encode(x.view(np.int64).reshape(-1), fmt, codes, _FLOAT64).reshape(x.shape)


def encode_float32(x: npt.NDArray[np.float32], fmt: FormatSpec, codes: SpecialCodes) -> np.ndarray:
    """:func:`encode_float64`'s arithmetic on float32 bits in 32-bit lanes (the same codes).

    A float32 subnormal is taken in the bottom float32 binade's quantum, which is
    the format's bottom quantum wherever the format's bottom binade is at or above
    2**-126. A format reaching lower (e8m0fnu, 2**-127) is rounded from float64
    bits instead, where every float32 is normal. Arguments and codes as
    :func:`encode_float64`'s, for a C-contiguous float32 ``x``.
    """
    if fmt.minexp < 1 - _FLOAT32.bias:
        with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
            return encode_float64(x.astype(np.float64), fmt, codes)
    return _encode(x.view(np.int32).reshape(-1), fmt, codes, _FLOAT32).reshape(x.shape)
