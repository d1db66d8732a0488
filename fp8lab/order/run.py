"""Run an inferred summation tree as an accumulator model, so it can be checked bit for bit.

Each output's products a[i,k]·b[j,k] are formed in float32 (exact for fp8
operands) and added as the tree says, one float32 rounding
(RNE) per binary node. A fused node (more than two children) has no float32
meaning by itself, so a tree holding one is refused.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.order.tree import SumTree

__all__ = ["tree_matmul"]

F32 = npt.NDArray[np.float32]


def tree_matmul(tree: SumTree, a: F32, b: F32) -> F32:
    """A·Bᵀ [M,N] in float32, every output summed in ``tree``'s order.

    Raises:
        ValueError: unless A is [M,K] and B is [N,K] with K = the tree's
            leaves, or if the tree has a node of more than two children.
    """
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    k = tree.leaves
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != k or b.shape[1] != k:
        raise ValueError(f"want A [M,{k}] and B [N,{k}], got {a.shape} and {b.shape}")
    if tree.max_fan_in() > 2:
        raise ValueError("a fused node (more than two children) has no float32 order")
    with np.errstate(over="ignore", invalid="ignore"):
        prod = (a[:, None, :] * b[None, :, :]).astype(np.float32)
        values: list[F32] = [prod[..., v] for v in range(k)]
        for left, right in tree.nodes:
            values.append(np.add(values[left], values[right], dtype=np.float32))
    return values[-1].copy()
