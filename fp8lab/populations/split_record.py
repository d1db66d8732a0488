"""The record of how a rule and one of its one-axis variants split (standard library only)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AxisSplit"]


@dataclass(frozen=True)
class AxisSplit:
    """How rule ``R`` and ``R[axis=value]`` split (see the module docstring for ``status``).

    ``base_calls``: calls of GQ's seeded population (both input dtypes) on which
    the two ports differ; ``float32_amaxes`` / ``bfloat16_amaxes``: the chosen
    amax bit patterns (float32 bits), each of which splits them;
    ``examined_amaxes``: amax patterns swept per dtype, float32 then bfloat16.
    """

    axis: str
    value: str
    status: str
    base_calls: int
    float32_amaxes: tuple[int, ...]
    bfloat16_amaxes: tuple[int, ...]
    examined_amaxes: tuple[int, ...]
    reason: str
