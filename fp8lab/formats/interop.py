"""The ml_dtypes dtype that stores a catalogue format (ml_dtypes naming)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from fp8lab.formats.spec import FormatSpec

__all__ = ["ml_dtypes_type"]


def ml_dtypes_type(fmt: FormatSpec) -> np.dtype:
    """The ``ml_dtypes.float8_<name>`` dtype of ``fmt``.

    Raises:
        ValueError: if ml_dtypes has no such type.
    """
    scalar_type = getattr(ml_dtypes, f"float8_{fmt.name}", None)
    if scalar_type is None:
        raise ValueError(f"ml_dtypes has no float8_{fmt.name}")
    dtype: np.dtype = np.dtype(scalar_type)
    return dtype
