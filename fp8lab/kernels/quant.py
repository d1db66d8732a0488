"""Static per-tensor FP8 quantization: ``e4m3fn(clamp(x * (1/s), -448, 448))``.

The reciprocal is formed once in float32 and multiplied, never divided
(vLLM common.cu:31 and common.cuh:58-77 at 5559679; vllm.cpp QuantFp8Static).
The variants differ only in what NaN becomes:

* ``quant_static`` (vllm.cpp CPU): NaN -> 0x7F, sign dropped.
* ``quant_static_upstream`` (vLLM CUDA): ``fmaxf(-448, fminf(y, 448))``
  ignores NaN and returns the bound, so NaN -> 448 = 0x7E.
* ``quant_static_f32tofp8``: the vllm.cpp CPU kernel through the port of
  its production encoder (frexp + nearbyint) rather than the fast codec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.kernels.f32tofp8 import FP8_MAX, f32_to_fp8
from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.kernels.scale import reciprocal, static_scale
from fp8lab.specs.nan import DEFAULT_NAN_POLICY

__all__ = [
    "BUILTIN_KERNELS",
    "StaticQuantKernel",
    "quant_static",
    "quant_static_f32tofp8",
    "quant_static_upstream",
]


def _encode_vllm_cpp(y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    return encode(y, "e4m3fn", saturate=True, nan="canonical")


def _encode_upstream(y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    # fminf/fmaxf return the non-NaN operand: NaN -> +448 whatever its sign.
    clamped = np.where(np.isnan(y), FP8_MAX, np.clip(y, -FP8_MAX, FP8_MAX))
    return encode(clamped.astype(np.float32), "e4m3fn", saturate=True, nan="canonical")


@dataclass(frozen=True)
class StaticQuantKernel:
    """``encoder(x * float32(1/scale))`` for float32 or bfloat16 x.

    Args:
        name: short id used in records.
        encoder: float32 -> e4m3fn codes, saturating (the clamp lives here).
        nan_policy: its NaN policy by name (see ``fp8lab.specs.nan``).
    """

    name: str
    encoder: Callable[[npt.NDArray[np.float32]], npt.NDArray[np.uint8]]
    nan_policy: str = DEFAULT_NAN_POLICY

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Quantize ``x`` with the static per-tensor ``scale`` (or per-shard scales, collapsed).

        Raises:
            TypeError: for an x that is not float32 or bfloat16.
            ValueError: for an invalid scale (see :func:`static_scale`).
        """
        inv = reciprocal(static_scale(scale))
        return self.encoder(widen_activation(x) * inv)

    def encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        """Encode already-scaled float32 values."""
        return self.encoder(widen_activation(y))


_VLLM_CPP = StaticQuantKernel("vllm_cpp", _encode_vllm_cpp)
_UPSTREAM = StaticQuantKernel("upstream", _encode_upstream, nan_policy="clamp-pos")
_F32TOFP8 = StaticQuantKernel("f32tofp8", f32_to_fp8)

BUILTIN_KERNELS = {k.name: k for k in (_VLLM_CPP, _UPSTREAM, _F32TOFP8)}


def quant_static(x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """vllm.cpp CPU QuantFp8Static: e4m3fn codes, NaN -> 0x7F."""
    return _VLLM_CPP.quantize(x, scale)


def quant_static_upstream(x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """VLLM CUDA static per-tensor quant: e4m3fn codes, NaN -> 0x7E."""
    return _UPSTREAM.quantize(x, scale)


quant_static_upstream.nan_policy = _UPSTREAM.nan_policy  # type: ignore[attr-defined]


def quant_static_f32tofp8(x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """vllm.cpp CPU QuantFp8Static through the ported ``F32ToFp8``."""
    return _F32TOFP8.quantize(x, scale)
