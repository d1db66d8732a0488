"""Kernels under test: the protocols, the built-in ports and scale handling.

The names load on first use (PEP 562): importing one module of this package,
such as the kernel's child process does, pays for no port and no codec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8lab.runtime.lazy_names import lazy_names

if TYPE_CHECKING:
    from fp8lab.kernels.f32tofp8 import f32_to_fp8
    from fp8lab.kernels.protocols import FunctionKernel, QuantKernel
    from fp8lab.kernels.quant import (
        BUILTIN_KERNELS,
        StaticQuantKernel,
        quant_static,
        quant_static_f32tofp8,
        quant_static_upstream,
    )
    from fp8lab.kernels.scale import (
        collapse_shard_scales,
        reciprocal,
        static_scale,
        validate_scale,
    )
    from fp8lab.kernels.sources.shared import load_shared
    from fp8lab.specs.nan import (
        DEFAULT_NAN_POLICY,
        NAN_POLICIES,
        NanPolicy,
        declared_nan_policy,
        held_nan_policy,
    )

_HOMES = {
    "f32_to_fp8": "fp8lab.kernels.f32tofp8",
    "FunctionKernel": "fp8lab.kernels.protocols",
    "QuantKernel": "fp8lab.kernels.protocols",
    "BUILTIN_KERNELS": "fp8lab.kernels.quant",
    "StaticQuantKernel": "fp8lab.kernels.quant",
    "quant_static": "fp8lab.kernels.quant",
    "quant_static_f32tofp8": "fp8lab.kernels.quant",
    "quant_static_upstream": "fp8lab.kernels.quant",
    "collapse_shard_scales": "fp8lab.kernels.scale",
    "reciprocal": "fp8lab.kernels.scale",
    "static_scale": "fp8lab.kernels.scale",
    "validate_scale": "fp8lab.kernels.scale",
    "load_shared": "fp8lab.kernels.sources.shared",
    "DEFAULT_NAN_POLICY": "fp8lab.specs.nan",
    "NAN_POLICIES": "fp8lab.specs.nan",
    "NanPolicy": "fp8lab.specs.nan",
    "declared_nan_policy": "fp8lab.specs.nan",
    "held_nan_policy": "fp8lab.specs.nan",
}

__all__ = [
    "BUILTIN_KERNELS",
    "DEFAULT_NAN_POLICY",
    "NAN_POLICIES",
    "FunctionKernel",
    "NanPolicy",
    "QuantKernel",
    "StaticQuantKernel",
    "collapse_shard_scales",
    "declared_nan_policy",
    "f32_to_fp8",
    "held_nan_policy",
    "load_shared",
    "quant_static",
    "quant_static_f32tofp8",
    "quant_static_upstream",
    "reciprocal",
    "static_scale",
    "validate_scale",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
