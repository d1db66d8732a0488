"""The summation tree of every output position, grouped into classes of equal trees.

A BLAS may sum one row tile in another order than the rest (OpenBLAS's
Haswell sgemm sums rows 6-11 of a 16x16x16 product in another order than
the others), so one output's tree does not describe a product.
:func:`classify_positions` infers the tree of every position asked for:

1. every kernel call answers its question at all MxN outputs at once
   (:class:`~fp8lab.order.grid.GridProbe`);
2. the tree of the first unclassified position is built as usual
   (recursive or basic, with the sibling test), reading that position;
3. every unclassified position whose answers to the questions that build
   asked equal that position's answers has the same tree (the builder is
   deterministic: the same answers ask the same questions and build the same
   tree), so it joins the class; the rest go round again.

A uniform product costs the calls of one inference; each further class
costs only the questions no earlier class asked. A position whose counts
fit no tree gets a class of its own with the error and no tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fp8lab.order.families import name_family
from fp8lab.order.grid import GridProbe, PositionView
from fp8lab.order.infer import build_tree
from fp8lab.order.probe import ProbeError
from fp8lab.order.tree import SumTree
from fp8lab.specs.gemm_decl import index_list

__all__ = ["Position", "PositionClass", "classify_positions", "parse_positions", "spans"]

Position = tuple[int, int]


@dataclass(frozen=True)
class PositionClass:
    """Outputs that follow one tree (``tree`` None: their counts fit no tree; ``error`` says why).

    Attributes:
        outputs: the (row, column) positions of the class, in row-major order.
        tree: their summation tree, or None.
        family: the tree's known family, or None.
        error: why no tree fits ("" when one does).
    """

    outputs: tuple[Position, ...]
    tree: SumTree | None
    family: str | None
    error: str = ""

    def where(self) -> str:
        """The outputs in words: ``rows 0-5,12-15, columns 0-15``, or a count and its rows."""
        rows = sorted({r for r, _ in self.outputs})
        cols = sorted({c for _, c in self.outputs})
        if len(self.outputs) == len(rows) * len(cols):
            return f"rows {spans(rows)}, columns {spans(cols)}"
        return f"{len(self.outputs)} outputs in rows {spans(rows)}"

    def to_json(self) -> dict[str, Any]:
        """``outputs`` as [i, j] pairs, ``family``, ``tree`` (null when none) and ``error``."""
        tree = self.tree
        return {
            "outputs": [list(p) for p in self.outputs],
            "family": self.family,
            "tree": None if tree is None else tree.to_json(),
            "max_fan_in": None if tree is None else tree.max_fan_in(),
            "depth": None if tree is None else tree.depth(),
            "error": self.error,
        }


def spans(values: Sequence[int]) -> str:
    """Sorted numbers as runs: ``0-5,12-15``."""
    out: list[tuple[int, int]] = []
    for v in sorted(values):
        if out and out[-1][1] == v - 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def parse_positions(text: str, m: int, n: int) -> list[Position]:
    """``all`` or ``ROWS:COLS`` (comma lists of numbers and ranges a-b, ``*`` for every one).

    Raises:
        ValueError: for a malformed grid or an index outside the MxN product.
    """
    if text.strip() == "all":
        return [(r, c) for r in range(m) for c in range(n)]
    rows, sep, cols = text.partition(":")
    if not sep:
        raise ValueError(f"positions {text!r}: want 'all' or ROWS:COLS, e.g. 0-5,8:*")
    return [(r, c) for r in index_list(rows, m, "row") for c in index_list(cols, n, "column")]


def _same_answers(grid: GridProbe, view: PositionView, cands: list[Position]) -> np.ndarray:
    """For each candidate, whether its answers to every question ``view`` asked equal the view's."""
    rows = np.array([p[0] for p in cands])
    cols = np.array([p[1] for p in cands])
    keep = np.ones(len(cands), bool)
    for question in dict.fromkeys(view.asked):
        answers = grid.answer(question)
        keep &= answers[rows, cols] == answers[view.position]
    return keep


def classify_positions(
    grid: GridProbe, positions: Sequence[Position], method: str = "recursive", siblings: bool = True
) -> list[PositionClass]:
    """The classes of equal trees over ``positions`` (each position in exactly one class).

    Raises:
        ValueError: for an unknown method or no position.
        KernelFaultError: when the kernel raises.
    """
    if not positions:
        raise ValueError("no output position to infer")
    left = list(dict.fromkeys(positions))
    classes: list[PositionClass] = []
    while left:
        view = PositionView(grid, left[0])
        tree: SumTree | None = None
        error = ""
        try:
            tree = build_tree(view, method, siblings)[0]
        except ProbeError as exc:
            error = str(exc)
        same = _same_answers(grid, view, left)
        members = tuple(sorted(p for p, s in zip(left, same, strict=True) if s))
        family = None if tree is None else name_family(tree)
        classes.append(PositionClass(members, tree, None if family is None else family.name, error))
        left = [p for p, s in zip(left, same, strict=True) if not s]
    return classes
