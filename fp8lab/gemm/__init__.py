"""FP8 GEMM: matmul kernels under test, exact references, accumulator models.

fp8-facts §3 (MatmulFp8) and §6 (GEMM accumulation facts).

The numba-compiled names (the ported kernels, the accumulator models and the
matmul model) load on first use, so importing ``fp8lab.gemm.protocol`` (as the
CUDA arm's GPU path does) needs only numpy and ml_dtypes.
"""

import importlib
from typing import TYPE_CHECKING, Any

from fp8lab.gemm.bounds import gamma, tight_bound
from fp8lab.gemm.epilogue import apply_epilogue, folded_alpha
from fp8lab.gemm.population import LARGE_CASES, LARGER_CASES, SEED_CASES, G3Case, g3_operands
from fp8lab.gemm.protocol import (
    OUT_DTYPES,
    VLLM_CPP_SPEC,
    FunctionMatmulKernel,
    MatmulKernel,
    MatmulSpec,
    validate_matmul_args,
)
from fp8lab.gemm.reference import (
    EXACT_F64_MAX_K,
    SeedReference,
    exact_acc,
    exact_acc_units,
    seed_reference,
)
from fp8lab.gemm.ulp import bits_differ, ulp_distance

if TYPE_CHECKING:
    from fp8lab.gemm.kernels import (
        BUILTIN_MATMUL_KERNELS,
        MATMUL_VARIANTS,
        PortedMatmulKernel,
        matmul_upstream,
        matmul_vllm_cpp,
    )
    from fp8lab.gemm.matmul_model import decode_operands, model_matmul
    from fp8lab.gemm.models import (
        MODELS,
        fast_accum,
        pairwise,
        sequential,
        sequential_fma,
        split_k,
    )

_LAZY = {
    "fp8lab.gemm.kernels": (
        "BUILTIN_MATMUL_KERNELS",
        "MATMUL_VARIANTS",
        "PortedMatmulKernel",
        "matmul_upstream",
        "matmul_vllm_cpp",
    ),
    "fp8lab.gemm.matmul_model": ("decode_operands", "model_matmul"),
    "fp8lab.gemm.models": (
        "MODELS",
        "fast_accum",
        "pairwise",
        "sequential",
        "sequential_fma",
        "split_k",
    ),
}
_LAZY_NAMES = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    """Load a numba-compiled name on first use (PEP 562)."""
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'fp8lab.gemm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN_MATMUL_KERNELS",
    "EXACT_F64_MAX_K",
    "LARGER_CASES",
    "LARGE_CASES",
    "MATMUL_VARIANTS",
    "MODELS",
    "OUT_DTYPES",
    "SEED_CASES",
    "VLLM_CPP_SPEC",
    "FunctionMatmulKernel",
    "G3Case",
    "MatmulKernel",
    "MatmulSpec",
    "PortedMatmulKernel",
    "SeedReference",
    "apply_epilogue",
    "bits_differ",
    "decode_operands",
    "exact_acc",
    "exact_acc_units",
    "fast_accum",
    "folded_alpha",
    "g3_operands",
    "gamma",
    "matmul_upstream",
    "matmul_vllm_cpp",
    "model_matmul",
    "pairwise",
    "seed_reference",
    "sequential",
    "sequential_fma",
    "split_k",
    "tight_bound",
    "ulp_distance",
    "validate_matmul_args",
]
