"""Validation of the arrays handed to encoders and decoders."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import is_bfloat16, ml_dtypes_type

__all__ = ["ENCODABLE_DTYPES", "as_code_array", "as_encodable_array"]

ENCODABLE_DTYPES = ("float32", "float64", "bfloat16", "float16")  # bfloat16: ml_dtypes'
_NATIVE = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def as_encodable_array(x: Any) -> np.ndarray:
    """Return ``x`` as a native-endian, C-contiguous float array; never mutate it.

    Python floats and lists are taken as float64 (rounded once from double).

    Raises:
        TypeError: for integer, bool, complex, object or other float8 dtypes.
    """
    arr = np.asarray(x)
    dtype = arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in "=|" else arr.dtype
    if dtype not in _NATIVE and not is_bfloat16(dtype):
        names = ", ".join(ENCODABLE_DTYPES)
        raise TypeError(f"cannot encode dtype {arr.dtype}; pass one of: {names}")
    return np.asarray(arr, dtype=dtype, order="C")


def as_code_array(codes: Any, fmt: FormatSpec) -> npt.NDArray[np.uint8]:
    """Return ``codes`` as contiguous uint8 codes of ``fmt``.

    Accepts uint8 arrays, or the ml_dtypes float8 array of the same format.

    Raises:
        TypeError: for any other dtype, or the float8 dtype of another format.
    """
    arr = np.asarray(codes)
    if arr.dtype == np.uint8:
        return np.asarray(arr, order="C")
    if arr.dtype == ml_dtypes_type(fmt):
        return np.asarray(arr, order="C").view(np.uint8)
    raise TypeError(f"codes must be uint8 (or the ml_dtypes type of {fmt.name}), got {arr.dtype}")
