"""The ml_dtypes dtype that stores a catalogue format (ml_dtypes naming: ``float<bits>_<name>``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from fp8lab.specs.format import FormatSpec

__all__ = ["ml_dtypes_type"]


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
