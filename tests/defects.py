"""Test-only defects beyond fp8lab.kernels.planted: broken kernels and encoders."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.kernels.planted import divide, truncate_encode

__all__ = [
    "always_zero",
    "divide",
    "one_ulp_off_encoder",
    "raises",
    "returns_float",
    "truncate_encode",
]

Codes = npt.NDArray[np.uint8]


def returns_float(x: np.ndarray, scale: Any = None) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def raises(x: np.ndarray, scale: Any) -> Codes:
    raise RuntimeError("kernel exploded")


def always_zero(x: np.ndarray, scale: Any) -> Codes:
    return np.zeros(np.shape(x), np.uint8)


def one_ulp_off_encoder(x: npt.NDArray[np.float32]) -> Codes:
    """The fast encoder, but one code too high at one bit pattern (1.0)."""
    out = encode(x, "e4m3fn")
    out[x.view(np.uint32) == 0x3F80_0000] += 1
    return out


def gemm_first_output_doubled(
    a: np.ndarray, b: np.ndarray, s_in: float, s_w: float, out: str
) -> np.ndarray:
    """The vllm.cpp GEMM with out[0,0] spoiled: G3 must name that output position."""
    from fp8lab.kernels.matmul import matmul_vllm_cpp

    result = np.array(matmul_vllm_cpp(a, b, s_in, s_w, out), copy=True)
    result.flat[0] = result.flat[0] * 2 + 1
    return result
