"""Planted defects: static-quant kernels that are wrong in one known way each.

They show that a gate can go red (tests/meta) and give notebooks a defect to
display. Each is the reference arithmetic with one change (the
seed's mutation series M1, M2, M3, M4).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode, encode
from fp8lab.kernels.protocols import FunctionKernel
from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.kernels.scale import reciprocal, static_scale

__all__ = [
    "PLANTED_DEFECTS",
    "divide",
    "no_saturation",
    "scale_ignored",
    "truncate_encode",
    "truncation",
]

Codes = npt.NDArray[np.uint8]


def scale_ignored(x: np.ndarray, scale: Any) -> Codes:
    """M1: the scale is validated and then ignored."""
    static_scale(scale)
    return encode(widen_activation(x))


def divide(x: np.ndarray, scale: Any) -> Codes:
    """M2: ``x / s`` instead of ``x * float32(1/s)``."""
    return encode(widen_activation(x) / static_scale(scale))


def no_saturation(x: np.ndarray, scale: Any) -> Codes:
    """M3: overflow becomes NaN instead of ±448."""
    return encode(widen_activation(x) * reciprocal(static_scale(scale)), saturate=False)


def truncate_encode(y: npt.NDArray[np.float32]) -> Codes:
    """Round toward zero to the largest e4m3fn magnitude not above |y| (clamped to 448)."""
    magnitudes = decode(np.arange(0x7F, dtype=np.uint8), "e4m3fn", np.float64)
    with np.errstate(invalid="ignore"):
        a = np.minimum(np.abs(y.astype(np.float64)), 448.0)
    index = np.searchsorted(magnitudes, a, side="right") - 1
    return (index | np.where(np.signbit(y), 0x80, 0)).astype(np.uint8)


def truncation(x: np.ndarray, scale: Any) -> Codes:
    """M4: truncation instead of round-to-nearest-even."""
    return truncate_encode(widen_activation(x) * reciprocal(static_scale(scale)))


PLANTED_DEFECTS = {
    f.__name__: FunctionKernel(f.__name__, f)
    for f in (scale_ignored, divide, no_saturation, truncation)
}
