"""Exact float32 products and quotients of whole arrays, in integers: the array twin.

The same one rounding as :mod:`fp8lab.refs.float32_exact` (roundTiesToEven,
IEEE 754 §4.3.1; overflow to ±inf, gradual underflow; the special cases of §6
and §7.3), on float32 arrays that broadcast. Each finite operand is split
into an integer significand and a power of two; a product is the product of
the significands, a quotient is an integer division of the significands
carried to 40 bits with a sticky bit for its remainder. The result is rounded
in int64 by shifts and compared halves. numpy's float arithmetic (which the
ports use) is never called: floats only carry exact values (``frexp`` of an
integer below 2**53 and ``ldexp`` of a rounded significand). NaN results are
float32's default quiet NaN (0x7FC00000), as the scalar functions give.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from fp8lab.refs.float32_exact import f32_div, f32_mul

__all__ = ["METHODS", "f32_div_ndarray", "f32_mul_ndarray", "scale_rows"]

_F32 = npt.NDArray[np.float32]
_I64 = npt.NDArray[np.int64]
_MANT = 23  # float32's fraction bits
_MIN_EXP = -126  # float32's smallest normal exponent
_QUOTIENT_BITS = 39  # a normalised quotient of 24-bit significands gets 39 or 40 bits
METHODS = ("array", "scalar")  # integer arithmetic on arrays, or one exact ratio per element


def _parts(x: _F32) -> tuple[_I64, _I64, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Significand, exponent (``x == m * 2**e``), sign and "is inf or NaN" of float32 ``x``."""
    u = x.view(np.uint32).astype(np.int64)
    field = (u >> _MANT) & 0xFF
    frac = u & ((1 << _MANT) - 1)
    m = np.where(field == 0, frac, frac | (1 << _MANT))
    e = np.where(field == 0, 1, field) - 127 - _MANT
    return m, e, (u >> 31).astype(bool), field == 0xFF


def _bit_length(m: _I64) -> _I64:
    """Bits of each non-negative integer below 2**53 (``frexp`` of it is exact)."""
    return np.frexp(m.astype(np.float64))[1].astype(np.int64)


def _rounded(m: _I64, e: _I64) -> npt.NDArray[np.float64]:
    """RNE of the magnitudes ``m * 2**e`` (m < 2**62) to float32, as exact float64 values."""
    top = _bit_length(m) - 1 + e  # exponent of the leading bit (m > 0)
    quantum = np.maximum(top, _MIN_EXP) - _MANT
    shift = np.clip(quantum - e, 0, 62)
    kept = m >> shift
    rest = m - (kept << shift)
    half = np.where(shift > 0, np.left_shift(1, np.maximum(shift - 1, 0)), 1 << 62)
    up = (rest > half) | ((rest == half) & (kept & 1 == 1))
    # exact: a significand of at most 25 bits times a power of two within float64's range
    value = np.ldexp((kept + up).astype(np.float64), np.maximum(quantum, e).astype(np.int32))
    return np.where(value >= 2.0**128, np.inf, value)


def _finish(
    value: npt.NDArray[np.float64], negative: npt.NDArray[np.bool_], nan: npt.NDArray[np.bool_]
) -> _F32:
    """float32 of the exact ``value`` (which float32 holds), signed; NaN where ``nan``."""
    signed = np.where(negative, -value, value).astype(np.float32)
    signed[nan] = np.float32(np.nan)
    return signed


class _Operand(NamedTuple):
    """One float32 operand array in parts: significand, exponent, sign and its class."""

    m: _I64
    e: _I64
    negative: npt.NDArray[np.bool_]
    nan: npt.NDArray[np.bool_]
    inf: npt.NDArray[np.bool_]
    zero: npt.NDArray[np.bool_]


def _operands(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[_Operand, _Operand]:
    """``a`` and ``b`` broadcast together, each in parts and classed (NaN, inf, zero)."""
    x, y = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    out = []
    for v in (x, y):
        m, e, negative, special = _parts(np.ascontiguousarray(v))
        nan = special & (m != 1 << _MANT)
        out.append(_Operand(m, e, negative, nan, special & ~nan, ~special & (m == 0)))
    return out[0], out[1]


def f32_mul_ndarray(a: npt.ArrayLike, b: npt.ArrayLike) -> _F32:
    """float32 ``a * b`` elementwise (inf * 0 is NaN), rounded once."""
    p, q = _operands(a, b)
    nan = p.nan | q.nan | (p.inf & q.zero) | (p.zero & q.inf)
    inf = (p.inf | q.inf) & ~nan
    zero = (p.zero | q.zero) & ~nan & ~inf
    plain = ~(nan | inf | zero)
    m = np.where(plain, p.m * q.m, 1)
    value = _rounded(m, np.where(plain, p.e + q.e, 0))
    value = np.where(inf, np.inf, np.where(zero, 0.0, value))
    return _finish(value, p.negative != q.negative, nan)


def _normalised(m: _I64, e: _I64) -> tuple[_I64, _I64]:
    """``m * 2**e`` with ``m`` shifted to exactly 24 bits (m > 0)."""
    up = _MANT + 1 - _bit_length(m)
    return m << up, e - up


def f32_div_ndarray(a: npt.ArrayLike, b: npt.ArrayLike) -> _F32:
    """float32 ``a / b`` elementwise (x/0 is ±inf, 0/0 and inf/inf NaN), rounded once."""
    p, q = _operands(a, b)
    nan = p.nan | q.nan | (p.zero & q.zero) | (p.inf & q.inf)
    inf = ((p.inf | q.zero) & ~nan) & ~q.inf
    zero = (p.zero | q.inf) & ~nan & ~inf
    plain = ~(nan | inf | zero)
    na, ea = _normalised(np.where(plain, p.m, 1), p.e)
    nb, eb = _normalised(np.where(plain, q.m, 1), q.e)
    quotient, rest = np.divmod(na << _QUOTIENT_BITS, nb)
    m = (quotient << 1) | (rest != 0)  # the sticky bit keeps every tie and half-step honest
    value = _rounded(m, np.where(plain, ea - eb - _QUOTIENT_BITS - 1, 0))
    value = np.where(inf, np.inf, np.where(zero, 0.0, value))
    return _finish(value, p.negative != q.negative, nan)


def scale_rows(
    rows: npt.NDArray[np.float32], by: npt.NDArray[np.float32], *, divide: bool, method: str
) -> _F32:
    """Each row of ``rows`` [N, K] times (or over) its ``by`` [N], one float32 rounding each.

    ``method`` ``"array"`` runs the integer arithmetic above; ``"scalar"`` its
    slow twin, :mod:`fp8lab.refs.float32_exact`, one element at a time.

    Raises:
        ValueError: for an unknown method.
    """
    if method == "array":
        return (f32_div_ndarray if divide else f32_mul_ndarray)(rows, by[:, None])
    if method != "scalar":
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    op = f32_div if divide else f32_mul
    out = [[op(v, d) for v in row] for row, d in zip(rows.tolist(), by.tolist(), strict=True)]
    return np.array(out, np.float32).reshape(rows.shape)
