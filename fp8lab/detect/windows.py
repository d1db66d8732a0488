"""Candidate windows: the float32 inputs that can expose divide vs reciprocal.

Derivation (u = 2**-24, s and r = fl(1/s) normal because 2**-126 <= s <= 2**126).
Let y = x/s exactly, d = fl(x/s), q = fl(x*r). Then r = (1/s)(1+e1) with
|e1| <= u, so |x*r - y| <= u|y|, and |q - x*r| <= u|x*r|; hence
|q - y| <= (2u + u**2)|y| and |d - y| <= u|y| (both results are float32-normal
near any midpoint, since every midpoint is >= 2**-10 > 2**-126).
Saturating RNE is monotone and constant between midpoints, so the two codes
differ only if a midpoint m lies in [min(d, q), max(d, q)]. Then
|y - m| <= (2u + u**2)|y|, so y lies in m[1 - 3u, 1 + 3u] and
x = y*s in ms[1 - 3u, 1 + 3u]. The window below takes every float32 in
ms[1 - 4u, 1 + 4u] (the extra u absorbs float64 rounding of the bounds, which
is below 2**-52 relative; ms itself is exact: a 24-bit scale times a midpoint
of at most 5 significant bits) plus one pattern either side. The windows of
neighbouring midpoints cannot overlap: midpoints differ by a factor of at least
1 + 2**-4. The sign is symmetric: fl(-a op b) = -fl(a op b) and RNE encoding is
odd, so x exposes iff -x does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["SIGN", "U", "candidate_windows", "window_bits"]

U = 2.0**-24
SIGN = np.uint32(0x80000000)
_INF_BITS = 0x7F800000


def candidate_windows(
    scales: npt.NDArray[np.float32], mids: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """First positive float32 pattern and pattern count of each window.

    Args:
        scales: float32 scales, shape (S,).
        mids: positive midpoints, shape (K,).

    Returns:
        ``(first, count)``, each (S, K): window k at scale j holds the patterns
        ``first[j, k] .. first[j, k] + count[j, k] - 1``.
    """
    t = scales.astype(np.float64)[:, None] * mids[None, :]
    with np.errstate(over="ignore"):
        lo = (t * (1 - 4 * U)).astype(np.float32)
        hi = (t * (1 + 4 * U)).astype(np.float32)
    first = np.maximum(lo.view(np.uint32).astype(np.int64) - 1, 0)
    last = np.minimum(hi.view(np.uint32).astype(np.int64) + 1, _INF_BITS)
    return first, np.maximum(last - first + 1, 0)


def window_bits(
    first: npt.NDArray[np.int64], count: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.bool_]]:
    """Materialise windows as positive patterns, padded to the widest window.

    Returns:
        ``(bits, valid)`` of shape ``first.shape + (W,)``; padding is masked out.
    """
    width = int(count.max()) if count.size else 0
    step = np.arange(width, dtype=np.int64)
    valid = step < count[..., None]
    bits = np.where(valid, first[..., None] + step, 0).astype(np.uint32)
    return bits, valid
