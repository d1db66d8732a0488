"""The pattern ranges where the fused brute-force loop must equal its numpy twin.

Shared by tests/detect/test_brute_fused.py (green) and
tests/meta/test_brute_fused_goes_red.py (planted defects, red).
"""

from __future__ import annotations

import numpy as np

from fp8lab.detect.brute import exposing_in_chunk
from fp8lab.detect.fused import exposing_fused
from fp8lab.detect.midpoints import midpoint_table

SIGN = 1 << 31
HALF = 1 << 11  # patterns either side of each centre
FIXED = (
    (0x00000000, 0x00010000),  # +0 and the smallest float32 subnormals
    (0x007F0000, 0x00810000),  # largest subnormals, smallest normals
    (0x7F7F0000, 0x7F810000),  # float32 max, +inf, the first NaNs
    (0x7FFF0000, 0x80000000),  # the last NaNs
)


def ranges_that_matter(fmt: str, scale: float) -> list[tuple[int, int]]:
    """Ranges around x = m*s for the low, middle and top midpoints m (ties, the
    saturation boundary), both signs, plus the fixed specials and subnormals."""
    s = np.float32(scale)
    mids = midpoint_table(fmt).values
    picks = np.unique(np.r_[mids[:4], mids[mids.size // 2 - 2 : mids.size // 2 + 2], mids[-4:]])
    out = []
    for m in picks:
        with np.errstate(over="ignore"):
            centre = np.float32(m * np.float64(s))
        c = int(np.array(centre, np.float32).view(np.uint32))
        if c >= 0x7F800000:  # m*s overflows float32: no input reaches this midpoint
            continue
        out.append((max(c - HALF, 0), min(c + HALF, 0x7F800000)))
    out += list(FIXED)
    return sorted({r for lo, hi in out for r in ((lo, hi), (lo + SIGN, hi + SIGN))})


def twin_mismatches(
    fmt: str, scale: float, a: str = "reciprocal", b: str = "divide"
) -> tuple[int, int, list[tuple[int, int]]]:
    """``(examined, exposing, ranges where the engines differ)`` over :func:`ranges_that_matter`."""
    examined = exposing = 0
    bad = []
    for lo, hi in ranges_that_matter(fmt, scale):
        fused = exposing_fused(a, b, fmt, scale, lo, hi)
        twin = exposing_in_chunk(a, b, fmt, scale, lo, hi)
        examined += hi - lo
        exposing += twin.size
        if fused.dtype != twin.dtype or fused.tobytes() != twin.tobytes():
            bad.append((lo, hi))
    return examined, exposing, bad
