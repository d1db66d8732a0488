"""Epilogues: float32 accumulator -> scaled output, as the kernels round it.

* folded (vllm.cpp CPU): ``alpha = f32(s_in * s_w)``, ``out = f32(alpha * acc)``.
* two_scalar (upstream vLLM): ``out = f32(s_in * f32(s_w * acc))``.
* two_scalar_swapped: ``out = f32(s_w * f32(s_in * acc))``.
* vllm_cutlass (vLLM SM90 CUTLASS): swapped for M <= 64 (swap_ab), else
  two_scalar.
* intermediate ``exact``: ``RN(s_in·s_w·acc)`` rounded once, whatever the
  order (:mod:`fp8lab.refs.gemm_epilogue`).
* prescaled: the kernel scaled its operands before the product
  (:class:`~fp8lab.kernels.matmul.PortedMatmulKernel` does), so ``acc`` is
  the output as it stands.
* bf16 output rounds the float32 result once, by RNE (ml_dtypes ``astype``).
* bf16 epilogue (CUDA variant): the result is rounded to bf16 whatever the
  requested output; an f32 output is that bf16 value widened, exactly.

(MatmulFp8; the two-scalar form is a recorded deviation.)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.kernels.matmul_protocol import MatmulSpec
from fp8lab.refs.gemm_epilogue import scaled_exactly

__all__ = ["BF16", "apply_epilogue", "folded_alpha"]

BF16 = np.dtype(ml_dtypes.bfloat16)


def folded_alpha(s_in: np.float32, s_w: np.float32) -> np.float32:
    """``alpha = f32(s_in * s_w)``, one float32 rounding."""
    with np.errstate(over="ignore", under="ignore"):
        return np.float32(np.float32(s_in) * np.float32(s_w))


def apply_epilogue(
    acc: npt.NDArray[np.float32],
    s_in: np.float32,
    s_w: np.float32,
    out_dtype: str,
    spec: MatmulSpec,
) -> np.ndarray:
    """Scale and round ``acc`` as ``spec`` says; float32 or bfloat16 [M,N].

    Raises:
        ValueError: for an unknown epilogue name.
    """
    acc = np.asarray(acc, np.float32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if spec.intermediate == "exact" and spec.epilogue != "prescaled":
            out = scaled_exactly(acc, s_in, s_w)
        elif spec.intermediate != "f32":
            raise ValueError(f"unknown intermediate {spec.intermediate!r} for {spec.epilogue}")
        elif spec.epilogue == "folded":
            out = folded_alpha(s_in, s_w) * acc
        elif spec.epilogue == "two_scalar":
            out = np.float32(s_in) * (np.float32(s_w) * acc)
        elif spec.epilogue == "two_scalar_swapped" or (
            spec.epilogue == "vllm_cutlass" and acc.shape[0] <= spec.swap_max_m
        ):
            out = np.float32(s_w) * (np.float32(s_in) * acc)
        elif spec.epilogue == "vllm_cutlass":
            out = np.float32(s_in) * (np.float32(s_w) * acc)
        elif spec.epilogue == "prescaled":
            out = acc
        else:
            raise ValueError(f"unknown epilogue {spec.epilogue!r}")
        out = out.astype(np.float32)
        if out_dtype == "bf16":
            return out.astype(BF16)
        if spec.bf16_epilogue:
            return out.astype(BF16).astype(np.float32)
        return out
