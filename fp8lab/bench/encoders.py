"""Throughput benchmark of the encoders, as ratios measured in one run.

Single-threaded. Every encoder gets the same float32 input (uniform over the
e4m3fn range with a sprinkling of specials, seed fixed) and the best of
``repeats`` timings. The float32 -> uint8 cast moves the same bytes as an
encoder and is the memory ceiling. Run: ``fp8lab bench``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.codecs import encode
from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.refs import ScanPolicy, ml_dtypes_encode, scan_encode
from fp8lab.runtime.timing import best_of
from fp8lab.specs.formats import FORMATS

__all__ = ["BenchRow", "bench_input", "run_bench"]

BASELINE = "ml_dtypes+clip"


@dataclass(frozen=True)
class BenchRow:
    """One encoder's best time and rate, and its ratio to ml_dtypes+clip."""

    name: str
    seconds: float
    melem_per_s: float
    vs_ml_dtypes_clip: float


def bench_input(n: int, seed: int) -> np.ndarray:
    """``n`` float32 values, uniform in [-500, 500] with 1% NaN/inf/zero/tiny."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-500.0, 500.0, n).astype(np.float32)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30], np.float32)
    picks = rng.integers(0, n, n // 100)
    x[picks] = specials[rng.integers(0, specials.size, picks.size)]
    return x


def run_bench(
    n: int = 1 << 24, repeats: int = 5, seed: int = 2024, include_slow: bool = True
) -> list[BenchRow]:
    """Time each encoder on the same input; ratios are to ml_dtypes+clip."""
    fmt = FORMATS["e4m3fn"]
    x = bench_input(n, seed)
    candidates: dict[str, Callable[[], Any]] = {
        "fast (numba table)": lambda: encode(x, fmt),
        "fast (numpy table twin)": lambda: encode(x, fmt, engine="numpy"),
        BASELINE: lambda: ml_dtypes_encode(x, fmt, saturate=True),
        "float32->uint8 cast (memory ceiling)": lambda: x.view(np.uint32).astype(np.uint8),
    }
    if include_slow:
        candidates["array twin (float64 bit fields)"] = lambda: encode(x, fmt, method="array")
        candidates["f32tofp8 port"] = lambda: f32_to_fp8(x)
        candidates["scan reference (midpoint search)"] = lambda: scan_encode(
            x, fmt, ScanPolicy(True, False)
        )
    seconds = {name: best_of(fn, repeats) for name, fn in candidates.items()}
    base = seconds[BASELINE]
    return [BenchRow(name, s, n / s / 1e6, base / s) for name, s in seconds.items()]


def rows_to_dicts(rows: list[BenchRow]) -> list[dict[str, Any]]:
    """JSON-ready rows."""
    return [asdict(r) for r in rows]
