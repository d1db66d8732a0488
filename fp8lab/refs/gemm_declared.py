"""The model G3 checks a GEMM declaration against: its output bits, every choice as declared.

:func:`declared_output_bits` follows a
:class:`~fp8lab.specs.gemm_decl.GemmDeclaration` step by step, in numpy
alone (written apart from every kernel; it imports numpy, the standard
library, ``fp8lab.specs`` and the other references only):

1. decode the e4m3fn codes (:func:`fp8lab.refs.gemm_model.decode_e4m3fn`);
   scales are float32, one per tensor, per row of A or per column of the
   output as declared; ``operands`` scales the operands first,
   ``f32(a·s_a)`` and ``f32(b·s_b)``;
2. sum: a named accumulator (:data:`~fp8lab.refs.gemm_accumulators.MODELS`),
   or each class's tree (:func:`fp8lab.refs.gemm_tree.tree_accumulate`). A
   ``product``-scaled leaf is ``f32(f32(a·b·s1)·s2)`` (each multiply exact in
   float64, then rounded). With ``per-add`` rounding every add is rounded
   once to the output type: the exact sum is rounded to odd in float64, then
   to odd in float32 (both keep two bits more than the next rounding needs),
   then to the type by RNE, which is one rounding of the exact sum;
3. scale the sum: ``folded`` ``f32(f32(s_a·s_b)·acc)``; ``accumulator``
   ``f32(s2·f32(s1·acc))`` (``intermediate = exact``: ``RN(s_a·s_b·acc)``
   once, from ``s_a·s_b`` cut into its top 24 bits and the rest);
4. round the float32 result once to the declared output type, then to the
   ``out_dtype`` asked for (an f32 output of a narrower type is that value
   widened). bfloat16 by integer RNE on the float32 bits, float16 by numpy's
   float32 -> float16 conversion (RNE, with its overflow to inf).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.gemm_accumulators import MODELS, _fma_round
from fp8lab.refs.gemm_model import _bf16_bits, decode_e4m3fn
from fp8lab.refs.gemm_tree import tree_accumulate
from fp8lab.specs.gemm_decl import INFERRED, GemmDeclaration, TreeClass

__all__ = [
    "DECLARED_BITS",
    "declared_output_bits",
    "round_add",
    "round_to",
    "scale_arrays",
    "tree_rounded",
]

DECLARED_BITS: dict[str, type[np.unsignedinteger[Any]]] = {
    "f32": np.uint32,
    "bf16": np.uint16,
    "f16": np.uint16,
}
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
_T_OF = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def scale_arrays(decl: GemmDeclaration, s_a: Any, s_b: Any, m: int, n: int) -> tuple[F32, F32]:
    """``s_a`` as float32 [M,1] (or [1,1]) and ``s_b`` as [1,N] (or [1,1]), as declared.

    Raises:
        ValueError: for a scale whose shape is not the declared granularity's.
    """
    if decl.scales == "none":
        return np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)
    sa, sb = np.asarray(s_a, np.float32), np.asarray(s_b, np.float32)
    want_a = (m,) if decl.a_scale == "row" else ()
    want_b = (n,) if decl.b_scale == "column" else ()
    if sa.reshape(-1).shape != (want_a or (1,)) or sb.reshape(-1).shape != (want_b or (1,)):
        raise ValueError(
            f"scales {sa.shape} and {sb.shape}: {decl.a_scale} A scales and {decl.b_scale} "
            f"B scales of a {m}x{n} product want {want_a or 'one'} and {want_b or 'one'}"
        )
    return sa.reshape(-1, 1) if want_a else sa.reshape(1, 1), sb.reshape(1, -1)


def _times(x: Any, y: Any) -> F32:
    """``f32(x·y)`` for float32 x, y (broadcast): exact float64 product, one rounding."""
    out: F32 = (np.asarray(x, np.float64) * np.asarray(y, np.float64)).astype(np.float32)
    return out


def _to_odd_f32(x: F64, err: F64) -> F32:
    """``x + err`` (``err`` the float64 sum's error) rounded to odd in float64, then float32."""
    bits = x.view(np.int64)
    bump = (err != 0) & ((bits & 1) == 0) & np.isfinite(x)
    odd = np.where(bump, np.nextafter(x, np.where(err > 0, np.inf, -np.inf)), x)
    f = odd.astype(np.float32)
    back = f.astype(np.float64)
    inexact = (back != odd) & np.isfinite(odd) & ((f.view(np.uint32) & 1) == 0)
    toward = np.where(odd > back, np.float32(np.inf), np.float32(-np.inf))
    out: F32 = np.where(inexact, np.nextafter(f, toward), f).astype(np.float32)
    return out


def round_to(y: F32, output: str) -> F32:
    """float32 values rounded once (RNE) to ``output``, as float32 values."""
    if output == "float32":
        return y
    if output == "float16":
        with np.errstate(over="ignore"):
            return y.astype(np.float16).astype(np.float32)
    bits = _bf16_bits(np.ascontiguousarray(y, np.float32).view(np.uint32))
    out: F32 = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return out


def round_add(x: Any, y: Any, output: str) -> F32:
    """``x + y`` (float32 values) rounded once to ``output``, as float32 values."""
    x64, y64 = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if output == "float32":
        return _fma_round(x64, y64)
    s = x64 + y64
    with np.errstate(invalid="ignore"):
        yv = s - x64
        err = (x64 - (s - yv)) + (y64 - yv)  # TwoSum: s + err == x + y exactly
    err = np.where(np.isfinite(s), err, 0.0)
    return round_to(_to_odd_f32(s, err), output)


def _leaves(
    decl: GemmDeclaration, a: F32, b: F32, sa: F32, sb: F32, swapped: bool
) -> Callable[[int], F32]:
    """Leaf k of every output: the exact product, or the product-scaled one, as float32."""
    first, second = (sa, sb) if decl.scale_order == "a-first" else (sb, sa)
    if swapped:
        first, second = second, first
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def leaf(k: int) -> F32:
        p = np.multiply.outer(a64[:, k], b64[:, k])  # exact: two float32 values
        if decl.scales == "product":
            return _times(second, _times(first, p.astype(np.float32)))
        out: F32 = p.astype(np.float32)
        return out

    return leaf


def _sequential_sum(leaf: Callable[[int], F32], k: int, shape: tuple[int, int], output: str) -> F32:
    acc = np.zeros(shape, np.float32)  # from +0, as every named model
    for v in range(k):
        acc = round_add(acc, leaf(v), output)
    return acc


def _tree_sum(leaf: Callable[[int], F32], nodes: Any, k: int, output: str) -> F32:
    if k == 1:
        return leaf(0)
    values: dict[int, F32] = {}
    for t, (x, y) in enumerate(nodes):
        left = values.pop(x) if x >= k else leaf(x)
        right = values.pop(y) if y >= k else leaf(y)
        values[k + t] = round_add(left, right, output)
    return values[2 * k - 2]


def tree_rounded(nodes: Any, a: F32, b: F32, output: str) -> F32:
    """A·Bᵀ summed as the binary tree ``nodes`` says, every add rounded once to ``output``."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def leaf(k: int) -> F32:
        out: F32 = np.multiply.outer(a64[:, k], b64[:, k]).astype(np.float32)
        return out

    with np.errstate(over="ignore", invalid="ignore"):
        return _tree_sum(leaf, nodes, a.shape[1], output)


def _class_sum(decl: GemmDeclaration, cls: TreeClass, a: F32, b: F32, sa: F32, sb: F32) -> F32:
    """The whole [M,N] sum as ``cls``'s tree says (its outputs are picked by the caller)."""
    products = cls.products or decl.products
    leafwise = decl.scales == "product" or decl.output_rounding == "per-add"
    if not leafwise:
        kind = "rounded" if products == "exact" else products
        return tree_accumulate(cls.nodes, a, b, kind)
    add_to = decl.output if decl.output_rounding == "per-add" else "float32"
    swapped = _swapped(decl, a.shape[0])
    return _tree_sum(_leaves(decl, a, b, sa, sb, swapped), cls.nodes, a.shape[1], add_to)


def _swapped(decl: GemmDeclaration, m: int) -> bool:
    return decl.swap_max_m is not None and m <= decl.swap_max_m


def _accumulate(decl: GemmDeclaration, a: F32, b: F32, sa: F32, sb: F32) -> F32:
    m, k = a.shape
    n = b.shape[0]
    if decl.accumulation == INFERRED:
        classes = [c for c in decl.classes if c.shape == (m, n, k)]
        if not classes:
            have = list(decl.shapes)
            raise ValueError(
                f"accumulation inferred: no tree for (M, N, K) = {(m, n, k)}; have {have}"
            )
        out = np.empty((m, n), np.float32)
        for cls in classes:
            total = _class_sum(decl, cls, a, b, sa, sb)
            for r, c in cls.positions():
                out[r, c] = total[r, c]
        return out
    if decl.accumulation not in MODELS:
        raise ValueError(f"gemm {decl.name}: unknown accumulation {decl.accumulation!r}")
    if decl.scales != "product" and decl.output_rounding == "once":
        return MODELS[decl.accumulation](a, b)
    if decl.accumulation != "sequential":
        raise ValueError(
            f"gemm {decl.name}: {decl.scales} scales with {decl.output_rounding} rounding run"
            f" on sequential or inferred trees, not {decl.accumulation}"
        )
    add_to = decl.output if decl.output_rounding == "per-add" else "float32"
    leaf = _leaves(decl, a, b, sa, sb, _swapped(decl, m))
    return _sequential_sum(leaf, k, (m, n), add_to)


def _scaled_once(acc: F32, sa: F32, sb: F32) -> F32:
    """``RN_f32(s_a·s_b·acc)`` once: s_a·s_b (exact in float64) cut into 24 + 24 bits."""
    alpha = sa.astype(np.float64) * sb.astype(np.float64)
    frac, exp = np.frexp(alpha)
    head = np.ldexp(np.trunc(np.ldexp(frac, 24)), exp - 24)
    tail = alpha - head
    acc64 = acc.astype(np.float64)
    once = _fma_round(acc64 * head, acc64 * tail)
    out: F32 = np.where(np.isfinite(acc64), once, (acc64 * alpha).astype(np.float32))
    return out


def _epilogue(decl: GemmDeclaration, acc: F32, sa: F32, sb: F32) -> F32:
    if decl.scales in ("product", "operands", "none"):
        return acc
    if decl.intermediate == "exact":
        return _scaled_once(acc, sa, sb)
    if decl.scales == "folded":
        return _times(_times(sa, sb), acc)
    first, second = (sa, sb) if decl.scale_order == "a-first" else (sb, sa)
    if _swapped(decl, acc.shape[0]):
        first, second = second, first
    return _times(second, _times(first, acc))


def _out_bits(y: F32, output: str, out_dtype: str) -> np.ndarray:
    rounded = round_to(y, output)
    if out_dtype == "f32":
        return rounded.view(np.uint32)
    if out_dtype == "f16":
        with np.errstate(over="ignore"):
            return rounded.astype(np.float16).view(np.uint16)
    return _bf16_bits(np.ascontiguousarray(rounded).view(np.uint32))


def declared_output_bits(
    a_codes: np.ndarray,
    b_codes: np.ndarray,
    s_a: Any,
    s_b: Any,
    out_dtype: str,
    decl: GemmDeclaration,
) -> np.ndarray:
    """The declared GEMM's [M,N] output as bits: uint32 for f32, uint16 for bf16 and f16.

    Args:
        a_codes: A [M,K] uint8 e4m3fn codes.
        b_codes: B [N,K] uint8 e4m3fn codes (the product is A·Bᵀ).
        s_a: A's scale(s): one float32, or one per row of A (``a_scale = row``).
        s_b: B's scale(s): one, or one per column of the output (``b_scale = column``).
        out_dtype: ``f32``, ``bf16`` or ``f16``.
        decl: the declaration.

    Raises:
        ValueError: for an unknown out_dtype, operands that are not [M,K] and
            [N,K] codes, scales of the wrong granularity, or a shape or
            accumulation the declaration has no model for.
    """
    if out_dtype not in DECLARED_BITS:
        raise ValueError(f"out_dtype {out_dtype!r}: one of {tuple(DECLARED_BITS)}")
    a, b = decode_e4m3fn(a_codes), decode_e4m3fn(b_codes)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"want A [M,K] and B [N,K] codes, got {a.shape} and {b.shape}")
    m, n = a.shape[0], b.shape[0]
    sa, sb = scale_arrays(decl, s_a, s_b, m, n)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        if decl.scales == "operands":
            a, b = _times(sa, a), _times(sb.reshape(-1, 1), b)
        acc = _accumulate(decl, a, b, sa, sb)
        y = np.ascontiguousarray(_epilogue(decl, acc, sa, sb), np.float32)
        return _out_bits(y, decl.output, out_dtype)


def declared_model(decl: GemmDeclaration) -> Callable[..., np.ndarray]:
    """``declared_output_bits`` with ``decl`` bound."""
    return partial(declared_output_bits, decl=decl)
