"""Builders of the GEMM mutants (target ``gemm``, gated by G3): the seed's M5a/M5b and more.

Each is the vllm.cpp matmul contract with one bug, written as a plain
``func(a_codes, b_codes, s_in, s_w, out_dtype)`` and wrapped as a matmul kernel.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.gates.g3 import run_g3
from fp8lab.gates.records import GateResult
from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
from fp8lab.kernels.matmul_model import decode_operands
from fp8lab.kernels.matmul_models import sequential
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulKernel

__all__ = [
    "GEMM_BUILDERS",
    "accumulates_in_bf16",
    "alpha_divides",
    "builtin_gemm_kernel",
    "decodes_nan_as_480",
    "folds_weight_scale_only",
    "g3_runner",
    "ignores_alpha",
    "kernels_with_epilogue",
    "transposes_b",
]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _out(y: np.ndarray, out_dtype: str) -> np.ndarray:
    y = y.astype(np.float32)
    return y.astype(_BF16) if out_dtype == "bf16" else y


def _alpha(s_in: Any, s_w: Any) -> np.float32:
    return np.float32(np.float32(s_in) * np.float32(s_w))


def ignores_alpha(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    """Seed M5a: the GEMM ignores alpha."""
    return _out(sequential(*decode_operands(a, b)), out)


def folds_weight_scale_only(
    a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str
) -> np.ndarray:
    """Seed M5b: the caller folds the weight scale only."""
    return _out(np.float32(s_w) * sequential(*decode_operands(a, b)), out)


def alpha_divides(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    """The epilogue divides: alpha = s_in / s_w."""
    alpha = np.float32(np.float32(s_in) / np.float32(s_w))
    return _out(alpha * sequential(*decode_operands(a, b)), out)


def transposes_b(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    """Reads B [N,K] as if it were [K,N]."""
    a32, b32 = decode_operands(a, b)
    b_wrong = b32.reshape(b32.shape[1], b32.shape[0]).T
    return _out(_alpha(s_in, s_w) * sequential(a32, b_wrong), out)


def accumulates_in_bf16(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    """Rounds the accumulator to bfloat16 after every add."""
    a32, b32 = decode_operands(a, b)
    acc = np.zeros((a32.shape[0], b32.shape[0]), np.float32)
    for k in range(a32.shape[1]):
        acc = (acc + np.multiply.outer(a32[:, k], b32[:, k])).astype(_BF16).astype(np.float32)
    return _out(_alpha(s_in, s_w) * acc, out)


def decodes_nan_as_480(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    """0x7F (NaN) decoded as 480, the value its fields would have."""
    a32, b32 = decode_operands(a, b)
    a32[a == 0x7F] = 480.0
    b32[b == 0x7F] = 480.0
    with np.errstate(invalid="ignore", over="ignore"):
        return _out(_alpha(s_in, s_w) * sequential(a32, b32), out)


def builtin_gemm_kernel() -> MatmulKernel:
    """The restored kernel: the vllm.cpp CPU matmul."""
    return BUILTIN_MATMUL_KERNELS["vllm_cpp"]


GEMM_BUILDERS = {
    f.__name__: (lambda f=f: FunctionMatmulKernel(f.__name__, f))
    for f in (
        ignores_alpha,
        folds_weight_scale_only,
        alpha_divides,
        transposes_b,
        accumulates_in_bf16,
        decodes_nan_as_480,
    )
}


def kernels_with_epilogue(epilogue_module: Any) -> list[MatmulKernel]:
    """Every ported matmul variant, with ``apply_epilogue`` taken from ``epilogue_module``.

    Used for source-level mutants of :mod:`fp8lab.kernels.matmul_epilogue`: the ported
    accumulation stays, the (mutated) epilogue is swapped in. Every variant is
    built but the bf16-epilogue one (below), so each order of the epilogue
    (folded, two-scalar, vLLM CUTLASS either side of its swap_ab cut,
    prescaled) is reached by some kernel.
    """
    from fp8lab.kernels.matmul import MATMUL_VARIANTS, _accumulate  # the port's own loop
    from fp8lab.kernels.matmul_protocol import validate_matmul_args

    def make(kernel: Any) -> MatmulKernel:
        def run(
            a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
        ) -> np.ndarray:
            a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
            with np.errstate(invalid="ignore", over="ignore"):
                acc = _accumulate(a, b, (si, sw) if kernel.spec.epilogue == "prescaled" else None)
            result: np.ndarray = epilogue_module.apply_epilogue(acc, si, sw, out, kernel.spec)
            return result

        return FunctionMatmulKernel(kernel.name, run, kernel.spec)

    # upstream_cuda_bf16 is left out: its bf16 rounding is outside the seed's
    # f32 tolerance by design, so G3 fails it unmutated and could judge nothing.
    return [make(k) for k in MATMUL_VARIANTS.values() if not k.spec.bf16_epilogue]


def g3_runner(kernel: MatmulKernel, *, special_words: bool = True) -> GateResult:
    """G3 on a gemm mutant, at G3's defaults (``special_words`` is G1's; G3 has one population)."""
    return run_g3(kernel)
