"""fp8lab: prove, bit for bit, whether an FP8 quantization kernel is right.

Public interface (names fixed; see README):
``encode``, ``decode``, ``quant_static``, ``FORMATS``, ``scheme_quant``.
"""

from fp8lab.codecs import as_ml_dtypes, decode, encode
from fp8lab.formats import FORMATS, FormatSpec
from fp8lab.kernels import (
    QuantKernel,
    collapse_shard_scales,
    quant_static,
    quant_static_f32tofp8,
    quant_static_upstream,
    validate_scale,
)
from fp8lab.schemes.port import scheme_quant

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
