"""Bit and ulp comparison of float32 and bfloat16 outputs.

``assert_max_ulp`` in ``fp8lab.gates.compare`` takes numpy float kinds only; a
bfloat16 array (ml_dtypes) is compared here through its uint16 bits. The
ulp distance counts representable values between two finite numbers, with
-0 one below +0 (as ``fp8lab.gates.compare``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["bits_differ", "ulp_distance"]

_UINT = {4: np.uint32, 2: np.uint16}


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    if x.dtype.itemsize not in _UINT:
        raise ValueError(f"want float32 or bfloat16, got {x.dtype}")
    return x.view(_UINT[x.dtype.itemsize]).astype(np.int64)


def bits_differ(got: np.ndarray, want: np.ndarray) -> npt.NDArray[np.bool_]:
    """True where the bit patterns differ.

    Raises:
        ValueError: on a dtype or shape difference.
    """
    if got.dtype != want.dtype or got.shape != want.shape:
        raise ValueError(f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}")
    differ: npt.NDArray[np.bool_] = _bits(got) != _bits(want)
    return differ


def ulp_distance(got: np.ndarray, want: np.ndarray) -> npt.NDArray[np.int64]:
    """Elementwise ulps between two float32 or two bfloat16 arrays (finite values).

    Raises:
        ValueError: on a dtype or shape difference.
    """
    bits_differ(got, want)  # validates
    width = 8 * got.dtype.itemsize
    sign = 1 << (width - 1)

    def ordered(x: np.ndarray) -> np.ndarray:
        b = _bits(x)
        mag = b & (sign - 1)
        return np.where(b & sign, -mag - 1, mag)

    distance: npt.NDArray[np.int64] = np.abs(ordered(got) - ordered(want))
    return distance
