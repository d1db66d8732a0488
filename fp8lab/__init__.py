"""fp8lab: prove, bit for bit, whether an FP8 quantization kernel is right.

Public interface (names fixed; see docs/python.md):
``encode``, ``decode``, ``quant_static``, ``FORMATS``, ``scheme_quant``.

The names are imported on first use (PEP 562), so ``import fp8lab.cli.main``
and ``fp8lab --help`` do not pay for numpy, ml_dtypes and numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8lab.runtime.lazy_names import lazy_names

if TYPE_CHECKING:
    from fp8lab.codecs import as_ml_dtypes, decode, encode
    from fp8lab.kernels import (
        QuantKernel,
        collapse_shard_scales,
        quant_static,
        quant_static_f32tofp8,
        quant_static_upstream,
        validate_scale,
    )
    from fp8lab.kernels.scheme import scheme_quant
    from fp8lab.specs.format import FormatSpec
    from fp8lab.specs.formats import FORMATS

_HOMES = {
    "FORMATS": "fp8lab.specs.formats",
    "FormatSpec": "fp8lab.specs.formats",
    "QuantKernel": "fp8lab.kernels",
    "as_ml_dtypes": "fp8lab.codecs",
    "collapse_shard_scales": "fp8lab.kernels",
    "decode": "fp8lab.codecs",
    "encode": "fp8lab.codecs",
    "quant_static": "fp8lab.kernels",
    "quant_static_f32tofp8": "fp8lab.kernels",
    "quant_static_upstream": "fp8lab.kernels",
    "scheme_quant": "fp8lab.kernels.scheme",
    "validate_scale": "fp8lab.kernels",
}

__all__ = [
    "FORMATS",
    "FormatSpec",
    "QuantKernel",
    "as_ml_dtypes",
    "collapse_shard_scales",
    "decode",
    "encode",
    "quant_static",
    "quant_static_f32tofp8",
    "quant_static_upstream",
    "scheme_quant",
    "validate_scale",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
