"""Built-in matmul kernels under test: ports of the production epilogues.

* ``vllm_cpp``: vllm.cpp CPU MatmulFp8. Decode both operands, sum over k
  in order in float32 without FMA, ``out = f32(alpha * acc)`` with
  ``alpha = f32(s_in * s_w)``; f32 out, or bf16 by RNE.
* ``upstream``: the same accumulation with upstream vLLM's two epilogue
  scalars, ``f32(s_in * f32(s_w * acc))`` (a recorded deviation).
* ``upstream_cuda_bf16``: upstream's CUDA epilogue, which writes bf16; an
  f32 output is that bf16 value widened.

The port loops i, j, k as the C++ does (one accumulator per output) and
decodes through ``fp8lab.codecs``; its epilogue is :mod:`fp8lab.kernels.matmul_epilogue`.
This is the kernel side: G3 checks it against :mod:`fp8lab.refs.gemm_model`,
which shares none of this code (``tests/refs/test_independence.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_protocol import VLLM_CPP_SPEC, MatmulSpec, validate_matmul_args

__all__ = [
    "BUILTIN_MATMUL_KERNELS",
    "MATMUL_VARIANTS",
    "PortedMatmulKernel",
    "decode_operands",
    "matmul_upstream",
    "matmul_vllm_cpp",
]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _matmul_loop(
    a: np.ndarray, b: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    m, k = a.shape
    n = b.shape[0]
    for i in range(m):
        for j in range(n):
            acc = np.float32(0.0)
            for kk in range(k):
                acc += a[i, kk] * b[j, kk]
            out[i, j] = acc


def decode_operands(a_codes: np.ndarray, b_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both operands decoded to float32 by the codec (exact; NaN codes give NaN)."""
    return decode(a_codes, "e4m3fn", dtype=np.float32), decode(b_codes, "e4m3fn", dtype=np.float32)


def _accumulate(
    a_codes: npt.NDArray[np.uint8],
    b_codes: npt.NDArray[np.uint8],
    prescale: tuple[np.float32, np.float32] | None = None,
) -> np.ndarray:
    a, b = decode_operands(a_codes, b_codes)
    if prescale is not None:  # scale, then multiply, then sum (float32, RNE)
        a, b = a * prescale[0], b * prescale[1]
    out = np.empty((a.shape[0], b.shape[0]), np.float32)
    _matmul_loop(a, b, out)
    return out


@dataclass(frozen=True)
class PortedMatmulKernel:
    """A ported kernel: validated arguments, the i-j-k float32 loop, an epilogue."""

    name: str
    spec: MatmulSpec

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """[M,N] float32 or bfloat16; see the module docstring.

        Raises:
            ValueError: for arguments that break the contract
                (:func:`~fp8lab.kernels.matmul_protocol.validate_matmul_args`).
        """
        a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
        with np.errstate(invalid="ignore", over="ignore"):  # NaN codes propagate
            prescale = (si, sw) if self.spec.epilogue == "prescaled" else None
            acc = _accumulate(a, b, prescale)
        return apply_epilogue(acc, si, sw, out, self.spec)


_VLLM_CPP = PortedMatmulKernel("vllm_cpp", VLLM_CPP_SPEC)
_UPSTREAM = PortedMatmulKernel("upstream", MatmulSpec(epilogue="two_scalar"))
_CUDA_BF16 = PortedMatmulKernel(
    "upstream_cuda_bf16", MatmulSpec(epilogue="two_scalar", bf16_epilogue=True)
)

# vLLM's SM90 CUTLASS epilogue order on the sequential float32 sum (the real
# kernel also accumulates with FP8FastAccum: fused_32_e8m13 models that part).
_CUTLASS_EPILOGUE = PortedMatmulKernel("vllm_cutlass_epilogue", MatmulSpec(epilogue="vllm_cutlass"))

# Upstream's order with no intermediate rounding: RN(s_in·s_w·acc) once.
_EXACT_INTERMEDIATE = PortedMatmulKernel(
    "exact_intermediate", MatmulSpec(epilogue="two_scalar", intermediate="exact")
)

# Operands scaled before the product (how torch's CPU _scaled_mm was reproduced).
_PRESCALED = PortedMatmulKernel("operands_prescaled", MatmulSpec(epilogue="prescaled"))

BUILTIN_MATMUL_KERNELS = {k.name: k for k in (_VLLM_CPP, _UPSTREAM)}
MATMUL_VARIANTS = {
    **BUILTIN_MATMUL_KERNELS,
    _CUDA_BF16.name: _CUDA_BF16,
    _CUTLASS_EPILOGUE.name: _CUTLASS_EPILOGUE,
    _PRESCALED.name: _PRESCALED,
    _EXACT_INTERMEDIATE.name: _EXACT_INTERMEDIATE,
}


def matmul_vllm_cpp(
    a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
) -> np.ndarray:
    """vllm.cpp CPU MatmulFp8 as a plain function."""
    return _VLLM_CPP.matmul(a_codes, b_codes, s_in, s_w, out_dtype)


def matmul_upstream(
    a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
) -> np.ndarray:
    """Upstream vLLM's two-scalar epilogue on the same accumulation."""
    return _UPSTREAM.matmul(a_codes, b_codes, s_in, s_w, out_dtype)
