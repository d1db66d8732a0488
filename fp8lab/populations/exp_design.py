"""Designed silu-mul inputs on which a fast exp moves an fp8 byte.

On bf16 gates, the ``exp2-f32-product`` exp differs from the correctly
rounded one by float32 ulps only, which the fp8 grid almost always absorbs.
:func:`search_fast_exp_splits` finds (scale, gate, up) triples where
``fl32(fl32(silu(g) * up) * fl32(1/s))`` lands on different e4m3fn codes under
the two exps (float32 product recipes, e.g. ``expf-silu-mul-fp8``), by a grid
search over scales. :data:`FAST_EXP_SPLITS` is its output, kept as data; a test
re-runs the search and checks each triple against the exact references.

Behind a bf16 store (``bf16(fl32(silu(g) * up))``, vllm.cpp's recipe) a float32
ulp moves the byte only if it flips the bf16 rounding and the two bf16 values
straddle an e4m3 midpoint after the scale. :func:`search_fast_exp_bf16_splits`
finds the (gate, up) pairs whose bf16 store flips, and for each picks the scale
that puts the e4m3 midpoint 1.0625 between the two bf16 values:
:data:`FAST_EXP_BF16_SPLITS`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "FAST_EXP_BF16_SPLITS",
    "FAST_EXP_SPLITS",
    "search_fast_exp_bf16_splits",
    "search_fast_exp_splits",
]

_F = np.float32
_BF16 = np.dtype(ml_dtypes.bfloat16)

# (scale as float32 hex, ((gate bf16 bits, up bf16 bits), ...)), best scales first:
# search_fast_exp_splits(scales=2000, keep=3).
FAST_EXP_SPLITS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    (
        "0x1.72f7b20000000p-2",
        tuple((0x3FDB, u) for u in (0x3F88, 0x3F98, 0x3FB8, 0x3FC8, 0x3FD8, 0x3FE8, 0x3FF8)),
    ),
    ("0x1.99999a0000000p-5", ((0xC11D, 0x3FDD),)),
    ("0x1.c02f300000000p-5", ((0xC11D, 0x3F8C),)),
)


# (scale as float32 hex, ((gate bf16 bits, up bf16 bits),)): search_fast_exp_bf16_splits(keep=4).
FAST_EXP_BF16_SPLITS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("0x1.8c3c3e0000000p-18", ((0xC170, 0x3FAF),)),
    ("0x1.40f0f00000000p-27", ((0xC1B0, 0x3FCF),)),
    ("0x1.15a5a60000000p-49", ((0xC216, 0x3F87),)),
    ("0x1.84b4b60000000p-49", ((0xC216, 0x3FBD),)),
)


def _silu(g: np.ndarray, fast: bool) -> np.ndarray:
    with np.errstate(over="ignore"):
        if fast:
            arg = ((-g) * _F(1.4426950408889634)).astype(_F).astype(np.float64)
            e = np.exp2(arg).astype(_F)
        else:
            e = np.exp(-g.astype(np.float64)).astype(_F)
    silu: np.ndarray = (g / (_F(1) + e)).astype(_F)
    return silu


def search_fast_exp_splits(
    scales: int = 2000, keep: int = 3
) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """The ``keep`` scales of ``0.05 + k * 0.000471`` (k < ``scales``) with the most splits.

    Candidates only: exp is evaluated in float64 here; the exact references decide.
    """
    mags = np.arange(0x3B80, 0x4380, dtype=np.uint16)
    g = np.concatenate([mags, mags | 0x8000]).view(_BF16).astype(_F)
    a, b = _silu(g, False), _silu(g, True)
    differ = a != b
    g, a, b = g[differ], a[differ], b[differ]
    ups = np.arange(0x3F80, 0x4000, dtype=np.uint16).view(_BF16).astype(_F)
    pa, pb = (a[:, None] * ups).astype(_F), (b[:, None] * ups).astype(_F)
    found: list[tuple[int, int, str, tuple[tuple[int, int], ...]]] = []
    for k in range(scales):
        s = _F(0.05 + k * 0.000471)
        inv = _F(1) / s
        ca = (pa * inv).astype(_F).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        cb = (pb * inv).astype(_F).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        i, j = np.nonzero(ca != cb)
        if i.size:
            pairs = tuple(
                (
                    int(g[r : r + 1].astype(_BF16).view(np.uint16)[0]),
                    int(ups[c : c + 1].astype(_BF16).view(np.uint16)[0]),
                )
                for r, c in zip(i, j, strict=True)
            )
            found.append((-len(pairs), k, float(s).hex(), pairs))
    found.sort()
    return tuple((h, p) for _, _, h, p in found[:keep])


def _candidates() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    mags = np.arange(0x3B80, 0x4380, dtype=np.uint16)
    g = np.concatenate([mags, mags | 0x8000]).view(_BF16).astype(_F)
    a, b = _silu(g, False), _silu(g, True)
    differ = a != b
    ups = np.arange(0x3F80, 0x4000, dtype=np.uint16).view(_BF16).astype(_F)
    return g[differ], a[differ], b[differ], ups


def _bits(v: np.ndarray) -> int:
    return int(v.reshape(1).astype(_BF16).view(np.uint16)[0])


def search_fast_exp_bf16_splits(
    keep: int = 4,
) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """Up to ``keep`` (scale, ((gate, up),)) where the fast exp moves a bf16-stored byte.

    Candidates only (float64 exp); the exact references decide.
    """
    g, a, b, ups = _candidates()
    pa = (a[:, None] * ups).astype(_F).astype(_BF16).astype(_F)
    pb = (b[:, None] * ups).astype(_F).astype(_BF16).astype(_F)
    found = []
    for r, c in zip(*np.nonzero(pa != pb), strict=True):
        lo, hi = sorted((abs(float(pa[r, c])), abs(float(pb[r, c]))))
        s = _F(1) / _F(1.0625 / ((lo + hi) / 2))
        inv = _F(1) / s
        if not (2.0**-126 <= float(s) <= 2.0**126):
            continue
        qa = np.array([pa[r, c] * inv, pb[r, c] * inv], _F).astype(ml_dtypes.float8_e4m3fn)
        if qa.view(np.uint8)[0] != qa.view(np.uint8)[1]:
            found.append((float(s).hex(), ((_bits(g[r]), _bits(ups[c])),)))
        if len(found) == keep:
            break
    return tuple(found)
