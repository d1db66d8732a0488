"""The whole-kernel model G3 checks against: decode, accumulate, epilogue, as output bits.

What a kernel claiming an accumulation model and an epilogue must return,
bit for bit (MatmulFp8). Written apart from every kernel under
test, epilogue and operand decode included; it imports numpy, the standard
library and ``fp8lab.specs`` only, and takes a different route to the same
roundings:

* decode: each e4m3fn code's exact value from the format's fields
  (``FormatSpec.exact_value``); 0x7F and 0xFF are NaN, 0x80 is -0.
* epilogue: a product of two float32 values is exact in float64 (24 + 24
  bits, no overflow or underflow there), and one float64 -> float32 cast
  rounds it once (RNE), which is IEEE float32 multiplication.
  ``folded``: ``alpha = f32(s_in·s_w)``, ``out = f32(alpha·acc)``;
  ``two_scalar``: ``out = f32(s_in·f32(s_w·acc))``;
  ``two_scalar_swapped``: ``out = f32(s_w·f32(s_in·acc))``;
  ``vllm_cutlass``: vLLM's SM90 CUTLASS fp8 epilogue ``RN(s_a·RN_f32(s_b·acc))``
  (``scaled_mm_epilogues_c3x.hpp``), which swaps A and B for M <= 64 and
  then passes (b_scales, a_scales) (``scaled_mm_sm90_fp8_dispatch.cuh``): the
  swapped order for M <= 64, ``two_scalar`` above (vLLM's SM90 dispatch;
  read from the source, not run on a GPU).
  ``intermediate``: ``f32`` rounds each step as above (alpha, or the first
  scale multiply: RN32 in ``RN_out(s_a·RN32(s_b·acc))``); ``exact`` keeps
  it exact, so every order gives ``RN_f32(s_in·s_w·acc)`` rounded once:
  ``s_in·s_w`` is exact in float64 (48 bits) and is cut into its top 24
  bits and the rest, each product with ``acc`` is exact, and their sum is
  rounded once (round-to-odd in float64, then RNE). ``swap_max_m`` is
  vllm_cutlass's cut (swapped for M <= it; default 64).
  ``prescaled``: the operands are scaled first, ``A' = f32(A·s_in)``,
  ``B' = f32(B·s_w)``, then multiplied and summed by the accumulation model,
  with no epilogue (how torch's CPU ``_scaled_mm`` is reproduced;
  its products are no longer exact).
* accumulation ``inferred``: the sum follows the binary tree and product
  rounding stated for the case's (M, N, K) in ``trees`` (usually inferred
  from the kernel, FPRev): :func:`fp8lab.refs.gemm_tree.tree_accumulate`.
* bfloat16: the float32 bits rounded to their top 16 by integer RNE
  (add 0x7FFF plus the kept lsb, shift); a NaN becomes the quiet NaN
  0x7FC0 with its sign. ``bf16_epilogue``: an f32 output is that bfloat16
  value widened (its bits shifted back up).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache, partial
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.gemm_accumulators import MODELS, _fma_round
from fp8lab.refs.gemm_tree import PRODUCTS, TreeNodes, tree_accumulate
from fp8lab.specs.formats import FORMATS

__all__ = [
    "ACC_EPILOGUES",
    "EPILOGUES",
    "INFERRED",
    "INTERMEDIATES",
    "OUTPUT_BITS",
    "VLLM_SWAP_AB_MAX_M",
    "decode_e4m3fn",
    "model_output_bits",
]

ACC_EPILOGUES = ("folded", "two_scalar", "two_scalar_swapped", "vllm_cutlass")  # scale acc
EPILOGUES = (*ACC_EPILOGUES, "prescaled")
VLLM_SWAP_AB_MAX_M = 64
INTERMEDIATES = ("f32", "exact")  # the epilogue's intermediate rounding
INFERRED = "inferred"  # accumulation by a stated tree per (M, N, K)
OUTPUT_BITS: dict[str, type[np.unsignedinteger[Any]]] = {"f32": np.uint32, "bf16": np.uint16}
_FMT = FORMATS["e4m3fn"]


@cache
def _values() -> npt.NDArray[np.float32]:
    table = np.empty(1 << _FMT.bits, np.float32)
    for code in range(1 << _FMT.bits):
        if _FMT.is_nan_code(code):
            table[code] = np.nan
        else:  # exact: 4 significant bits, exponents -9..8
            sign = -1.0 if code & _FMT.sign_bit else 1.0
            table[code] = math.copysign(float(abs(_FMT.exact_value(code))), sign)
    table.setflags(write=False)
    return table


def decode_e4m3fn(codes: np.ndarray) -> npt.NDArray[np.float32]:
    """float32 values of uint8 e4m3fn codes (NaN codes give NaN).

    Raises:
        ValueError: for an array that is not uint8.
    """
    codes = np.asarray(codes)
    if codes.dtype != np.uint8:
        raise ValueError(f"want uint8 e4m3fn codes, got {codes.dtype}")
    out: npt.NDArray[np.float32] = _values()[codes]
    return out


def _times(x: np.ndarray | np.float32, y: np.ndarray | np.float32) -> Any:
    """``f32(x·y)`` for float32 x, y: exact float64 product, one rounding."""
    return (np.float64(x) * np.asarray(y, np.float64)).astype(np.float32)


def _scaled_once(acc: np.ndarray, s_in: np.float32, s_w: np.float32) -> Any:
    """``RN_f32(s_in·s_w·acc)``, one rounding (see the module docstring)."""
    alpha = np.float64(s_in) * np.float64(s_w)  # exact: 24 + 24 bits
    frac, exp = math.frexp(float(alpha))
    head = np.float64(math.ldexp(math.trunc(math.ldexp(frac, 24)), exp - 24))  # top 24 bits
    tail = alpha - head  # exact: the other 24 bits
    acc64 = np.asarray(acc, np.float64)
    once = _fma_round(acc64 * head, acc64 * tail)  # both products exact
    direct = (acc64 * alpha).astype(np.float32)  # inf and NaN accumulators
    return np.where(np.isfinite(acc64), once, direct)


def _epilogue_f32(
    acc: np.ndarray,
    s_in: np.float32,
    s_w: np.float32,
    epilogue: str,
    intermediate: str = "f32",
    swap_max_m: int = VLLM_SWAP_AB_MAX_M,
) -> Any:
    if intermediate == "exact":
        return _scaled_once(acc, s_in, s_w)
    if epilogue == "folded":
        alpha = np.float32(_times(s_in, s_w))
        return _times(alpha, acc)
    swapped = epilogue == "two_scalar_swapped" or (
        epilogue == "vllm_cutlass" and acc.shape[0] <= swap_max_m
    )
    first, second = (s_w, s_in) if swapped else (s_in, s_w)
    return _times(first, _times(second, acc))


def _accumulator(
    name: str,
    shape: tuple[int, int, int],
    trees: Mapping[tuple[int, int, int], tuple[TreeNodes, str]] | None,
) -> Callable[[Any, Any], Any]:
    if name != INFERRED:
        return MODELS[name]
    entry = (trees or {}).get(shape)
    if entry is None:
        have = sorted(trees or {})
        raise ValueError(f"accumulation inferred: no tree for (M, N, K) = {shape}; have {have}")
    nodes, products = entry
    if products not in PRODUCTS:
        raise ValueError(f"products {products!r} for {shape}: want one of {PRODUCTS}")
    return partial(tree_accumulate, nodes, products=products)


def _bf16_bits(f32_bits: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint16]:
    u = f32_bits.astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    quiet = ((u >> 16) & 0x8000) | 0x7FC0
    out: npt.NDArray[np.uint16] = np.where(nan, quiet, rounded).astype(np.uint16)
    return out


def model_output_bits(
    a_codes: np.ndarray,
    b_codes: np.ndarray,
    s_in: Any,
    s_w: Any,
    out_dtype: str,
    *,
    accumulation: str = "sequential",
    epilogue: str = "folded",
    bf16_epilogue: bool = False,
    trees: Mapping[tuple[int, int, int], tuple[TreeNodes, str]] | None = None,
    intermediate: str = "f32",
    swap_max_m: int = VLLM_SWAP_AB_MAX_M,
) -> np.ndarray:
    """The model's [M,N] output as bits: uint32 for "f32", uint16 for "bf16".

    Args:
        a_codes: A [M,K] uint8 e4m3fn codes.
        b_codes: B [N,K] uint8 e4m3fn codes (the product is A·Bᵀ).
        s_in: input scale, taken as float32.
        s_w: weight scale, taken as float32.
        out_dtype: "f32" or "bf16".
        accumulation: a name in :data:`~fp8lab.refs.gemm_accumulators.MODELS`.
        epilogue: a name in :data:`EPILOGUES`.
        bf16_epilogue: round to bfloat16 even for an f32 output.
        trees: for ``accumulation="inferred"``, (nodes, products) per (M, N, K).
        intermediate: one of :data:`INTERMEDIATES` (``f32`` for ``prescaled``).
        swap_max_m: ``vllm_cutlass`` swaps the scales for M <= this.

    Raises:
        ValueError: for an unknown accumulation, epilogue, out_dtype,
            products or intermediate, no tree for this shape, or operands
            that are not [M,K] and [N,K] uint8 codes.
    """
    if accumulation not in MODELS and accumulation != INFERRED:
        raise ValueError(f"unknown accumulation {accumulation!r}; have {sorted(MODELS)}")
    if epilogue not in EPILOGUES or out_dtype not in OUTPUT_BITS:
        raise ValueError(f"want epilogue in {EPILOGUES} and out_dtype in {tuple(OUTPUT_BITS)}")
    if intermediate not in INTERMEDIATES or (intermediate != "f32" and epilogue == "prescaled"):
        raise ValueError(f"intermediate {intermediate!r}: want {INTERMEDIATES}, f32 if prescaled")
    a, b = decode_e4m3fn(a_codes), decode_e4m3fn(b_codes)
    si, sw = np.float32(s_in), np.float32(s_w)
    accumulate = _accumulator(accumulation, (a.shape[0], b.shape[0], a.shape[1]), trees)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        if epilogue == "prescaled":
            y = accumulate(_times(si, a), _times(sw, b))
        else:
            y = _epilogue_f32(accumulate(a, b), si, sw, epilogue, intermediate, swap_max_m)
        y = np.ascontiguousarray(y)
    bits = y.astype(np.float32).view(np.uint32)
    if out_dtype == "bf16":
        return _bf16_bits(bits)
    if bf16_epilogue:
        widened: npt.NDArray[np.uint32] = _bf16_bits(bits).astype(np.uint32) << np.uint32(16)
        return widened
    return bits
