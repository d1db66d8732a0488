"""Independent references: they import formats, numpy and the standard library only."""

from fp8lab.refs.ml_dtypes_oracle import ML_DTYPES_KEEPS_NAN_SIGN, ml_dtypes_encode
from fp8lab.refs.scan import ScanPolicy, scan_encode, scan_pattern_range, scan_scalar
from fp8lab.refs.static_quant import reference_quant_static

__all__ = [
    "ML_DTYPES_KEEPS_NAN_SIGN",
    "ScanPolicy",
    "ml_dtypes_encode",
    "reference_quant_static",
    "scan_encode",
    "scan_pattern_range",
    "scan_scalar",
]
