"""Independent references: they import formats, numpy and the standard library only.

G3's GEMM models are here too: ``gemm_accumulators`` and ``gemm_model``.
"""

from fp8lab.refs.gemm_model import model_output_bits
from fp8lab.refs.ml_dtypes_oracle import ML_DTYPES_KEEPS_NAN_SIGN, ml_dtypes_encode
from fp8lab.refs.nvfp4 import NVFP4_NAN_CODE, reference_nvfp4_quant
from fp8lab.refs.scan import (
    ScanPolicy,
    scan_encode,
    scan_pattern_range,
    scan_pattern_runs,
    scan_scalar,
)
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_scheme_quant
from fp8lab.refs.static_quant import reference_quant_static

__all__ = [
    "ML_DTYPES_KEEPS_NAN_SIGN",
    "NVFP4_NAN_CODE",
    "ScanPolicy",
    "ml_dtypes_encode",
    "model_output_bits",
    "reference_quant_static",
    "reference_nvfp4_block_scales",
    "reference_nvfp4_quant",
    "reference_scheme_quant",
    "scan_encode",
    "scan_pattern_range",
    "scan_pattern_runs",
    "scan_scalar",
]
