"""Many ``F32ToFp8`` port mutants checked in one compiled pass: each forks where it differs.

A mutant of the port's ``_steps`` changes one statement. The compiled lanes
(:mod:`fp8lab.kernels.f32tofp8_twin`) of the original and of the mutant are
then the same text up to that statement, so they reach it in the same state,
and a lane that answers before it answers alike on both. :func:`fork_checker`
writes one lane function that runs the original's statements once and, just
before each mutant's first differing statement, runs that mutant's remaining
statements (its *fork*) from the original's state and compares the answer
with the original's code. Every lane costs one original lane plus the forks it
reaches, instead of one whole lane per mutant.

The check answers, per mutant, the first lane it cannot vouch for: a fork
that answers another code (or an undetermined lane), or an original lane that
answered before the fork with a code other than the one wanted (or
undetermined). Every lane before it gives the wanted code on the mutant's
lane, exactly as :func:`fp8lab.kernels.f32tofp8_twin.twin_checker` would say;
what follows it is for the mutant's own encoder to decide.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels import f32tofp8_twin as twin

__all__ = ["MAX_FORKS", "fork_checker", "fork_points"]

MAX_FORKS = 62  # one bit of an int64 answer per mutant

_HEADER = """import math

import numba
import numpy as np

from fp8lab.kernels.f32tofp8_twin import frexp32 as _frexp32

_inline = numba.njit(inline="always", error_model="numpy", cache=True)
_fork = numba.njit(error_model="numpy", cache=True)
"""

_LOOP = """

@numba.njit(nogil=True, error_model="numpy", cache=True)
def first_flags(flat, want, first):
    for i in range(flat.size):
        hit = _lanes(flat[i], np.int16(want[i]))
        if hit != 0:
            for j in range(first.size):
                if (hit >> j) & 1 and first[j] < 0:
                    first[j] = i
"""

Lane = tuple[ast.Module, dict[str, Any]]  # a module's source tree and its namespace


def fork_points(original: Lane, mutants: Sequence[Lane]) -> list[int]:
    """Each mutant's first statement of ``_steps`` whose lane text differs from the original's.

    The number of statements when none differs. Raises when a source is not modelled.
    """
    base = [lines for lines, _ in twin.lane_groups(*original)]
    points = []
    for tree, namespace in mutants:
        groups = [lines for lines, _ in twin.lane_groups(tree, namespace)]
        same = 0
        while same < min(len(base), len(groups)) and base[same] == groups[same]:
            same += 1
        if same == len(base):  # no statement differs
            same -= 1
        points.append(same)
    return points


def _indent(lines: list[str]) -> str:
    return "\n".join("    " + line for line in lines)


def _source(original: Lane, mutants: Sequence[Lane]) -> str:
    """The generated module: one fork per mutant, the shared lane, and the loop."""
    points = fork_points(original, mutants)
    out = [_HEADER]
    for j, ((tree, namespace), k) in enumerate(zip(mutants, points, strict=True)):
        rest = twin.lane_groups(tree, namespace)[k:]
        body = _indent([line for lines, _ in rest for line in lines] + ["return np.int16(0)"])
        out.append(f"\n@_fork\ndef _fork_{j}(flat, {', '.join(rest[0][1])}):\n{body}\n")

    def unforked(k: int) -> int:  # the mutants whose fork comes after statement k
        return sum(1 << j for j, p in enumerate(points) if p > k)

    def answer(value: str, k: int) -> str:
        return f"return _hit | (np.int64(0) if {value} == _want else np.int64({unforked(k)}))"

    lines = ["_hit = np.int64(0)"]
    groups = twin.lane_groups(*original, returns=answer)
    for k, (group, bound) in enumerate(groups):
        for j, p in enumerate(points):
            if p == k:
                call = f"_fork_{j}(flat, {', '.join(bound)})"
                lines.append(f"if {call} != _want:\n        _hit |= np.int64({1 << j})")
        lines.extend(group)
    lines.append(answer("np.int16(0)", len(groups)))  # every mutant has forked by now
    out.append(f"\n@_inline\ndef _lanes(flat, _want):\n{_indent(lines)}\n")
    return "".join(out) + _LOOP


def fork_checker(original: Lane, mutants: Sequence[Lane]) -> Any:
    """The compiled ``first_flags(flat, want) -> int64[len(mutants)]``, or None (not modelled).

    Entry ``j`` is the first lane mutant ``j``'s own encoder must decide (see
    the module docstring), -1 when every lane gives the wanted code.
    """
    if not mutants or len(mutants) > MAX_FORKS:
        return None
    try:
        module = twin.load_generated(_source(original, mutants))
        check = _wrap(module, len(mutants))
        check(np.zeros(1, np.float32), np.zeros(1, np.uint8))  # compile now, or refuse
    except Exception:  # noqa: BLE001 - not modelled, or numba could not type it
        return None
    return check


def _wrap(module: types.ModuleType, count: int) -> Any:
    def first_flags(
        flat: npt.NDArray[np.float32], want: npt.NDArray[np.uint8]
    ) -> npt.NDArray[np.int64]:
        first = np.full(count, -1, np.int64)
        module.first_flags(flat, want, first)
        return first

    return first_flags
