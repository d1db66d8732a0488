"""The input contract of the static quantization kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format_dtypes import is_bfloat16

__all__ = ["widen_activation"]


def widen_activation(x: Any) -> npt.NDArray[np.float32]:
    """Return ``x`` as C-contiguous float32: float32 as is, bfloat16 widened exactly.

    Raises:
        TypeError: for any other dtype; a float64 activation is refused rather
            than rounded silently to float32 first.
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy array, got {type(x).__name__}")
    dtype = x.dtype.newbyteorder("=") if x.dtype.byteorder not in "=|" else x.dtype
    if dtype != np.float32 and not is_bfloat16(dtype):
        raise TypeError(
            f"x must be float32 or bfloat16, got {x.dtype}; cast it explicitly "
            "(the kernel does not choose how a wider input is rounded)"
        )
    return np.asarray(x, dtype=dtype, order="C").astype(np.float32, copy=False)
