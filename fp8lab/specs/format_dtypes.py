"""The ml_dtypes dtype that stores a catalogue format (ml_dtypes naming: ``float<bits>_<name>``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from fp8lab.specs.format import FormatSpec

__all__ = ["INPUT_DTYPES", "bfloat16_dtype", "input_dtype", "is_bfloat16", "ml_dtypes_type"]

INPUT_DTYPES = ("float32", "bfloat16")  # the input dtypes a quantizer's gate hands it, by name


def ml_dtypes_type(fmt: FormatSpec) -> np.dtype:
    """The ``ml_dtypes.float<bits>_<name>`` dtype of ``fmt`` (one code per byte).

    Raises:
        ValueError: if ml_dtypes has no such type.
    """
    import ml_dtypes  # imported here: the specs load with the standard library alone
    import numpy as np

    type_name = f"float{fmt.bits}_{fmt.name}"
    scalar_type = getattr(ml_dtypes, type_name, None)
    if scalar_type is None:
        raise ValueError(f"ml_dtypes has no {type_name}")
    dtype: np.dtype = np.dtype(scalar_type)
    return dtype


def bfloat16_dtype() -> np.dtype:
    """ml_dtypes' ``bfloat16`` dtype (ml_dtypes is imported on first use: about 0.5 s)."""
    import ml_dtypes
    import numpy as np

    dtype: np.dtype = np.dtype(ml_dtypes.bfloat16)
    return dtype


def is_bfloat16(dtype: object) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16.

    Where ml_dtypes is not loaded no array can have that dtype, so it is not
    imported to say no: a process that never meets bfloat16 never pays for it.
    """
    return "ml_dtypes" in sys.modules and bool(dtype == bfloat16_dtype())


def input_dtype(name: str) -> np.dtype:
    """The numpy dtype of an input dtype name of :data:`INPUT_DTYPES`.

    ml_dtypes is imported only for ``"bfloat16"``.

    Raises:
        ValueError: for a name not in :data:`INPUT_DTYPES`.
    """
    import numpy as np

    if name == "float32":
        return np.dtype(np.float32)
    if name == "bfloat16":
        return bfloat16_dtype()
    raise ValueError(f"unknown input dtype {name!r}; use {INPUT_DTYPES}")
