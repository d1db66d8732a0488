"""An order-faithful model of a whole kernel: decode, accumulate, epilogue.

The model G3 compares a kernel with, bit for bit: ``spec.accumulation`` names
an accumulator in ``MODELS``, ``spec.epilogue`` the epilogue (fp8-facts §3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fp8lab.codecs import decode
from fp8lab.gemm.epilogue import apply_epilogue
from fp8lab.gemm.models import MODELS
from fp8lab.gemm.protocol import VLLM_CPP_SPEC, MatmulSpec, validate_matmul_args

__all__ = ["decode_operands", "model_matmul"]


def decode_operands(a_codes: np.ndarray, b_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both operands decoded to float32 (exact; NaN codes give NaN)."""
    return decode(a_codes, "e4m3fn", dtype=np.float32), decode(b_codes, "e4m3fn", dtype=np.float32)


def model_matmul(
    a_codes: np.ndarray,
    b_codes: np.ndarray,
    s_in: Any,
    s_w: Any,
    out_dtype: str,
    spec: MatmulSpec = VLLM_CPP_SPEC,
) -> np.ndarray:
    """What a kernel claiming ``spec`` must return, bit for bit.

    Raises:
        ValueError: for invalid arguments or an unknown accumulation model.
    """
    a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
    if spec.accumulation not in MODELS:
        raise ValueError(f"unknown accumulation {spec.accumulation!r}; have {sorted(MODELS)}")
    a32, b32 = decode_operands(a, b)
    with np.errstate(invalid="ignore", over="ignore"):
        acc = MODELS[spec.accumulation](a32, b32)
    return apply_epilogue(acc, si, sw, out, spec)
