"""Known summation orders as trees, and naming an inferred tree by its family.

Families:

* ``sequential``: ((x0 + x1) + x2) + ... (a running float32 sum).
* ``pairwise``: neighbours added level by level, an odd last term moving up
  unchanged (``fp8lab.refs.gemm_accumulators.pairwise``).
* ``split_k(chunk=c, parts=b, reduce=r)``: contiguous chunks of c summands
  (the last may be shorter; b = ceil(K/c) of them) each summed sequentially,
  then the b partials reduced ``sequential``-ly or ``pairwise``. "Split-K(b)"
  and "blocked (chunk c)" are the same trees; the name carries both numbers.
* ``lanes(w=w, reduce=r)``: w SIMD lanes, lane l summing x_l, x_(l+w), ...
  sequentially, then the w lane sums reduced ``sequential``-ly or
  ``pairwise`` (a vectorised dot product).
* ``fused(n=n)``: an n-way fused add per step (a tensor core's MMA): the first
  node adds x0..x(n-1) at once, each next node adds the previous node and the
  next n summands at once; ``fused(n=n, promote=p)`` restarts every p
  summands and adds the partials sequentially (CUTLASS's promotion).
"""

from __future__ import annotations

from dataclasses import dataclass

from fp8lab.order.tree import SumTree

__all__ = [
    "Family",
    "fused_tree",
    "lanes_tree",
    "name_family",
    "pairwise_tree",
    "sequential_tree",
    "split_k_tree",
]

REDUCTIONS = ("sequential", "pairwise")


@dataclass(frozen=True)
class Family:
    """A known family and its parameters; ``name`` is the canonical text."""

    name: str
    kind: str
    chunk: int | None = None
    parts: int | None = None
    reduce: str | None = None
    n: int | None = None
    promote: int | None = None


class _Builder:
    def __init__(self, k: int) -> None:
        self.k = k
        self.nodes: list[list[int]] = []

    def add(self, kids: list[int]) -> int:
        if len(kids) == 1:
            return kids[0]
        self.nodes.append(kids)
        return self.k + len(self.nodes) - 1

    def chain(self, ids: list[int]) -> int:
        acc = ids[0]
        for v in ids[1:]:
            acc = self.add([acc, v])
        return acc

    def pairs(self, ids: list[int]) -> int:
        while len(ids) > 1:
            nxt = [self.add([ids[i], ids[i + 1]]) for i in range(0, len(ids) - 1, 2)]
            ids = nxt + ids[len(ids) - len(ids) % 2 :]
        return ids[0]

    def reduce(self, ids: list[int], how: str) -> int:
        if how not in REDUCTIONS:
            raise ValueError(f"reduce must be one of {REDUCTIONS}, got {how!r}")
        return self.chain(ids) if how == "sequential" else self.pairs(ids)

    def tree(self) -> SumTree:
        return SumTree.from_children(self.k, self.nodes)


def sequential_tree(k: int) -> SumTree:
    """x0 + x1, then + x2, ... in order."""
    b = _Builder(k)
    b.chain(list(range(k)))
    return b.tree()


def pairwise_tree(k: int) -> SumTree:
    """Neighbours level by level; an odd last term moves up unchanged."""
    b = _Builder(k)
    b.pairs(list(range(k)))
    return b.tree()


def split_k_tree(k: int, chunk: int, reduce: str = "sequential") -> SumTree:
    """Sequential sums of chunks of ``chunk`` summands, partials reduced by ``reduce``.

    Raises:
        ValueError: for a chunk below 1 or an unknown reduction.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    b = _Builder(k)
    parts = [b.chain(list(range(s, min(k, s + chunk)))) for s in range(0, k, chunk)]
    b.reduce(parts, reduce)
    return b.tree()


def lanes_tree(k: int, w: int, reduce: str = "pairwise") -> SumTree:
    """Strided lanes (w of them) summed sequentially, then reduced by ``reduce``.

    Raises:
        ValueError: for w below 1 or an unknown reduction.
    """
    if w < 1:
        raise ValueError(f"w must be >= 1, got {w}")
    b = _Builder(k)
    lanes = [b.chain(list(range(lane, k, w))) for lane in range(min(w, k))]
    b.reduce(lanes, reduce)
    return b.tree()


def fused_tree(k: int, n: int, promote: int | None = None) -> SumTree:
    """n-way fused adds (previous node + next n summands), restarting every ``promote``.

    Raises:
        ValueError: for n below 1 or a promote interval that is not a multiple of n.
    """
    if n < 1 or (promote is not None and (promote < n or promote % n)):
        raise ValueError(f"want n >= 1 and promote a multiple of n, got {n}, {promote}")
    step = k if promote is None else promote
    b = _Builder(k)
    parts = []
    for s in range(0, k, step):
        acc: int | None = None
        for g in range(s, min(k, s + step), n):
            leaves = list(range(g, min(k, s + step, g + n)))
            acc = b.add(leaves if acc is None else [acc, *leaves])
        assert acc is not None
        parts.append(acc)
    b.chain(parts)
    return b.tree()


def _leaf0_prefixes(tree: SumTree) -> list[int]:
    """Sizes s of the nodes above leaf 0 whose leaves are exactly 0..s-1."""
    k = tree.leaves
    size = tree.sizes()
    high = list(range(k))
    parent = [-1] * (k + len(tree.nodes))
    for t, kids in enumerate(tree.nodes):
        high.append(max(high[c] for c in kids))
        for c in kids:
            parent[c] = k + t
    out, v = [], parent[0] if k > 1 else -1
    while v != -1:
        if high[v] == size[v] - 1:
            out.append(size[v])
        v = parent[v]
    return out


def _run_end(prefixes: list[int], step: int) -> int | None:
    """The last prefix of the initial run first, first+step, ... (None if none)."""
    if not prefixes:
        return None
    end = prefixes[0]
    for s in prefixes[1:]:
        if s != end + step:
            break
        end = s
    return end


def _leaf0_partner(tree: SumTree) -> int | None:
    """The other leaf of the binary node that adds leaf 0 to one leaf, if any."""
    for kids in tree.nodes:
        if 0 in kids:
            return kids[1] if len(kids) == 2 and kids[1] < tree.leaves else None
    return None


def _first_fan_in(tree: SumTree) -> int:
    for kids in tree.nodes:
        if 0 in kids:
            return len(kids)
    return 1


def name_family(tree: SumTree) -> Family | None:
    """The known family ``tree`` belongs to, or None ("no known family").

    Tries sequential, pairwise, fused(n) (n from the node above leaf 0, the
    promote interval where its run of n-steps ends), then split_k with the
    chunk where the sequential run above leaf 0 ends.
    """
    k = tree.leaves
    if tree == sequential_tree(k):
        return Family("sequential", "sequential")
    if tree == pairwise_tree(k):
        return Family("pairwise", "pairwise")
    prefixes = _leaf0_prefixes(tree)
    n = _first_fan_in(tree)
    if tree.max_fan_in() > 2:
        for promote in (None, _run_end(prefixes, n)):
            if promote is not None and (promote % n or promote >= k):
                continue
            if tree == fused_tree(k, n, promote):
                extra = "" if promote is None else f", promote={promote}"
                return Family(f"fused(n={n}{extra})", "fused", n=n, promote=promote)
    partner = _leaf0_partner(tree)
    if partner is not None and partner > 1:
        for how in REDUCTIONS:
            if tree == lanes_tree(k, partner, how):
                return Family(f"lanes(w={partner}, reduce={how})", "lanes", n=partner, reduce=how)
    chunk = _run_end(prefixes, 1)
    if chunk is not None and chunk < k:
        for how in REDUCTIONS:
            if tree == split_k_tree(k, chunk, how):
                parts = -(-k // chunk)
                return Family(
                    f"split_k(chunk={chunk}, parts={parts}, reduce={how})",
                    "split_k",
                    chunk=chunk,
                    parts=parts,
                    reduce=how,
                )
    return None
