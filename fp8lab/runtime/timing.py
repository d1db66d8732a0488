"""Best-of-n wall-clock timing for benchmarks (never used in tests' assertions)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["best_of"]


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` calls, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
