"""Foreign encoders and kernels that misbehave, for the exhaustive and detect meta tests.

Workers import them by ``tests.meta.foreign_kernels:NAME``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.detect import resolve_kernel

Codes = npt.NDArray[np.uint8]


def _reciprocal(x: np.ndarray, scale: Any) -> Codes:
    return resolve_kernel("reciprocal").quantize(x, scale)


# --- encoders (float32 array -> codes) -------------------------------------------------


def clip_in_place_encoder(x: npt.NDArray[np.float32]) -> Codes:
    """Clips its input to [-1, 1] in place, then encodes it."""
    np.clip(x, -1.0, 1.0, out=x)
    return encode(x, "e4m3fn")


def sneaky_clip_encoder(x: npt.NDArray[np.float32]) -> Codes:
    """Re-enables writing on its argument, clips it in place, then encodes it."""
    x.setflags(write=True)
    np.clip(x, -1.0, 1.0, out=x)
    return encode(x, "e4m3fn")


def nan_keeps_sign(x: npt.NDArray[np.float32]) -> Codes:
    """Right except that it keeps the NaN sign whatever the run asks for."""
    return encode(x, "e4m3fn", saturate=True, nan="keep-sign")


def any_format(x: npt.NDArray[np.float32], *, fmt: str, saturate: bool, nan: str) -> Codes:
    """One function for every format and policy: takes what the run asks for."""
    return encode(x, fmt, saturate=saturate, nan=nan)


def any_format_spelled_format(
    x: npt.NDArray[np.float32], format: str, saturate: bool = True, nan: str = "canonical"
) -> Codes:
    return encode(x, format, saturate=saturate, nan=nan)


def any_format_kwargs(x: npt.NDArray[np.float32], **kw: Any) -> Codes:
    return encode(x, kw["fmt"], saturate=kw["saturate"], nan=kw["nan"])


def encoder_value_error(x: npt.NDArray[np.float32]) -> Codes:
    raise ValueError("encoder refuses")


def encoder_runtime_error(x: npt.NDArray[np.float32]) -> Codes:
    raise RuntimeError("encoder exploded")


def encoder_system_exit(x: npt.NDArray[np.float32]) -> Codes:
    raise SystemExit(0)


def encoder_wrong_shape(x: npt.NDArray[np.float32]) -> Codes:
    return encode(x, "e4m3fn")[:-1]


def encoder_wrong_dtype(x: npt.NDArray[np.float32]) -> Any:
    return encode(x, "e4m3fn").astype(np.int16)


def encoder_list(x: npt.NDArray[np.float32]) -> Any:
    return encode(x, "e4m3fn").tolist()


def encoder_kills_worker(x: npt.NDArray[np.float32]) -> Codes:
    os._exit(7)


# --- quantization kernels (x, scale) -> codes ------------------------------------------


def clip_in_place_kernel(x: np.ndarray, scale: Any) -> Codes:
    """Clips its input to [-1, 1] in place, then quantizes like ``reciprocal``."""
    np.clip(x, -1.0, 1.0, out=x)
    return _reciprocal(x, scale)


def sneaky_clip_kernel(x: np.ndarray, scale: Any) -> Codes:
    x.setflags(write=True)
    np.clip(x, -1.0, 1.0, out=x)
    return _reciprocal(x, scale)


def wrong_at_one(x: np.ndarray, scale: Any) -> Codes:
    """``reciprocal``, one code off at x = 1.0 only."""
    out = _reciprocal(x, scale)
    out[np.asarray(x, np.float32) == np.float32(1.0)] ^= np.uint8(1)
    return out


def kernel_value_error(x: np.ndarray, scale: Any) -> Codes:
    raise ValueError("kernel refuses")


def kernel_runtime_error(x: np.ndarray, scale: Any) -> Codes:
    raise RuntimeError("kernel exploded")


def kernel_list(x: np.ndarray, scale: Any) -> Any:
    return _reciprocal(x, scale).tolist()


def kernel_wrong_shape(x: np.ndarray, scale: Any) -> Codes:
    return _reciprocal(x, scale)[:-1]


def kernel_kills_worker(x: np.ndarray, scale: Any) -> Codes:
    os._exit(7)
