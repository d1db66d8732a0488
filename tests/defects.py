"""Test-only defects beyond fp8lab.kernels.planted: broken kernels and encoders."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.kernels.planted import divide, truncate_encode

__all__ = [
    "always_zero",
    "divide",
    "one_ulp_off_encoder",
    "raises",
    "returns_float",
    "truncate_encode",
]

Codes = npt.NDArray[np.uint8]


def returns_float(x: np.ndarray, scale: Any = None) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def raises(x: np.ndarray, scale: Any) -> Codes:
    raise RuntimeError("kernel exploded")


def always_zero(x: np.ndarray, scale: Any) -> Codes:
    return np.zeros(np.shape(x), np.uint8)


def one_ulp_off_encoder(x: npt.NDArray[np.float32]) -> Codes:
    """The fast encoder, but one code too high at one bit pattern (1.0)."""
    out = encode(x, "e4m3fn")
    out[x.view(np.uint32) == 0x3F80_0000] += 1
    return out
