"""A static per-tensor fp8 quant kernel written the natural way, in numpy, and its divide twin.

``quant(x, scale)`` is what vLLM's CPU path computes: the reciprocal of the
scale formed once in float32, ``x * (1/s)`` in float32, clamped to ±448, then
rounded to the nearest e4m3fn code (ties to even; ml_dtypes' cast does that).
``quant_divide`` divides by the scale instead: right almost everywhere, wrong
on the rounding ties the gates look for.

    fp8lab gates --gate G1 --kernel my_quant:quant          # PASS
    fp8lab gates --gate G1 --kernel my_quant:quant_divide   # FAIL

The ``nan_policy`` lines at the end declare the NaN policy: ``assert_gate``
reads the attribute in your own process, and ``fp8lab gates`` reads the lines
as text before it runs the kernel in a process of its own.
"""

import ml_dtypes
import numpy as np

nan_policy = "keep-sign"  # ml_dtypes' cast keeps a NaN's sign


def _codes(y: np.ndarray) -> np.ndarray:
    y = np.clip(y, np.float32(-448.0), np.float32(448.0))  # NaN stays NaN
    return y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


def quant(x: np.ndarray, scale: float) -> np.ndarray:
    """e4m3fn codes of ``x * float32(1/scale)``, clamped to ±448."""
    inv = np.float32(1.0) / np.float32(scale)
    return _codes(np.asarray(x, np.float32) * inv)


def quant_divide(x: np.ndarray, scale: float) -> np.ndarray:
    """e4m3fn codes of ``x / scale``: the divide twin."""
    return _codes(np.asarray(x, np.float32) / np.float32(scale))


quant.nan_policy = nan_policy  # type: ignore[attr-defined]
quant_divide.nan_policy = nan_policy  # type: ignore[attr-defined]
