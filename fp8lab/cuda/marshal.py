"""Arguments of the CUDA arm's entry points, as the C ABI and the device kernels take them.

Shared by the host library (ctypes) and the device kernels (cupy), so both
receive the same bytes: x as float32 (x_dtype 0) or bfloat16 bits (x_dtype 1),
contiguous little-endian; the scale as one float32 (fp8lab_kernel.h).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.kernels.scale import static_scale

__all__ = ["OUT_DTYPE_CODES", "X_DTYPE_CODES", "QuantArgs", "quant_args"]

X_DTYPE_CODES = {np.dtype(np.float32): 0, np.dtype(ml_dtypes.bfloat16): 1}
OUT_DTYPE_CODES = {"f32": 0, "bf16": 1}


@dataclass(frozen=True)
class QuantArgs:
    """``fp8lab_quant(x, x_dtype, n, scale, out)`` arguments, out excluded."""

    x: npt.NDArray[Any]  # float32 or uint16 (bfloat16 bits), 1-D, contiguous
    x_dtype: int
    n: int
    scale: np.float32
    shape: tuple[int, ...]


def quant_args(x: np.ndarray, scale: Any) -> QuantArgs:
    """Marshal a quant call: a private contiguous copy of x and the float32 scale.

    Raises:
        TypeError: for an x that is not float32 or bfloat16.
        ValueError: for an invalid scale (see :func:`fp8lab.kernels.scale.static_scale`).
    """
    if not isinstance(x, np.ndarray) or x.dtype not in X_DTYPE_CODES:
        raise TypeError(f"x must be a float32 or bfloat16 array, got {getattr(x, 'dtype', x)!r}")
    code = X_DTYPE_CODES[x.dtype]
    flat = np.array(x, copy=True).reshape(-1)
    bits = flat.view(np.uint16) if code else flat.view(np.float32)
    return QuantArgs(np.ascontiguousarray(bits), code, int(flat.size), static_scale(scale), x.shape)
