"""Exact float32/bf16 rounding and correctly rounded exp, exp2 and rsqrt.

Written from IEEE 754-2019 §4.3.1 (roundTiesToEven) with integers and
``fractions.Fraction``; it imports numpy and the standard library only.

* :func:`round_fraction_f32`: one RNE rounding of an exact rational to float32
  (subnormals, overflow to inf past max + half an ulp).
* :func:`round_f32_to_bf16`: one RNE rounding of float32 values to bf16 by bits.
* :func:`rsqrt_cr`: RN(1/sqrt(m)), decided by exact comparisons
  (``1/sqrt(m) < mid`` iff ``mid**2 * m > 1``) against the neighbouring
  midpoints (no tie is possible: a midpoint has an odd 25-bit significand,
  and ``mid**2 * m = 1`` would need it to be a power of two).
* :func:`exp_cr` / :func:`exp2_cr`: RN(e**x) / RN(2**x) from rigorous bounds
  ``lo <= e**x <= hi`` (Taylor series of ``e**(x/2**k)`` with the Lagrange
  remainder bounded by ``2|y|**(N+1)/(N+1)!`` for ``|y| <= 1/256``, then ``k``
  squarings rounded outward); the answer is returned only when ``lo`` and ``hi``
  round to the same float32, else the precision doubles. ``e**x`` for rational
  ``x != 0`` is irrational (Lindemann), so no tie exists and the loop ends.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from fp8lab.refs.float32_exact import round_f32

__all__ = [
    "exp2_cr",
    "exp_cr",
    "f32_neighbours",
    "round_f32_to_bf16",
    "round_fraction_f32",
    "rsqrt_cr",
    "widen_bf16",
]


def _floor_log2(q: Fraction) -> int:
    e = q.numerator.bit_length() - q.denominator.bit_length()
    return e if Fraction(2) ** e <= q else e - 1


def round_fraction_f32(q: Fraction) -> float:
    """The float32 nearest ``q`` (ties to even), as a Python float; +-inf past the range."""
    return round_f32(abs(q), q < 0) if q else 0.0


def f32_neighbours(c: float) -> tuple[float, float]:
    """The float32 values just below and just above the finite float32 ``c``."""
    f = np.float32(c)
    down = np.nextafter(f, np.float32(-np.inf))
    up = np.nextafter(f, np.float32(np.inf))
    return float(down), float(up)


def widen_bf16(bits: npt.NDArray[np.uint16]) -> npt.NDArray[np.float32]:
    """bf16 bit patterns as float32 values (exact)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_f32_to_bf16(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """RNE of float32 values to bf16, returned as float32; NaN stays a quiet NaN."""
    u = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    nan = np.isnan(np.asarray(v, np.float32))
    return np.where(nan, np.float32(np.nan), out).astype(np.float32)


@functools.lru_cache(maxsize=1 << 17)
def rsqrt_cr(m: float) -> float:
    """RN(1/sqrt(m)) for a float32 ``m``: inf at +-0, 0 at inf, NaN below 0 or at NaN."""
    if math.isnan(m) or m < 0:
        return math.nan
    if m == 0:
        return math.copysign(math.inf, m)
    if math.isinf(m):
        return 0.0
    mq = Fraction(m)
    c = float(np.float32(1.0 / math.sqrt(m)))
    while True:
        down, up = f32_neighbours(c)
        lo_mid, hi_mid = (Fraction(c) + Fraction(down)) / 2, (Fraction(c) + Fraction(up)) / 2
        if lo_mid * lo_mid * mq > 1:  # 1/sqrt(m) < lo_mid
            c = down
        elif hi_mid * hi_mid * mq < 1:  # 1/sqrt(m) > hi_mid
            c = up
        else:
            return c


def _round_down(q: Fraction, bits: int) -> Fraction:
    shift = bits - _floor_log2(q)
    return Fraction(math.floor(q * Fraction(2) ** shift)) / Fraction(2) ** shift


def _round_up(q: Fraction, bits: int) -> Fraction:
    shift = bits - _floor_log2(q)
    return Fraction(math.ceil(q * Fraction(2) ** shift)) / Fraction(2) ** shift


def _exp_bounds(x: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """``lo <= e**x <= hi``, both within about ``2**(k - bits)`` relative of it."""
    k = max(0, _floor_log2(abs(x)) + 9) if x else 0
    y = x / Fraction(2) ** k  # |y| <= 1/256
    term, total, n = Fraction(1), Fraction(1), 0
    tiny = Fraction(1, 2 ** (bits + 8))
    while abs(term) > tiny:
        n += 1
        term = term * y / n
        total += term
    remainder = 2 * abs(term * y) / (n + 1)  # >= 2|y|**(n+1)/(n+1)!
    lo, hi = _round_down(total - remainder, bits), _round_up(total + remainder, bits)
    for _ in range(k):
        lo, hi = _round_down(lo * lo, bits), _round_up(hi * hi, bits)
    return lo, hi


def _exp_rational(x: Fraction) -> float:
    bits = 96
    while True:
        lo, hi = _exp_bounds(x, bits)
        a, b = round_fraction_f32(lo), round_fraction_f32(hi)
        if a == b:
            return a
        bits *= 2


@functools.lru_cache(maxsize=1 << 17)
def exp_cr(x: float) -> float:
    """RN(e**x) in float32 for a float32 ``x``."""
    if math.isnan(x):
        return math.nan
    if x == 0:
        return 1.0
    if x > 100:  # e**100 > 2**144: past the float32 range
        return math.inf
    if x < -120:  # e**-120 < 2**-173: below half the least subnormal
        return 0.0
    return _exp_rational(Fraction(x))


_LN2_BITS = 200


@functools.lru_cache(maxsize=1)
def _ln2_bounds() -> tuple[Fraction, Fraction]:
    """Bounds on ln 2 = 2 sum 1/((2i+1) 3**(2i+1)); the tail is below the next term."""
    total, i = Fraction(0), 0
    while True:
        term = Fraction(2, (2 * i + 1) * 3 ** (2 * i + 1))
        total += term
        i += 1
        if term < Fraction(1, 2**_LN2_BITS):
            return total, total + term  # tail < term * (1/9) / (1 - 1/9) < term


@functools.lru_cache(maxsize=1 << 17)
def exp2_cr(x: float) -> float:
    """RN(2**x) in float32 for a float32 ``x``."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.inf if x > 0 else 0.0
    if x == int(x) and -149 <= x <= 127:
        return math.ldexp(1.0, int(x))
    if x >= 128:
        return math.inf
    if x < -151:
        return 0.0
    q = Fraction(x)
    n = math.floor(q)
    frac = q - n  # 2**x = 2**n * e**(frac ln2), frac in (0, 1)
    ln2_lo, ln2_hi = _ln2_bounds()
    bits = 96
    while True:
        lo = _exp_bounds(frac * ln2_lo, bits)[0] * Fraction(2) ** n
        hi = _exp_bounds(frac * ln2_hi, bits)[1] * Fraction(2) ** n
        a, b = round_fraction_f32(lo), round_fraction_f32(hi)
        if a == b:
            return a
        bits *= 2
        if bits > _LN2_BITS:
            raise ArithmeticError(f"exp2({x!r}) needs ln 2 to more than {_LN2_BITS} bits")
