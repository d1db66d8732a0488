"""A per-token fp8 quantizer written from scratch in numpy, a black box for ``rules infer``.

``per_token(x) -> (codes, scales)`` takes float32 or bfloat16 [M, K] and
returns e4m3fn codes (uint8 [M, K]) and one float32 divisor per row [M]. It
declares no rule; ``fp8lab rules infer`` finds the declarations it follows:

    fp8lab rules infer --scheme per-token --kernel my_scheme_quant:per_token

``per_token_reciprocal`` multiplies by ``float32(1 / s)`` instead of dividing,
which the inference reports as one axis (``apply``) away from the nearest rule.
"""

import ml_dtypes
import numpy as np

E4M3_MAX = np.float32(448.0)
MIN_SCALE = np.float32(1.0 / (448.0 * 512.0))


def _quant(x: np.ndarray, reciprocal: bool) -> tuple[np.ndarray, np.ndarray]:
    x32 = np.asarray(x, np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        amax = np.fmax.reduce(np.abs(x32), axis=1, initial=np.float32(0))
        scales = np.fmax(amax / E4M3_MAX, MIN_SCALE).astype(np.float32)
        col = scales[:, None]
        q = x32 * (np.float32(1) / col) if reciprocal else x32 / col
        q = np.fmax(-E4M3_MAX, np.fmin(q, E4M3_MAX))
    codes = q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return codes, scales


def per_token(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row amax with NaN skipped, ``max(amax / 448, MIN_SCALE)``, ``x / s`` clamped, cast."""
    return _quant(x, reciprocal=False)


def per_token_reciprocal(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`per_token`, the elements ``x * float32(1 / s)``."""
    return _quant(x, reciprocal=True)
