"""ml_dtypes as an external oracle, with its policy stated.

ml_dtypes' ``astype(float8_*)`` (0.5-0.7) rounds to nearest even, once, from
float32 or float64; it is **non-saturating** (overflow and ±inf become NaN, or
inf in e5m2) and **keeps the sign of NaN** where the format has a negative NaN
A saturating comparison goes through :func:`ml_dtypes_encode`
with ``saturate=True``, which clips to ±max first (SATFINITE semantics; the
clip keeps NaN). No other policy is offered: this adapter never pretends the
library does what it does not.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import ml_dtypes_type

__all__ = ["ML_DTYPES_KEEPS_NAN_SIGN", "ml_dtypes_encode"]

ML_DTYPES_KEEPS_NAN_SIGN = True


def ml_dtypes_encode(x: np.ndarray, fmt: FormatSpec, *, saturate: bool) -> npt.NDArray[np.uint8]:
    """Encode through ml_dtypes; ``saturate=True`` clips to ±max before the cast.

    Raises:
        TypeError: for a non-float array.
    """
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise TypeError(f"ml_dtypes_encode needs floats, got {x.dtype}")
    source = x
    if saturate:
        bound = float(fmt.max)
        source = np.clip(x, np.asarray(-bound, x.dtype), np.asarray(bound, x.dtype))
    return source.astype(ml_dtypes_type(fmt)).view(np.uint8)
