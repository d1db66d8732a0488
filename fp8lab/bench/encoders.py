"""Throughput benchmark of the encoders, as per-round ratios measured in one run.

Single-threaded: numba and, when it is installed, torch are pinned to one
thread for the run (and restored after), and the report says so. Every encoder
gets the same float32 input (uniform over the e4m3fn range with a sprinkling
of specials, seed fixed). The encoders are timed in interleaved rounds (round
1: A, B, C, ...; round 2 starts one later: B, C, ..., A), so a burst of load
on a shared machine hits them all alike. Each row reports its median rate and
the median, min-max and interquartile range of its per-round ratio to torch's
single-thread ``x.to(torch.float8_e4m3fn)``. The float32 -> uint8 cast moves
the same bytes as an encoder and is the memory ceiling. Run: ``fp8lab bench``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.codecs import encode
from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.refs import ScanPolicy, ml_dtypes_encode, scan_encode
from fp8lab.specs.formats import FORMATS

__all__ = [
    "TARGET_VS_TORCH",
    "BenchReport",
    "BenchRow",
    "bench_input",
    "run_bench",
    "single_thread",
]

BASELINE = "ml_dtypes+clip"
TORCH = "torch CPU cast (float8_e4m3fn)"
CEILING = "float32->uint8 cast (memory ceiling)"
TARGET_VS_TORCH = 2.0  # fp8lab's fast encoder against torch's single-thread cast


@dataclass(frozen=True)
class BenchRow:
    """One encoder's median time and rate, and its per-round ratios.

    Ratios are the other side's time over this row's (above 1: faster than it).
    ``vs_torch*`` are None without torch; ``target_vs_torch`` is set on the rows
    of fp8lab's fast encoder only, ``vs_target`` is ``vs_torch / target``.
    """

    name: str
    seconds: float
    melem_per_s: float
    vs_ml_dtypes_clip: float
    vs_torch: float | None
    vs_torch_min: float | None
    vs_torch_max: float | None
    vs_torch_q1: float | None
    vs_torch_q3: float | None
    target_vs_torch: float | None
    vs_target: float | None


@dataclass(frozen=True)
class BenchReport:
    """The rows, the rounds they were timed in, and the thread pins the run applied."""

    rows: list[BenchRow]
    rounds: int
    n: int
    seed: int
    pinned: list[str]
    torch: str | None  # torch's version, or None when it is not installed


def bench_input(n: int, seed: int) -> np.ndarray:
    """``n`` float32 values, uniform in [-500, 500] with 1% NaN/inf/zero/tiny."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-500.0, 500.0, n).astype(np.float32)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30], np.float32)
    picks = rng.integers(0, n, n // 100)
    x[picks] = specials[rng.integers(0, specials.size, picks.size)]
    return x


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


@contextmanager
def single_thread(torch: Any) -> Iterator[list[str]]:
    """Pin numba (and ``torch`` unless None) to one thread; yields what was pinned."""
    import numba

    pinned, was_numba = [], numba.get_num_threads()
    numba.set_num_threads(1)
    pinned.append(f"numba threads 1 (was {was_numba})")
    was_torch = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
        pinned.append(f"torch threads 1 (was {was_torch})")
    try:
        yield pinned
    finally:
        numba.set_num_threads(was_numba)
        if torch is not None:
            torch.set_num_threads(was_torch)


def _candidates(
    x: np.ndarray, torch: Any, include_slow: bool
) -> dict[str, tuple[Callable[[], Any], bool]]:
    """Each row: its call, and whether it is fp8lab's fast encoder (held to the target)."""
    fmt = FORMATS["e4m3fn"]
    out: dict[str, tuple[Callable[[], Any], bool]] = {
        "fast (bits engine, branch-free RNE)": (lambda: encode(x, fmt, engine="bits"), True),
        "fast (numba table)": (lambda: encode(x, fmt, engine="numba"), True),
        "fast (numpy table twin)": (lambda: encode(x, fmt, engine="numpy"), True),
        BASELINE: (lambda: ml_dtypes_encode(x, fmt, saturate=True), False),
        CEILING: (lambda: x.view(np.uint32).astype(np.uint8), False),
    }
    if torch is not None:
        xt = torch.from_numpy(x)
        out[TORCH] = (lambda: xt.to(torch.float8_e4m3fn), False)
    if include_slow:
        out["array twin (float64 bit fields)"] = (lambda: encode(x, fmt, method="array"), False)
        out["f32tofp8 port"] = (lambda: f32_to_fp8(x), False)
        out["scan reference (midpoint search)"] = (
            lambda: scan_encode(x, fmt, ScanPolicy(True, False)),
            False,
        )
    return out


def _rounds(calls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, np.ndarray]:
    """Seconds of each call per round; round ``r`` starts at the ``r``-th call."""
    names = list(calls)
    for fn in calls.values():
        fn()  # warm-up: compile, build tables
    seconds = {name: np.empty(rounds) for name in names}
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            t0 = time.perf_counter()
            calls[name]()
            seconds[name][r] = time.perf_counter() - t0
    return seconds


def run_bench(
    n: int = 1 << 24, repeats: int = 7, seed: int = 2024, include_slow: bool = True
) -> BenchReport:
    """Time each encoder once per round for ``repeats`` interleaved rounds, single-threaded."""
    x = bench_input(n, seed)
    torch = _torch()
    candidates = _candidates(x, torch, include_slow)
    with single_thread(torch) as pinned:
        seconds = _rounds({k: fn for k, (fn, _) in candidates.items()}, repeats)
    base = seconds[BASELINE]
    rows = []
    for name, s in seconds.items():
        ratio = seconds[TORCH] / s if TORCH in seconds else None
        target = TARGET_VS_TORCH if candidates[name][1] and ratio is not None else None
        mid = float(np.median(ratio)) if ratio is not None else None
        q1, q3 = np.percentile(ratio, [25, 75]) if ratio is not None else (None, None)
        rows.append(
            BenchRow(
                name=name,
                seconds=float(np.median(s)),
                melem_per_s=float(np.median(n / s / 1e6)),
                vs_ml_dtypes_clip=float(np.median(base / s)),
                vs_torch=mid,
                vs_torch_min=None if ratio is None else float(ratio.min()),
                vs_torch_max=None if ratio is None else float(ratio.max()),
                vs_torch_q1=None if q1 is None else float(q1),
                vs_torch_q3=None if q3 is None else float(q3),
                target_vs_torch=target,
                vs_target=None if target is None or mid is None else mid / target,
            )
        )
    version = None if torch is None else str(torch.__version__)
    return BenchReport(rows, repeats, n, seed, pinned, version)


def rows_to_dicts(rows: list[BenchRow]) -> list[dict[str, Any]]:
    """JSON-ready rows."""
    return [asdict(r) for r in rows]
