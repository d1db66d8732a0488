"""Kernels under test: the protocol, the built-in ports and scale handling.

``load_shared`` (a kernel in a shared library, :mod:`fp8lab.kernels.shared`)
is imported on first use: it needs :mod:`fp8lab.gemm`, which needs this package.
"""

from typing import Any

from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.kernels.nan_policy import (
    DEFAULT_NAN_POLICY,
    NAN_POLICIES,
    KernelNanPolicy,
    declared_nan_policy,
    resolve_nan_policy,
)
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
    "DEFAULT_NAN_POLICY",
    "NAN_POLICIES",
    "FunctionKernel",
    "KernelNanPolicy",
    "QuantKernel",
    "StaticQuantKernel",
    "collapse_shard_scales",
    "declared_nan_policy",
    "f32_to_fp8",
    "quant_static",
    "quant_static_f32tofp8",
    "quant_static_upstream",
    "reciprocal",
    "resolve_nan_policy",
    "load_shared",
    "static_scale",
    "validate_scale",
]


def __getattr__(name: str) -> Any:
    if name == "load_shared":
        from fp8lab.kernels.shared import load_shared

        return load_shared
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
