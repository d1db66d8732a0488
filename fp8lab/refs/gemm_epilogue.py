"""The epilogue with no intermediate rounding: ``RN_f32(s_in·s_w·acc)``, one rounding.

Kernel side of ``MatmulSpec(intermediate="exact")``: each output is formed as
an exact :class:`fractions.Fraction`, rounded to float64 (once), moved to its
odd neighbour toward the exact value when inexact and even (round-to-odd;
53 >= 24 + 2 bits), then rounded to float32 (RNE), so it is rounded once in
all. G3's model takes another route (:mod:`fp8lab.refs.gemm_model`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import numpy.typing as npt

__all__ = ["scaled_exactly"]


def scaled_exactly(acc: npt.NDArray[np.float32], s_in: np.float32, s_w: np.float32) -> np.ndarray:
    """``RN_f32(s_in·s_w·acc)`` per output; inf and NaN accumulators as float64 arithmetic."""
    scale = Fraction(float(s_in)) * Fraction(float(s_w))
    out = [_to_f32(scale, float(v)) for v in np.asarray(acc, np.float32).ravel()]
    return np.array(out, np.float32).reshape(np.shape(acc))


def _to_f32(scale: Fraction, v: float) -> np.float32:
    if not np.isfinite(v):
        return np.float32(v * float(scale))
    exact = scale * Fraction(v)
    near = float(exact)
    if Fraction(near) != exact and not np.float64(near).view(np.int64) & 1:
        near = float(np.nextafter(near, np.inf if exact > Fraction(near) else -np.inf))
    return np.float32(near)
