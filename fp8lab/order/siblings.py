"""The fused-node sibling test: are all these summands separate children of one node?

FPRev's pair probe L(i, j) only tells whether two summands share a child
of the node that joins them, so splitting n summands of an n-way fused add
pair by pair takes n(n-1)/2 probes, and no pair probe can do better: every
singleton pair looks alike (FPRev). This test
asks one summation instead. Let P be a node, ``anchor`` a summand in one
child of P and ``members`` the summands of P's other children. With every
other summand 0, a large value H = 2**e at the anchor and a small value t
at summands of ``members``:

* calibration, at this node: t alone at ``members[0]`` leaves the output
  equal to H alone (P drops a lone t next to H), and 2t there does not
  (P keeps a term of 2t);
* then the test: t at every member. If no child of P holds two members,
  P sees t terms only, each dropped: the output equals H alone. If one
  child holds k >= 2 of them, that child's sum k·t (exact: every other
  summand is 0) is a term of at least 2t, which P keeps (a term larger
  than one P keeps is kept), so the output differs.

"Each member is a child of P" is accepted only on that equality; anything
else (no t calibrates, outputs that differ) sends the caller back to pair
probes, so a kernel this does not fit costs probes, not a wrong tree. It
assumes P treats a term by its value alone, whichever child it came from.
MMA-Sim's fused add (each term truncated to 13 bits below the largest,
FPRev) calibrates at t = 0.75·2**(e-13); a node that
rounds to nearest at t = 0.5·ulp. t is searched over 0.75·2**s and
0.5·2**s, s = e-1 down to the probe's ``low_exp``, in one batched probe, and kept for the next
node (re-checked there with two rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = ["SiblingTest", "ValueProbe"]


class ValueProbe(Protocol):
    """A probe that reads the output bits of sparse summand vectors."""

    k: int
    high_exp: int
    low_exp: int

    def sums(self, rows: Sequence[Mapping[int, float]]) -> list[int]: ...  # noqa: D102


class SiblingTest:
    """Counts its outputs read (``rows``) and the nodes it settled (``accepted``)."""

    def __init__(self, probe: ValueProbe) -> None:
        self.probe = probe
        self.high = 2.0**probe.high_exp
        self.t: float | None = None
        self.rows = 0
        self.accepted = 0

    def _sums(self, rows: list[dict[int, float]]) -> list[int]:
        self.rows += len(rows)
        return self.probe.sums(rows)

    def _candidates(self) -> list[float]:
        e, low = self.probe.high_exp, self.probe.low_exp
        return [f * 2.0**s for s in range(e - 1, low - 1, -1) for f in (0.75, 0.5)]

    def _calibrate(self, anchor: int, first: int) -> float | None:
        """The first candidate t that P drops alone and keeps doubled, or None."""
        cands = self._candidates()
        rows: list[dict[int, float]] = [{anchor: self.high}]
        for t in cands:
            rows += [{anchor: self.high, first: t}, {anchor: self.high, first: 2 * t}]
        try:
            got = self._sums(rows)
        except ValueError:  # a value the probe cannot form: no test, pair probes decide
            return None
        base = got[0]
        for n, t in enumerate(cands):
            if got[1 + 2 * n] == base != got[2 + 2 * n]:
                return t
        return None

    def all_children(self, anchor: int, groups: Sequence[Sequence[int]]) -> list[bool]:
        """For each group: True only when the test shows every leaf is its own child.

        One batch for all groups (1 + 3 per group outputs) with the kept t; a
        group where that t does not calibrate is retried alone with a new t.
        """
        lists = [list(g) for g in groups]
        if self.t is None and lists:
            self.t = self._calibrate(anchor, lists[0][0])
        if self.t is None:
            return [False] * len(lists)
        t, h = self.t, self.high
        rows: list[dict[int, float]] = [{anchor: h}]
        for g in lists:
            all_t = {anchor: h, **dict.fromkeys(g, t)}
            rows += [{anchor: h, g[0]: t}, {anchor: h, g[0]: 2 * t}, all_t]
        got = self._sums(rows)
        base, out = got[0], []
        for n, g in enumerate(lists):
            one, two, every = got[1 + 3 * n : 4 + 3 * n]
            if one == base != two:
                out.append(every == base)
            else:
                out.append(self._retry(anchor, g))
        self.accepted += sum(out)
        return out

    def _retry(self, anchor: int, group: list[int]) -> bool:
        t = self._calibrate(anchor, group[0])
        if t is None:
            return False
        h = self.high
        base, every = self._sums([{anchor: h}, {anchor: h, **dict.fromkeys(group, t)}])
        return every == base
