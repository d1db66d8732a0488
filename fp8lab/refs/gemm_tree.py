"""An accumulator given as data: sum A·Bᵀ's products in a stated binary tree, float32.

The tree is the canonical form :class:`fp8lab.order.SumTree` records
(``nodes``: child ids, ``< K`` a leaf, ``K + t`` node t, root last), usually
inferred from the kernel (FPRev). Written apart from
the order package's own runner: numpy, the standard library and
:mod:`fp8lab.refs` only. Three product roundings (``PRODUCTS``):

* ``rounded``: every product ``f32(a·b)`` is formed, then each node adds its
  two children once, RNE (``fp8lab.order.tree_matmul`` does the same).
* ``fused``: an FMA chain (``acc = fmaf(a, b, acc)``, as sgemm kernels do).
  A node joining a partial sum and a leaf adds the exact product to the
  partial, one rounding; a node of two leaves starts a chain from +0: the
  smaller leaf's ``fmaf(a, b, 0)``, then the other leaf fused into it;
  a node of two partials adds them. Emulated exactly (round-to-odd in
  float64, then RNE; :func:`fp8lab.refs.gemm_accumulators.sequential_fma`).
* ``fused_high``: the same, but a node of two leaves starts from the larger
  leaf's product ``f32(a·b)`` (a multiply) and fuses the smaller one in
  (torch 2.13's CPU matmul for M = 1 does this; a canonical tree cannot say
  which child came first, so this is a separate choice).

For fp8 operands all three give the same sums (the products are exact); after
operand scaling (epilogue ``prescaled``) they differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fp8lab.refs.gemm_accumulators import _fma_round

__all__ = ["PRODUCTS", "TreeNodes", "tree_accumulate"]

PRODUCTS = ("rounded", "fused", "fused_high")
TreeNodes = tuple[tuple[int, ...], ...]
F32 = npt.NDArray[np.float32]


def _check(k: int, nodes: Sequence[Sequence[int]]) -> None:
    if k < 1 or len(nodes) != k - 1:
        raise ValueError(f"a binary tree over {k} leaves has {k - 1} nodes, got {len(nodes)}")
    seen: set[int] = set()
    for t, kids in enumerate(nodes):
        if len(kids) != 2:
            raise ValueError(f"node {t} adds {len(kids)} terms; only binary adds have an order")
        for c in kids:
            if not 0 <= c < k + t or c in seen:
                raise ValueError(f"child {c} of node {t} is out of range or used twice")
            seen.add(c)


def tree_accumulate(nodes: Sequence[Sequence[int]], a: F32, b: F32, products: str) -> F32:
    """A·Bᵀ [M,N] in float32, every output summed as ``nodes`` say.

    Args:
        nodes: the binary tree over K leaves, children before parents.
        a: A [M,K] float32.
        b: B [N,K] float32.
        products: one of :data:`PRODUCTS` (see the module docstring).

    Raises:
        ValueError: for operands that are not [M,K] and [N,K], a tree that
            is not binary over K leaves, or an unknown ``products``.
    """
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"want A [M,K] and B [N,K], got {a.shape} and {b.shape}")
    if products not in PRODUCTS:
        raise ValueError(f"products must be one of {PRODUCTS}, got {products!r}")
    k = a.shape[1]
    _check(k, nodes)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def exact(v: int) -> npt.NDArray[np.float64]:  # a float32 product is exact in float64
        out: npt.NDArray[np.float64] = a64[:, None, v] * b64[None, :, v]
        return out

    if k == 1:
        return exact(0).astype(np.float32)
    values: dict[int, F32] = {}
    for t, (x, y) in enumerate(nodes):
        left, right = sorted((x, y))
        if products == "rounded" or (left >= k and right >= k):
            lv = values.pop(left) if left >= k else exact(left).astype(np.float32)
            rv = values.pop(right) if right >= k else exact(right).astype(np.float32)
            total = np.add(lv, rv, dtype=np.float32)
        elif right < k:  # two leaves: one product rounded, the other fused into it
            if products == "fused":  # acc = +0, then fmaf twice: a -0 product starts as +0
                lx = exact(left)
                start = _fma_round(lx, np.zeros_like(lx)).astype(np.float64)
                total = _fma_round(exact(right), start)
            else:  # t = f32(a·b) for the larger leaf, then fmaf
                start = exact(right).astype(np.float32).astype(np.float64)
                total = _fma_round(exact(left), start)
        else:  # a leaf fused into a partial
            total = _fma_round(exact(left), values.pop(right).astype(np.float64))
        values[k + t] = total
    return values[2 * k - 2]
