"""The input contract of the static quantization kernels."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

__all__ = ["widen_activation"]

_ACCEPTED = (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16))


def widen_activation(x: Any) -> npt.NDArray[np.float32]:
    """Return ``x`` as C-contiguous float32: float32 as is, bfloat16 widened exactly.

    Raises:
        TypeError: for any other dtype; a float64 activation is refused rather
            than rounded silently to float32 first.
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy array, got {type(x).__name__}")
    dtype = x.dtype.newbyteorder("=") if x.dtype.byteorder not in "=|" else x.dtype
    if dtype not in _ACCEPTED:
        raise TypeError(
            f"x must be float32 or bfloat16, got {x.dtype}; cast it explicitly "
            "(the kernel does not choose how a wider input is rounded)"
        )
    return np.asarray(x, dtype=dtype, order="C").astype(np.float32, copy=False)
