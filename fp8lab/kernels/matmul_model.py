"""``model_matmul``: the reference model of a whole kernel, as float32 or bfloat16 arrays.

A thin adapter over :func:`fp8lab.refs.gemm_model.model_output_bits` (the
model G3 checks against, written apart from the kernels): it validates the
arguments as the MatmulFp8 contract says and views the model's output bits
as float32 or bfloat16. ``decode_operands`` is the kernel
side's decode, re-exported here for its old import path.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.kernels.matmul import decode_operands
from fp8lab.kernels.matmul_protocol import VLLM_CPP_SPEC, MatmulSpec, validate_matmul_args
from fp8lab.refs.gemm_model import model_output_bits

__all__ = ["decode_operands", "model_matmul"]

_VIEW = {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16)}


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
        ValueError: for invalid arguments or an unknown accumulation or epilogue.
    """
    a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
    bits = model_output_bits(
        a,
        b,
        si,
        sw,
        out,
        accumulation=spec.accumulation,
        epilogue=spec.epilogue,
        bf16_epilogue=spec.bf16_epilogue,
        trees={s: (nodes, p) for s, nodes, p in spec.trees},
        intermediate=spec.intermediate,
        swap_max_m=spec.swap_max_m,
    )
    return bits.view(_VIEW[out])
