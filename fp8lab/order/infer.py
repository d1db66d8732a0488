"""Infer a kernel's summation tree from FPRev probes (basic and recursive).

* ``basic``: L(i, j) for all K(K-1)/2 pairs, then nodes formed in increasing
  L: the components joined by the pairs of one L value form one node, whose
  leaf count must be that L (FPRev's ``basic_fprev``).
* ``recursive``: for a subtree's smallest leaf i0, L(i0, j) for the other
  leaves j groups them by the ancestor of i0 that joins them (one group per
  ancestor, sorted by L). Each group is the union of that ancestor's other
  children; a group is split by probing from its smallest leaf, where leaves
  of another child answer the ancestor's L. K-1 probes for a sequential
  chain, about (K/2)·log2 K for a balanced tree (FPRev's ``fprev``;
  FPRev). A group of three or more whose first two leaves
  lie in different children (a node of fan-in above 2) first asks the
  sibling test (:mod:`fp8lab.order.siblings`), for every such group of
  a path in one batch: when it shows every leaf of a group is its own
  child, the group costs 1 pair probe and 3 outputs instead of n(n-1)/2
  pair probes; otherwise pair probes split it. So n-way fused adds cost
  about K + 4·K/n outputs, not (n/2)·K.

Every count is checked against the tree built from it; counts that fit no
tree raise :class:`~fp8lab.order.probe.ProbeError`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

from fp8lab.order.families import name_family
from fp8lab.order.host import host_facts
from fp8lab.order.probe import LcaProbe, ProbeError
from fp8lab.order.siblings import SiblingTest
from fp8lab.order.tree import SumTree

__all__ = ["METHODS", "OrderRecord", "build_tree", "infer_order", "infer_tree"]

METHODS = ("recursive", "basic")


@dataclass(frozen=True)
class OrderRecord:
    """What was inferred, how, and at what cost (JSON via :meth:`to_json`).

    Attributes:
        kernel: the kernel's name.
        probe: ``sum``, ``f32_matmul`` or ``fp8_matmul``.
        k: summands per output.
        shape: (M, N) of the probed matmul, (1, 1) for a sum.
        position: the output read (row, column).
        method: ``recursive`` or ``basic``.
        tree: the canonical summation tree.
        family: the known family's name, or None for "no known family".
        calls: kernel calls made (pair probes and sibling tests).
        queries: outputs read (more than calls when a probe batches); the
            sibling test's outputs included.
        seconds: wall time of the inference (probing and building).
        sibling_rows: outputs read by the sibling test (0 when unused).
        sibling_nodes: fused nodes whose children it settled.
        host: the host facts in force (a library's order depends on them).
    """

    kernel: str
    probe: str
    k: int
    shape: tuple[int, int]
    position: tuple[int, int]
    method: str
    tree: SumTree
    family: str | None
    calls: int
    queries: int
    seconds: float
    sibling_rows: int = 0
    sibling_nodes: int = 0
    host: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; ``family`` is null for no known family."""
        return {
            "kernel": self.kernel,
            "probe": self.probe,
            "k": self.k,
            "shape": list(self.shape),
            "position": list(self.position),
            "method": self.method,
            "family": self.family,
            "calls": self.calls,
            "queries": self.queries,
            "seconds": self.seconds,
            "sibling_rows": self.sibling_rows,
            "sibling_nodes": self.sibling_nodes,
            "max_fan_in": self.tree.max_fan_in(),
            "depth": self.tree.depth(),
            "tree": self.tree.to_json(),
            "host": self.host,
        }


class _Builder:
    def __init__(self, probe: LcaProbe, siblings: bool) -> None:
        self.probe = probe
        self.k = probe.k
        self.nodes: list[list[int]] = []
        self.size: list[int] = [1] * probe.k
        self.known: dict[tuple[int, int], int] = {}
        values = all(hasattr(probe, a) for a in ("sums", "high_exp", "low_exp"))
        self.siblings = SiblingTest(probe) if siblings and values else None  # type: ignore[arg-type]

    def lcas(self, i: int, js: list[int]) -> dict[int, int]:
        got = self.pairs([(i, j) for j in js])
        return {j: got[(i, j)] for j in js}

    def pairs(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
        """L for each pair, asking the probe only the ones not known (in one batch)."""
        ask = [p for p in pairs if p not in self.known]
        if ask:
            batch = getattr(self.probe, "pair_sizes", None)
            if batch is not None:
                values = batch(ask)
            else:
                values = [v for i, j in ask for v in self.probe.lca_sizes(i, [j])]
            if len(values) != len(ask):
                raise ProbeError(f"asked {len(ask)} counts, got {len(values)}")
            for (i, j), v in zip(ask, values, strict=True):
                if not 2 <= v <= self.k:
                    raise ProbeError(f"L({i}, {j}) = {v} is outside [2, {self.k}]")
                self.known[(i, j)] = v
        return {p: self.known[p] for p in pairs}

    def node(self, kids: list[int], want: int) -> int:
        got = sum(self.size[c] for c in kids)
        if got != want:
            raise ProbeError(f"counts fit no tree: a node should hold {want} leaves, has {got}")
        self.nodes.append(kids)
        self.size.append(got)
        return self.k + len(self.nodes) - 1

    def from_path(self, i0: int, seen: dict[int, int]) -> int:
        """The subtree whose leaves are i0 and ``seen`` (j -> L(i0, j))."""
        groups: dict[int, list[int]] = {}
        for j, lj in seen.items():
            groups.setdefault(lj, []).append(j)
        settled = self.settle(i0, groups)
        cur = i0
        for lj in sorted(groups):
            kids = settled.get(lj) or self.forest(groups[lj], lj)
            cur = self.node([cur, *kids], lj)
        return cur

    def settle(self, i0: int, groups: dict[int, list[int]]) -> dict[int, list[int]]:
        """Groups the sibling test shows to be single leaves of one node (L -> leaves).

        A group qualifies when it has 3 or more leaves and its first two lie in
        different children (L = the group's node); i0 lies in yet another.
        """
        if self.siblings is None:
            return {}
        big = {lj: sorted(g) for lj, g in groups.items() if len(g) >= 3}
        first = self.pairs([(g[0], g[1]) for g in big.values()])
        wide = {lj: g for lj, g in big.items() if first[(g[0], g[1])] == lj}
        if not wide:
            return {}
        verdicts = self.siblings.all_children(i0, list(wide.values()))
        return {lj: g for (lj, g), ok in zip(wide.items(), verdicts, strict=True) if ok}

    def forest(self, members: list[int], outer: int) -> list[int]:
        """Split ``members`` (whole children of a node of ``outer`` leaves) into subtrees."""
        rest = sorted(members)
        kids = []
        while rest:
            i1, others = rest[0], rest[1:]
            seen = self.lcas(i1, others)
            if any(v > outer for v in seen.values()):
                raise ProbeError(f"counts fit no tree: L above {outer} inside its node")
            inside = {j: v for j, v in seen.items() if v < outer}
            kids.append(self.from_path(i1, inside))
            rest = [j for j in others if j not in inside]
        return kids

    def recursive(self) -> SumTree:
        if self.k > 1:
            seen = self.lcas(0, list(range(1, self.k)))
            self.from_path(0, seen)
        return SumTree.from_children(self.k, self.nodes)

    def basic(self) -> SumTree:
        k = self.k
        by_l: dict[int, list[tuple[int, int]]] = {}
        for i in range(k - 1):
            for j, lval in self.lcas(i, list(range(i + 1, k))).items():
                by_l.setdefault(lval, []).append((i, j))
        comp = list(range(k))  # leaf -> current top id (union-find on tops)
        top_of: dict[int, int] = {v: v for v in range(k)}

        def find(v: int) -> int:
            while comp[v] != v:
                comp[v] = comp[comp[v]]
                v = comp[v]
            return v

        for lval in sorted(by_l):
            links: dict[int, set[int]] = {}
            for i, j in by_l[lval]:
                ri, rj = find(i), find(j)
                if ri != rj:
                    links.setdefault(ri, set()).add(rj)
                    links.setdefault(rj, set()).add(ri)
            done: set[int] = set()
            for start in sorted(links):
                if start in done:
                    continue
                cluster, stack = [], [start]
                while stack:
                    r = stack.pop()
                    if r in done:
                        continue
                    done.add(r)
                    cluster.append(r)
                    stack.extend(links[r] - done)
                new = self.node([top_of[r] for r in sorted(cluster)], lval)
                for r in cluster[1:]:
                    comp[r] = cluster[0]
                top_of[cluster[0]] = new
        if k > 1 and len({find(v) for v in range(k)}) != 1:
            raise ProbeError("counts fit no tree: the pairs never join every summand")
        return SumTree.from_children(k, self.nodes)


def infer_tree(probe: LcaProbe, method: str = "recursive", siblings: bool = True) -> SumTree:
    """The summation tree the probe's kernel follows.

    ``siblings=False`` splits fused nodes by pair probes only (FPRev as published).

    Raises:
        ValueError: for an unknown method.
        ProbeError: for counts that fit no tree.
        KernelFaultError: when the kernel raises.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return build_tree(probe, method, siblings)[0]


def build_tree(probe: LcaProbe, method: str, siblings: bool) -> tuple[SumTree, SiblingTest | None]:
    """The tree and the sibling test used (None when unused); raises as :func:`infer_tree`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    builder = _Builder(probe, siblings and method == "recursive")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * probe.k + 1000))  # a chain nests K deep
    try:
        tree = builder.recursive() if method == "recursive" else builder.basic()
        return tree, builder.siblings
    finally:
        sys.setrecursionlimit(limit)


def infer_order(
    probe: LcaProbe, kernel: str, method: str = "recursive", siblings: bool = True
) -> OrderRecord:
    """Infer, name and time the tree; the record counts the calls made.

    Raises:
        as :func:`infer_tree`.
    """
    start_calls, start_queries = probe.calls, probe.queries
    t0 = time.perf_counter()
    tree, test = build_tree(probe, method, siblings)
    seconds = time.perf_counter() - t0
    family = name_family(tree)
    shape = (getattr(probe, "m", 1), getattr(probe, "n", 1))
    return OrderRecord(
        kernel=kernel,
        probe=probe.kind,
        k=probe.k,
        shape=shape,
        position=getattr(probe, "position", (0, 0)),
        method=method,
        tree=tree,
        family=None if family is None else family.name,
        calls=probe.calls - start_calls,
        queries=probe.queries - start_queries,
        seconds=seconds,
        sibling_rows=0 if test is None else test.rows,
        sibling_nodes=0 if test is None else test.accepted,
        host=host_facts(),
    )
