"""Enumeration against brute force at one scale: the proof that the windows suffice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fp8lab.detect.brute import Kernel, brute_force
from fp8lab.detect.enumeration import enumerate_exposing
from fp8lab.sweeps.range_run import ALL_PATTERNS, EVERY_PATTERN, RangeRun

__all__ = ["CrossCheck", "crosscheck", "window_around"]


@dataclass(frozen=True)
class CrossCheck:
    """Both methods' exposing sets over one pattern range, and whether they are equal."""

    scale: float
    scale_hex: str
    start: int
    stop: int
    examined: int
    brute_count: int
    enumerate_count: int
    equal: bool
    brute_seconds: float
    enumerate_seconds: float


def crosscheck(
    scale: float,
    a: Kernel = "reciprocal",
    b: Kernel = "divide",
    *,
    fmt: str = "e4m3fn",
    run: RangeRun = EVERY_PATTERN,
    engine: str = "auto",
) -> CrossCheck:
    """Find the exposing set by brute force and by enumeration; compare count and set.

    ``engine`` picks the brute-force engine (:func:`fp8lab.detect.brute.use_fused`).

    Raises:
        ValueError: for an invalid scale, range or kernel.
    """
    start, stop = run.bounds()
    brute = brute_force(scale, a, b, fmt=fmt, run=run, engine=engine)
    enum = enumerate_exposing(scale, a, b, fmt=fmt, start=start, stop=stop)
    return CrossCheck(
        scale=brute.scale,
        scale_hex=brute.scale_hex,
        start=start,
        stop=stop,
        examined=brute.examined,
        brute_count=brute.count,
        enumerate_count=enum.count,
        equal=brute.inputs == enum.inputs,
        brute_seconds=brute.wall_seconds,
        enumerate_seconds=enum.wall_seconds,
    )


def window_around(scale: float, midpoint: float = 1.0625, half: int = 1 << 19) -> tuple[int, int]:
    """A pattern range of ``2 * half`` patterns centred on ``float32(midpoint * scale)``.

    Every scale has enumeration candidates there, so a quick cross-check is
    never vacuous.
    """
    centre = int(np.float32(midpoint * float(np.float32(scale))).view(np.uint32))
    return max(centre - half, 0), min(centre + half, ALL_PATTERNS)
