"""Kernels a command-line user names as MODULE:OBJ in the meta tests (not a test module)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.kernels import static_scale
from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
from fp8lab.kernels.matmul_protocol import MatmulSpec

__all__ = [
    "KEEP_SIGN_OBJECT",
    "STRING_SPEC_MATMUL",
    "UNDECLARED_OBJECT",
    "UPSTREAM_MATMUL_OBJECT",
    "UPSTREAM_STATED",
    "keep_sign_ml_dtypes",
    "keep_sign_undeclared",
    "nan_to_zero",
]

Codes = npt.NDArray[np.uint8]


def _scaled(x: np.ndarray, scale: Any) -> npt.NDArray[np.float32]:
    inv = np.float32(1) / static_scale(scale)
    return np.asarray(x).astype(np.float32) * inv


def keep_sign_ml_dtypes(x: np.ndarray, scale: Any) -> Codes:
    """A torch-CPU-like kernel: x * (1/s), clamp to ±448, ml_dtypes cast (NaN keeps its sign)."""
    y = np.clip(_scaled(x, scale), -448.0, 448.0).astype(np.float32)
    return y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


keep_sign_ml_dtypes.nan_policy = "keep-sign"  # type: ignore[attr-defined]


def keep_sign_undeclared(x: np.ndarray, scale: Any) -> Codes:
    """The same kernel through fp8lab's codec, with no declared policy."""
    return encode(_scaled(x, scale), "e4m3fn", saturate=True, nan="keep-sign")


def nan_to_zero(x: np.ndarray, scale: Any) -> Codes:
    """Right on every number, but NaN -> 0x00; declares the old numeric code 0."""
    y = _scaled(x, scale)
    out = encode(y, "e4m3fn", saturate=True, nan="canonical")
    out[np.isnan(y)] = 0
    return out


nan_to_zero.nan_policy = 0  # type: ignore[attr-defined]  # a raw code, not a name


def keep_sign_rewritten(x: np.ndarray, scale: Any) -> Codes:
    """Keeps a NaN's sign; its source declares canonical, its process says keep-sign."""
    return keep_sign_undeclared(x, scale)


keep_sign_rewritten.nan_policy = "canonical"  # type: ignore[attr-defined]  # the source's word
setattr(keep_sign_rewritten, "nan_policy", "keep-sign")  # noqa: B010 - what its process reports


class _KeepSignObject:
    """A QuantKernel object (not callable) that declares keep-sign."""

    name = "keep_sign_object"
    nan_policy = "keep-sign"

    def quantize(self, x: np.ndarray, scale: Any) -> Codes:
        return keep_sign_undeclared(x, scale)


class _UndeclaredObject:
    """The same kernel as a QuantKernel object that declares no NaN policy."""

    name = "undeclared_object"

    def quantize(self, x: np.ndarray, scale: Any) -> Codes:
        return keep_sign_undeclared(x, scale)


KEEP_SIGN_OBJECT = _KeepSignObject()
UNDECLARED_OBJECT = _UndeclaredObject()
# A MatmulKernel object whose spec is the two-scalar epilogue: G3 must use that spec.
UPSTREAM_MATMUL_OBJECT = BUILTIN_MATMUL_KERNELS["upstream"]


class _StringSpecMatmul:
    """A MatmulKernel whose spec is a string: G3 would silently use vllm.cpp's model."""

    name = "string_spec"
    spec = "two_scalar"

    def matmul(self, a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        return UPSTREAM_MATMUL_OBJECT.matmul(a, b, s_in, s_w, out)


STRING_SPEC_MATMUL = _StringSpecMatmul()


class _UpstreamStated:
    """The two-scalar epilogue, stated in this source text as literals (read before it runs)."""

    name = "upstream_stated"
    spec = MatmulSpec("sequential", epilogue="two_scalar")

    def matmul(self, a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        return UPSTREAM_MATMUL_OBJECT.matmul(a, b, s_in, s_w, out)


UPSTREAM_STATED = _UpstreamStated()
