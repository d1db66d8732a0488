"""The matmul kernel under test: a protocol, a wrapper for a callable, validation.

A matmul kernel takes A [M,K] and B [N,K] e4m3fn codes (K contiguous, the
product is A·Bᵀ), the float32 scales ``s_in`` and ``s_w``, and ``out_dtype``
("f32" or "bf16"); it folds the scales itself and returns [M,N] float32 or
bfloat16 (MatmulFp8). NaN codes (0x7F, 0xFF) are not refused:
they decode to NaN and propagate through IEEE arithmetic, so every output
whose row or column holds one is NaN (vllm.cpp decodes then sums).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = [
    "K_MULTIPLE",
    "OUT_DTYPES",
    "FunctionMatmulKernel",
    "MatmulFn",
    "MatmulKernel",
    "MatmulSpec",
    "OutDtype",
    "VLLM_CPP_SPEC",
    "validate_matmul_args",
]

OutDtype = Literal["f32", "bf16"]
OUT_DTYPES: tuple[OutDtype, ...] = ("f32", "bf16")
K_MULTIPLE = 16
MatmulFn = Callable[[np.ndarray, np.ndarray, Any, Any, str], np.ndarray]


@dataclass(frozen=True)
class MatmulSpec:
    """What a kernel claims to compute, so a gate can pick the matching model.

    Args:
        accumulation: accumulator model name (see ``fp8lab.kernels.matmul_models.MODELS``).
        epilogue: ``"folded"`` (``alpha * acc``, alpha = f32(s_in*s_w)) or
            ``"two_scalar"`` (``s_in * f32(s_w * acc)``, upstream vLLM),
            ``"two_scalar_swapped"`` (``s_w * f32(s_in * acc)``),
            ``"vllm_cutlass"`` (swapped for M <= 64, else two_scalar) or
            ``"prescaled"`` (operands scaled before the product, no epilogue).
        bf16_epilogue: the epilogue rounds to bfloat16 even for an f32 output,
            which is then the bfloat16 value widened (the CUDA variant).
        trees: for ``accumulation="inferred"``: ((M, N, K), nodes, products)
            per shape: the binary summation tree (``SumTree.nodes``) and how
            its products are rounded (``rounded``, ``fused``, ``fused_high``;
            :mod:`fp8lab.refs.gemm_tree`), usually from
            :func:`fp8lab.order.inferred_spec`.
        intermediate: the epilogue's intermediate rounding: ``"f32"`` (alpha,
            or the first scale multiply, rounded to float32) or ``"exact"``
            (``RN(s_in·s_w·acc)`` rounded once; not with ``prescaled``).
        swap_max_m: ``vllm_cutlass`` swaps A and B (so the scale order) for
            M <= this (vLLM's SM90 dispatch: 64).
    """

    accumulation: str = "sequential"
    epilogue: str = "folded"
    bf16_epilogue: bool = False
    trees: tuple[tuple[tuple[int, int, int], tuple[tuple[int, ...], ...], str], ...] = field(
        default=(), repr=False
    )
    intermediate: str = "f32"
    swap_max_m: int = 64  # vLLM scaled_mm_sm90_fp8_dispatch: swap_ab for M <= 64


VLLM_CPP_SPEC = MatmulSpec()


@runtime_checkable
class MatmulKernel(Protocol):
    """An FP8 matmul kernel under test (MatmulFp8)."""

    @property
    def name(self) -> str:
        """Short id used in records."""
        ...

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """``epilogue(A·Bᵀ)`` as [M,N] float32 or bfloat16."""
        ...


@dataclass(frozen=True)
class FunctionMatmulKernel:
    """Wrap ``func(a_codes, b_codes, s_in, s_w, out_dtype)`` as a matmul kernel.

    A wrapped callable claims the vllm.cpp contract (:data:`VLLM_CPP_SPEC`).
    """

    name: str
    func: MatmulFn
    spec: MatmulSpec = VLLM_CPP_SPEC

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """Call the wrapped function."""
        return self.func(a_codes, b_codes, s_in, s_w, out_dtype)


def _scale(value: Any, label: str) -> np.float32:
    if isinstance(value, bool | np.bool_) or np.ndim(value) != 0:
        raise ValueError(f"{label} must be one real number, got {value!r}")
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{label} must be a real number, got {value!r}")
    with np.errstate(over="ignore"):
        s = np.float32(arr)
    if not np.isfinite(s) or s <= 0:
        raise ValueError(f"{label} {value!r} must be finite and positive in float32")
    return s


def validate_matmul_args(
    a_codes: Any, b_codes: Any, s_in: Any, s_w: Any, out_dtype: Any
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], np.float32, np.float32, OutDtype]:
    """Check the MatmulFp8 contract and return the arguments typed.

    Raises:
        ValueError: naming the broken rule: ranks, dtypes, matching K, K and N
            multiples of 16 (and nonzero), finite positive scales, out_dtype.
    """
    for label, arr in (("a_codes", a_codes), ("b_codes", b_codes)):
        if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8:
            kind = getattr(arr, "dtype", type(arr).__name__)
            raise ValueError(f"{label} must be a uint8 numpy array of e4m3fn codes, got {kind}")
        if arr.ndim != 2:
            raise ValueError(f"{label} must have rank 2, got shape {arr.shape}")
    (m, k), (n, kb) = a_codes.shape, b_codes.shape
    if k != kb:
        raise ValueError(f"K differs: a_codes is [{m},{k}], b_codes is [{n},{kb}] (want [N,K])")
    if m == 0 or k == 0 or n == 0:
        raise ValueError(f"empty operand: M={m}, N={n}, K={k}")
    if k % K_MULTIPLE or n % K_MULTIPLE:
        raise ValueError(f"K={k} and N={n} must be multiples of {K_MULTIPLE}")
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"out_dtype must be one of {OUT_DTYPES}, got {out_dtype!r}")
    return a_codes, b_codes, _scale(s_in, "s_in"), _scale(s_w, "s_w"), out_dtype
