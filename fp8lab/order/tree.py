"""Summation trees: which partial sums a kernel adds, as a canonical record.

Leaves are the summand positions 0..K-1. An internal node adds its children
(two for an ordinary float add, more for a fused multi-term add as in a tensor
core). Float addition is commutative, so a node is its set of children; a
node is named by (leaf count, smallest leaf), which no other node of the same
tree shares (an ancestor holds strictly more leaves). The canonical form lists
the internal nodes sorted by that key, each with its children sorted by
smallest leaf; id ``v < K`` is leaf v, id ``K + t`` is node t. Two trees are
the same summation iff their canonical forms are equal (FPRev, Xie et al.,
USENIX ATC '25).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SumTree", "tree_from_nested"]


@dataclass(frozen=True)
class SumTree:
    """A canonical summation tree over ``leaves`` summands.

    Attributes:
        leaves: K, the number of summands.
        nodes: the internal nodes in canonical order, each a tuple of child
            ids (``< K`` a leaf, ``K + t`` node t); the root is the last.
    """

    leaves: int
    nodes: tuple[tuple[int, ...], ...]

    @staticmethod
    def from_children(leaves: int, nodes: Sequence[Sequence[int]]) -> SumTree:
        """Canonicalise nodes given with any ids ``K + t`` in any child order.

        Raises:
            ValueError: unless the nodes form one tree over all K leaves with
                every internal node holding at least two children.
        """
        k = leaves
        if k < 1:
            raise ValueError(f"a tree needs at least one leaf, got {k}")
        parent = [-1] * (k + len(nodes))
        for t, kids in enumerate(nodes):
            if len(kids) < 2:
                raise ValueError(f"node {t} has {len(kids)} child(ren); want at least 2")
            for c in kids:
                if not 0 <= c < k + len(nodes) or parent[c] != -1 or c == k + t:
                    raise ValueError(f"child {c} of node {t} is out of range or has two parents")
                parent[c] = k + t
        roots = [v for v in range(k + len(nodes)) if parent[v] == -1]
        if len(roots) != 1:
            raise ValueError(f"want one root, found {len(roots)}")
        size = [1] * k + [0] * len(nodes)
        low = list(range(k)) + [k] * len(nodes)
        order = _postorder(k, nodes, roots[0])
        for v in order:
            if v >= k:
                kids = nodes[v - k]
                size[v] = sum(size[c] for c in kids)
                low[v] = min(low[c] for c in kids)
        internal = sorted((v for v in order if v >= k), key=lambda v: (size[v], low[v]))
        new_id = {v: k + t for t, v in enumerate(internal)}
        new_id.update({v: v for v in range(k)})
        canon = tuple(
            tuple(new_id[c] for c in sorted(nodes[v - k], key=lambda c: low[c])) for v in internal
        )
        return SumTree(k, canon)

    def sizes(self) -> list[int]:
        """Leaf count of every id (leaves first, then the nodes)."""
        size = [1] * self.leaves
        for kids in self.nodes:
            size.append(sum(size[c] for c in kids))
        return size

    def max_fan_in(self) -> int:
        """The most children any node adds at once (2 for a binary tree; 1 for K = 1)."""
        return max((len(kids) for kids in self.nodes), default=1)

    def depth(self) -> int:
        """Edges on the longest root-to-leaf path."""
        d = [0] * self.leaves
        for kids in self.nodes:
            d.append(1 + max(d[c] for c in kids))
        return d[-1]

    def to_json(self) -> dict[str, Any]:
        """``{"leaves": K, "nodes": [[child ids], ...]}``."""
        return {"leaves": self.leaves, "nodes": [list(kids) for kids in self.nodes]}

    @staticmethod
    def from_json(data: dict[str, Any]) -> SumTree:
        """Inverse of :meth:`to_json` (re-canonicalised, so checked)."""
        return SumTree.from_children(int(data["leaves"]), [list(n) for n in data["nodes"]])

    def nested(self) -> Any:
        """The tree as nested lists of leaf numbers (for drawing; deep for chains)."""
        built: list[Any] = list(range(self.leaves))
        for kids in self.nodes:
            built.append([built[c] for c in kids])
        return built[-1]

    def draw(self, max_lines: int = 40) -> str:
        """An indented drawing, one node or leaf run per line, cut after ``max_lines``."""
        k = self.leaves
        size = self.sizes()
        lines: list[str] = []
        stack: list[tuple[int, int]] = [(k + len(self.nodes) - 1 if self.nodes else 0, 0)]
        total = 0
        while stack:
            v, ind = stack.pop()
            if v < k:
                text = f"x{v}"
            else:
                kids = self.nodes[v - k]
                text = f"+{len(kids)} [{size[v]} leaves]"
                leaf_kids = [c for c in kids if c < k]
                if leaf_kids:
                    text += " " + _runs(leaf_kids)
                stack.extend((c, ind + 1) for c in reversed(kids) if c >= k)
            total += 1
            if len(lines) < max_lines:
                lines.append("  " * min(ind, 30) + text)
        if total > max_lines:
            lines.append(f"... ({total - max_lines} more lines)")
        return "\n".join(lines)


def _runs(values: list[int]) -> str:
    """``x0..x31`` style: sorted leaves as runs of consecutive numbers."""
    out: list[str] = []
    vals = sorted(values)
    start = prev = vals[0]
    for v in [*vals[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(f"x{start}" if start == prev else f"x{start}..x{prev}")
        if v is not None:
            start = prev = v
    return " ".join(out)


def _postorder(k: int, nodes: Sequence[Sequence[int]], root: int) -> list[int]:
    out: list[int] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:
        v, done = stack.pop()
        if v < k or done:
            out.append(v)
            continue
        stack.append((v, True))
        stack.extend((c, False) for c in nodes[v - k])
    return out


def tree_from_nested(leaves: int, nested: Any) -> SumTree:
    """Build from nested lists/tuples of leaf numbers (small trees, tests)."""
    nodes: list[list[int]] = []

    def walk(x: Any) -> int:
        if isinstance(x, int):
            return x
        ids = [walk(c) for c in x]
        nodes.append(ids)
        return leaves + len(nodes) - 1

    walk(nested)
    return SumTree.from_children(leaves, nodes)
