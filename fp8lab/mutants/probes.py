"""Where the equivalence re-check looks first: boundary probes and the sweep's chunk order.

The probes are a cheap first stage that rejects most non-equivalent mutants
at once; they prove nothing alone. Per sign (STYLE §2): every e4m3fn
magnitude, every midpoint between neighbours (the 464 tie above 448 too)
and every power of two of float32, each with its 4 neighbouring patterns
either side; zeros, float32's extremes, ±inf and NaN payloads; and a seeded
sample of patterns in and around the e4m3fn range. The exhaustive sweep
then visits every float32 pattern, chunks nearest the format's range first.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.specs.formats import FORMATS

__all__ = ["PROBE_SEED", "chunk_order", "encoder_probes", "scaled_probes"]

PROBE_SEED = 20261202
_FMT = FORMATS["e4m3fn"]
_SIGN = np.uint32(0x8000_0000)
_SPECIAL_PATTERNS = (
    0x0000_0000, 0x0000_0001, 0x007F_FFFF, 0x0080_0000, 0x7F7F_FFFF,
    0x7F80_0000, 0x7F80_0001, 0x7FA0_0000, 0x7FC0_0000, 0x7FC0_0001, 0x7FFF_FFFF,
)  # fmt: skip


def _anchor_values() -> list[float]:
    mags = [_FMT.magnitude_value(i) for i in range(_FMT.max_code + 2)]
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(mags)]
    return [float(v) for v in mags + mids] + [2.0**e for e in range(-149, 128)]


def _with_neighbours(patterns: npt.NDArray[np.int64], reach: int = 4) -> npt.NDArray[np.uint32]:
    near = (patterns[:, None] + np.arange(-reach, reach + 1)[None, :]).reshape(-1)
    near = near[(near >= 0) & (near <= 0x7FFF_FFFF)]
    return np.unique(near).astype(np.uint32)


@cache
def encoder_probes() -> npt.NDArray[np.float32]:
    """The boundary probes of an encoder, both signs (read-only float32 array)."""
    anchors = np.array(_anchor_values(), np.float32).view(np.uint32).astype(np.int64)
    rng = np.random.default_rng(PROBE_SEED)
    band = rng.integers(0x3880_0000, 0x4480_0000, 1 << 16)  # |x| in [2^-14, 1024)
    anywhere = rng.integers(0, 0x8000_0000, 1 << 14)
    positive = np.unique(
        np.concatenate(
            [
                _with_neighbours(anchors),
                np.array(_SPECIAL_PATTERNS, np.uint32),
                band.astype(np.uint32),
                anywhere.astype(np.uint32),
            ]
        )
    )
    out = np.concatenate([positive, positive | _SIGN]).view(np.float32)
    out.setflags(write=False)
    return out


def scaled_probes(scale: float) -> npt.NDArray[np.float32]:
    """Inputs x whose scaled value x * fl(1/s) lands on or beside each encoder probe."""
    y = encoder_probes()
    finite = y[np.isfinite(y)].astype(np.float64) * float(np.float32(scale))
    with np.errstate(over="ignore"):
        x = finite.astype(np.float32)
    bits = x[np.isfinite(x)].view(np.uint32)
    magnitude = _with_neighbours((bits & np.uint32(0x7FFF_FFFF)).astype(np.int64), reach=2)
    specials = np.array(_SPECIAL_PATTERNS, np.uint32)
    positive = np.unique(np.concatenate([magnitude, specials]))
    return np.concatenate([positive, positive | _SIGN]).view(np.float32)


def chunk_order(chunk: int, scale: float = 1.0) -> list[tuple[int, int]]:
    """Every ``[lo, hi)`` chunk of the 2^32 patterns, nearest the e4m3fn range (times s) first."""
    centre = np.float32(float(_FMT.smallest_subnormal * _FMT.max) ** 0.5 * float(np.float32(scale)))
    key = int(centre.view(np.uint32))
    bounds = [(lo, lo + chunk) for lo in range(0, 1 << 32, chunk)]
    return sorted(bounds, key=lambda b: (abs((b[0] & 0x7FFF_FFFF) - key) // chunk, b[0]))
