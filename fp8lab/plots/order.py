"""Summation trees drawn: leaves along x in summand order, each add at the height of its depth."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from fp8lab.order.tree import SumTree

__all__ = ["plot_sum_trees", "tree_layout"]


def tree_layout(tree: SumTree) -> tuple[list[float], list[int]]:
    """Where each id sits: leaf v at (v, 0); a node at its children's mean x, one above."""
    x = [float(v) for v in range(tree.leaves)]
    height = [0] * tree.leaves
    for kids in tree.nodes:
        x.append(sum(x[c] for c in kids) / len(kids))
        height.append(1 + max(height[c] for c in kids))
    return x, height


def plot_sum_trees(trees: Mapping[str, SumTree], columns: int = 2) -> Figure:
    """One panel per tree: each node joined to its children by elbows; fused adds in red.

    A sequential chain climbs one step per summand; a pairwise tree is log2 K high;
    an n-way fused add (a node of more than two children) is drawn in red.
    """
    rows = max(1, -(-len(trees) // columns))
    fig = Figure(figsize=(4.2 * columns, 2.8 * rows), layout="constrained")
    for i, (title, tree) in enumerate(trees.items()):
        ax = fig.add_subplot(rows, columns, i + 1)
        x, height = tree_layout(tree)
        binary: list[list[tuple[float, float]]] = []
        fused: list[list[tuple[float, float]]] = []
        for t, kids in enumerate(tree.nodes):
            v = tree.leaves + t
            segs = binary if len(kids) == 2 else fused
            lo, hi = min(x[c] for c in kids), max(x[c] for c in kids)
            segs.append([(lo, height[v]), (hi, height[v])])
            segs.extend([(x[c], height[c]), (x[c], height[v])] for c in kids)
        ax.add_collection(LineCollection(binary, colors="k", linewidths=0.6))
        ax.add_collection(LineCollection(fused, colors="tab:red", linewidths=0.6))
        ax.set_xlim(-1, tree.leaves)
        ax.set_ylim(-0.5, max(height) + 0.5)
        ax.set_xlabel("summand")
        ax.set_ylabel("depth of the add")
        ax.set_title(f"{title} (K={tree.leaves})", fontsize=8)
    return fig
