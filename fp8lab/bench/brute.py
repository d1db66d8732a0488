"""Brute force at one scale, fused engine against its numpy twin, timed in one run.

Both engines run the same range with the same workers; the figure is the
ratio of their wall times (best of ``repeats``), and both records must be equal
except ``wall_seconds``. Run: ``fp8lab bench --brute``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass

from fp8lab.detect.brute import brute_force
from fp8lab.detect.records import ExposureRecord
from fp8lab.sweeps.range_run import ALL_PATTERNS, RangeRun

__all__ = ["BruteBench", "bench_brute"]


@dataclass(frozen=True)
class BruteBench:
    """Wall seconds of both engines over one range, their ratio, and record equality."""

    scale: float
    start: int
    stop: int
    workers: int | None
    fused_seconds: float
    numpy_seconds: float
    numpy_over_fused: float
    exposing: int
    records_equal: bool
    load_average: tuple[float, float, float]


def _timed(
    scale: float, engine: str, start: int, stop: int, workers: int | None
) -> tuple[float, ExposureRecord]:
    t0 = time.perf_counter()
    record = brute_force(
        scale, engine=engine, run=RangeRun(start=start, stop=stop, workers=workers)
    )
    return time.perf_counter() - t0, record


def bench_brute(
    scale: float = 0.9,
    *,
    start: int = 0,
    stop: int = ALL_PATTERNS,
    workers: int | None = None,
    repeats: int = 1,
) -> BruteBench:
    """Time ``brute_force(scale)`` over ``[start, stop)`` with each engine.

    Raises:
        ValueError: for an invalid scale or range.
    """
    brute_force(
        scale, engine="fused", run=RangeRun(start=start, stop=min(start + 4096, stop), workers=1)
    )
    best: dict[str, float] = {}
    records: dict[str, ExposureRecord] = {}
    for _ in range(repeats):
        for engine in ("fused", "numpy"):
            seconds, records[engine] = _timed(scale, engine, start, stop, workers)
            best[engine] = min(best.get(engine, float("inf")), seconds)
    load = os.getloadavg()
    strip = [dataclasses.replace(r, wall_seconds=0.0) for r in records.values()]
    return BruteBench(
        scale=records["fused"].scale,
        start=start,
        stop=stop,
        workers=workers,
        fused_seconds=round(best["fused"], 3),
        numpy_seconds=round(best["numpy"], 3),
        numpy_over_fused=round(best["numpy"] / best["fused"], 2),
        exposing=records["fused"].count,
        records_equal=strip[0] == strip[1],
        load_average=(round(load[0], 2), round(load[1], 2), round(load[2], 2)),
    )
