"""Kernels under test: the protocol, the built-in ports and scale handling."""

from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.kernels.protocol import FunctionKernel, QuantKernel
from fp8lab.kernels.quant_static import (
    BUILTIN_KERNELS,
    StaticQuantKernel,
    quant_static,
    quant_static_f32tofp8,
    quant_static_upstream,
)
from fp8lab.kernels.scale import collapse_shard_scales, reciprocal, static_scale, validate_scale

__all__ = [
    "BUILTIN_KERNELS",
    "FunctionKernel",
    "QuantKernel",
    "StaticQuantKernel",
    "collapse_shard_scales",
    "f32_to_fp8",
    "quant_static",
    "quant_static_f32tofp8",
    "quant_static_upstream",
    "reciprocal",
    "static_scale",
    "validate_scale",
]
