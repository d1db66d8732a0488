"""Planted defects: kernels and encoders that are wrong in one known way each."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode, encode
from fp8lab.kernels import FunctionKernel, reciprocal

Codes = npt.NDArray[np.uint8]


def _f32(x: np.ndarray) -> npt.NDArray[np.float32]:
    return np.asarray(x).astype(np.float32)


def scale_ignored(x: np.ndarray, scale: Any) -> Codes:
    return encode(_f32(x))


def divide(x: np.ndarray, scale: Any) -> Codes:
    return encode(_f32(x) / np.float32(scale))


def no_saturation(x: np.ndarray, scale: Any) -> Codes:
    return encode(_f32(x) * reciprocal(scale), saturate=False)


def truncate_encode(y: npt.NDArray[np.float32]) -> Codes:
    """Round toward zero: the largest magnitude not above |y|."""
    mags = decode(np.arange(0x7F, dtype=np.uint8), "e4m3fn", np.float64)
    a = np.minimum(np.abs(y.astype(np.float64)), 448.0)
    index = np.searchsorted(mags, a, side="right") - 1
    return (index | np.where(np.signbit(y), 0x80, 0)).astype(np.uint8)


def truncation(x: np.ndarray, scale: Any) -> Codes:
    return truncate_encode(_f32(x) * reciprocal(scale))


def returns_float(x: np.ndarray, scale: Any) -> np.ndarray:
    return _f32(x)


def raises(x: np.ndarray, scale: Any) -> Codes:
    raise RuntimeError("kernel exploded")


def always_zero(x: np.ndarray, scale: Any) -> Codes:
    return np.zeros(np.shape(x), np.uint8)


PLANTED = {
    "scale_ignored": FunctionKernel("scale_ignored", scale_ignored),
    "divide": FunctionKernel("divide", divide),
    "no_saturation": FunctionKernel("no_saturation", no_saturation),
    "truncation": FunctionKernel("truncation", truncation),
}


def one_ulp_off_encoder(x: npt.NDArray[np.float32]) -> Codes:
    """The fast encoder, but one code too high at one bit pattern (1.0)."""
    out = encode(x, "e4m3fn")
    out[x.view(np.uint32) == 0x3F80_0000] += 1
    return out
