"""Prove that the chunks which came back tile a pattern range exactly once.

A run on many workers (local processes or a dask cluster) hands back one
result per chunk, each naming the patterns it examined. Coverage is derived
from those results, not from the plan: a chunk that never came back, came back
twice (e.g. a cache returning another chunk's result) or overlaps another is
named, never silent.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CoverageError", "covered_domain", "covered_ranges"]


class CoverageError(RuntimeError):
    """The chunks that ran do not cover the range exactly once; the message says where."""


def covered_ranges(chunks: Iterable[tuple[int, int]], start: int, stop: int) -> list[list[str]]:
    """The chunks ``[lo, hi)`` that ran, merged into contiguous ``["0x..", "0x.."]`` ranges.

    Args:
        chunks: ``(lo, hi)`` of every chunk result, in any order.
        start: first pattern of the range the run had to cover.
        stop: one past its last pattern.

    Raises:
        CoverageError: if the chunks leave a gap in ``[start, stop)``, overlap,
            or reach outside it.
    """
    ranges: list[list[int]] = []
    at = start
    for lo, hi in sorted(chunks):
        if hi <= lo:
            raise CoverageError(f"chunk [{lo:#x}, {hi:#x}) examined nothing")
        if lo < at:
            raise CoverageError(f"chunk [{lo:#x}, {hi:#x}) overlaps patterns already examined")
        if lo > at:
            raise CoverageError(f"patterns [{at:#x}, {lo:#x}) were never examined")
        if ranges and ranges[-1][1] == lo:
            ranges[-1][1] = hi
        else:
            ranges.append([lo, hi])
        at = hi
    if at < stop:
        raise CoverageError(f"patterns [{at:#x}, {stop:#x}) were never examined")
    if at > stop:
        raise CoverageError(f"chunks reach {at:#x}, past the range's end {stop:#x}")
    return [[f"{lo:#010x}", f"{hi:#010x}"] for lo, hi in ranges]


def covered_domain(
    chunks: Iterable[tuple[int, int]], domain: Iterable[tuple[int, int]]
) -> list[list[str]]:
    """:func:`covered_ranges` over a domain of disjoint ranges (a range minus skipped patterns).

    Raises:
        CoverageError: if a chunk lies outside every range of ``domain``, or a
            range is not tiled exactly once.
    """
    parts = sorted(domain)
    per: dict[tuple[int, int], list[tuple[int, int]]] = {p: [] for p in parts}
    for lo, hi in chunks:
        home = next((p for p in parts if p[0] <= lo < p[1]), None)
        if home is None:
            raise CoverageError(f"chunk [{lo:#x}, {hi:#x}) lies outside the patterns to examine")
        per[home].append((lo, hi))
    return [r for p in parts for r in covered_ranges(per[p], *p)]
