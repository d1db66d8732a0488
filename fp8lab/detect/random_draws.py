"""How likely uniform random inputs are to expose divide vs reciprocal.

``Generator.uniform(-a, a, n).astype(float32)`` draws ``-a + 2a*j*2**-53`` for
j uniform in [0, 2**53) (numpy: lower + range * next_double, and next_double is
a 53-bit integer times 2**-53); for a power of two a every draw is exact in
float64. The cast rounds it once to float32 (RNE), so a float32 word x is drawn
with probability (number of grid points in its rounding interval) / 2**53, the
interval being half an ulp either side, closed iff x's last bit is even.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from fp8lab.detect.scales import as_scales
from fp8lab.detect.tie_population import exposing_bits

__all__ = ["DEFAULT_RANDOM_SCALES", "RandomDrawCheck", "draw_probability", "random_draw_check"]

DEFAULT_RANDOM_SCALES = (
    1.0,
    0.5,
    0.035,
    0.0092,
    7.25,
    0.13,
    0.77,
    3.0,
    0.017,
    0.041,
    0.25,
    2.0,
    0.1,
    0.3,
)
_GRID = 1 << 53


def _f32(bits: int) -> Fraction:
    return Fraction(float(np.uint32(bits).view(np.float32)))


def draw_probability(bits: Iterable[int], half_width: float = 2.0) -> Fraction:
    """Exact probability that one ``uniform(-a, a)`` draw cast to float32 is in ``bits``.

    Args:
        bits: distinct finite nonzero float32 patterns.
        half_width: a, a power of two.

    Raises:
        ValueError: if a is not a positive power of two.
    """
    a = Fraction(half_width)
    if a <= 0 or math.frexp(half_width)[0] != 0.5:
        raise ValueError(f"half_width {half_width!r} must be a positive power of two")
    step = 2 * a / _GRID
    hits = 0
    for b in set(int(v) for v in bits):
        mag, sign = b & 0x7FFFFFFF, -1 if b >> 31 else 1
        x, lo_n, hi_n = _f32(mag), _f32(mag - 1), _f32(mag + 1)
        lo, hi = (lo_n + x) / 2, (x + hi_n) / 2
        if sign < 0:
            lo, hi = -hi, -lo
        closed = mag % 2 == 0
        j_lo, j_hi = (lo + a) / step, (hi + a) / step
        first = math.ceil(j_lo) if closed else math.floor(j_lo) + 1
        last = math.floor(j_hi) if closed else math.ceil(j_hi) - 1
        hits += max(0, min(last, _GRID - 1) - max(first, 0) + 1)
    return Fraction(hits, _GRID)


@dataclass(frozen=True)
class RandomDrawCheck:
    """Random uniform words against the complete exposing sets.

    Args:
        scales: the scales (float32 values as floats).
        n: draws, reused at every scale (as G1 reuses its random words).
        seed: the Generator seed.
        half_width: draws are uniform in [-a, a).
        hits: drawn words that expose, per scale.
        p_per_draw: exact probability one draw exposes, per scale.
        p_union: exact probability one draw exposes at some scale.
        p_none_reused: probability that n draws reused at every scale expose nothing.
        p_none_independent: the same for fresh draws per scale.
    """

    scales: tuple[float, ...]
    n: int
    seed: int
    half_width: float
    hits: tuple[int, ...]
    p_per_draw: tuple[float, ...]
    p_union: float
    p_none_reused: float
    p_none_independent: float


def random_draw_check(
    scales: Iterable[float] = DEFAULT_RANDOM_SCALES,
    *,
    n: int = 20000,
    seed: int,
    half_width: float = 2.0,
) -> RandomDrawCheck:
    """Draw ``n`` uniform words once and count exposures at every scale, with exact odds.

    Raises:
        ValueError: for no scales, n < 1 or a bad half_width.
    """
    if n < 1:
        raise ValueError(f"need at least one draw, got n={n}")
    arr = as_scales(scales)
    words = np.random.default_rng(seed).uniform(-half_width, half_width, n).astype(np.float32)
    sets: list[npt.NDArray[np.uint32]] = [exposing_bits(float(s)) for s in arr]
    hits = tuple(int(np.isin(words.view(np.uint32), e).sum()) for e in sets)
    per = [draw_probability(e.tolist(), half_width) for e in sets]
    union = draw_probability(np.concatenate(sets).tolist(), half_width)
    none_ind = math.prod((1 - float(p)) ** n for p in per)
    return RandomDrawCheck(
        tuple(float(s) for s in arr),
        n,
        seed,
        half_width,
        hits,
        tuple(float(p) for p in per),
        float(union),
        (1 - float(union)) ** n,
        none_ind,
    )
