"""torch's CPU GEMMs as G3 kernels: the arrays moved in and out, nothing else.

Each function takes ``(a_codes, b_codes, s_a, s_b, out_dtype)``: A [M,K] and
B [N,K] e4m3fn codes as uint8, the scales (one each, or one per row of A and
per column of the output) and ``"f32"``, ``"bf16"`` or ``"f16"``, and returns
[M,N] numpy values. Infer a declaration and check it:

    fp8lab gemm infer --kernel examples.gemm.torch_gemms:scaled_mm --write-gemm mm.toml
    fp8lab gates --gate G3 --kernel examples.gemm.torch_gemms:scaled_mm --gemm-file mm.toml
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import torch

OUT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def _fp8(codes: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(codes, np.uint8)).view(torch.float8_e4m3fn)


def _numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def scaled_mm(
    a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str
) -> np.ndarray:
    """``torch._scaled_mm`` on CPU: per-tensor scales, or rowwise ([M,1] and [1,N])."""
    sa = torch.tensor(np.array(s_a, np.float32))
    sb = torch.tensor(np.array(s_b, np.float32))
    if sa.ndim:
        sa, sb = sa.reshape(-1, 1), sb.reshape(1, -1)
    a, b = _fp8(a_codes), _fp8(b_codes)
    return _numpy(torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=OUT[out_dtype]))


def bf16_matmul(
    a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str
) -> np.ndarray:
    """``A @ Bᵀ`` in bfloat16 (no scales): the fp8 values are exact in bfloat16."""
    a, b = _fp8(a_codes).to(torch.bfloat16), _fp8(b_codes).to(torch.bfloat16)
    return _numpy(a @ b.t())


def f16_matmul(
    a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str
) -> np.ndarray:
    """``A @ Bᵀ`` in float16 (no scales): the fp8 values are exact in float16."""
    a, b = _fp8(a_codes).to(torch.float16), _fp8(b_codes).to(torch.float16)
    return _numpy(a @ b.t())
