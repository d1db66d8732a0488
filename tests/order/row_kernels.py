"""Planted f32 matmuls whose order depends on the output row, importable by ``fp8lab order``."""

from __future__ import annotations

import numpy as np

from fp8lab.order import SumTree, pairwise_tree, sequential_tree
from fp8lab.order.run import tree_matmul


def reversed_tree(k: int) -> SumTree:
    """((x[k-1] + x[k-2]) + x[k-3]) + ...: a sequential chain from the last summand."""
    nodes = [[k - 1, k - 2]] + [[k + t, k - 3 - t] for t in range(k - 2)]
    return SumTree.from_children(k, nodes)


def row_tree(row: int, k: int) -> SumTree:
    """Rows 0-5 sequential, rows 6-11 pairwise, the rest reversed."""
    if row < 6:
        return sequential_tree(k)
    return pairwise_tree(k) if row < 12 else reversed_tree(k)


def three_tiles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A·Bᵀ in float32, each row summed in :func:`row_tree`'s order."""
    k = a.shape[1]
    return np.concatenate([tree_matmul(row_tree(r, k), a[r : r + 1], b) for r in range(len(a))])


def by_sign(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sequential, except reversed when A's first element is negative: no fixed order."""
    k = a.shape[1]
    tree = reversed_tree(k) if a[0, 0] < 0 else sequential_tree(k)
    return tree_matmul(tree, a, b)
