"""Reference static quantization: ``scan(float32(x) * float32(1/s))``.

The G1 reference. It forms the reciprocal and the product itself (the
arithmetic the spec fixes) and rounds with the scan reference; it never
imports the kernels it checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.specs.formats import FORMATS

__all__ = ["reference_quant_static"]

_E4M3FN = FORMATS["e4m3fn"]
_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)


def reference_quant_static(x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """e4m3fn codes of ``x * float32(1/scale)``, SATFINITE, NaN -> 0x7F.

    Args:
        x: float32 or bfloat16 array; bfloat16 widens exactly.
        scale: a valid static scale (the caller validates it).
    """
    inv = np.float32(1.0) / np.float32(scale)
    return scan_encode(np.asarray(x).astype(np.float32) * inv, _E4M3FN, _SATFINITE)
