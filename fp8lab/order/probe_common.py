"""What every FPRev probe shares: the protocol, its error, summand rows and unit counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = [
    "LcaProbe",
    "ProbeError",
    "Row",
    "batches",
    "bits",
    "check_pairs",
    "count_units",
    "f32_row",
]

T = TypeVar("T")


class ProbeError(ValueError):
    """A probe's output is not a count of units: the kernel is not a sum of its inputs."""


class LcaProbe(Protocol):
    """``lca_sizes(i, js)``: for each j, the leaves under the node joining summands i and j."""

    k: int
    calls: int
    queries: int
    kind: str

    def lca_sizes(self, i: int, js: Sequence[int]) -> list[int]: ...  # noqa: D102


Row = Mapping[int, float]  # summand position -> value; every other summand is 0


def bits(value: Any) -> int:
    """The bits of ``value`` as a float32."""
    return int(np.asarray(value, np.float32).reshape(()).view(np.uint32))


def f32_row(k: int, row: Row) -> np.ndarray:
    """A float32 summand vector of length K, zero except at ``row``'s positions.

    Raises:
        ValueError: for a position outside 0..K-1 or a value that is no float32.
    """
    x = np.zeros(k, np.float32)
    for pos, v in row.items():
        if not 0 <= pos < k or float(np.float32(v)) != v:
            raise ValueError(f"summand {pos}: {v!r} is not a float32 in 0..{k - 1}")
        x[pos] = v
    return x


def count_units(value: Any, unit: float, k: int, i: int, j: int) -> int:
    """L(i, j) = K - the units ``value`` counts; :class:`ProbeError` if it counts none in range."""
    v = float(value)
    units = v / unit
    if not np.isfinite(v) or units != round(units) or not 0 <= units <= k - 2:
        raise ProbeError(
            f"probe (i={i}, j={j}) read {v!r}: not a count of units in [0, {k - 2}]"
            " (the kernel is not an order-only sum, or rounds below float32)"
        )
    return k - round(units)


def check_pairs(k: int, pairs: Sequence[tuple[int, int]]) -> None:
    """Raise ValueError unless each pair names two distinct summands in 0..K-1."""
    for i, j in pairs:
        if not (0 <= i < k and 0 <= j < k and i != j):
            raise ValueError(f"want two distinct summands in 0..{k - 1}, got {i} and {j}")


def batches(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` in consecutive groups of ``size``."""
    return [list(items[s : s + size]) for s in range(0, len(items), size)]
