"""Sweep the divide-vs-reciprocal exposure over many scales at once.

A vectorised twin of :func:`fp8lab.detect.enumerate_exposing` for the pair
``d = fl(x/s)`` and ``q = fl(x*fl(1/s))``: a batch of scales times every
candidate window (:mod:`fp8lab.detect.windows`) is evaluated in numpy, and the
byte change is read from the tie rule at each midpoint instead of from
encoding (:mod:`fp8lab.detect.midpoints`). Only positive inputs are evaluated;
counts are doubled by the sign symmetry. Tests check it against the kernels.
10**5 scales take about 3 s on 2 cores. What the counts show over scales is
summarised by :func:`fp8lab.detect.describe_sweep` (:mod:`fp8lab.detect.structure`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.detect.midpoints import midpoint_table
from fp8lab.detect.scales import as_scales
from fp8lab.detect.windows import candidate_windows, window_bits
from fp8lab.runtime.cluster import ambient_cluster
from fp8lab.runtime.parallel import default_workers, worker_pool

__all__ = ["COLUMNS", "PER_MIDPOINT", "SweepRecord", "sweep", "sweep_batch"]

COLUMNS = (
    "count",
    "midpoints",
    "divide_on",
    "reciprocal_on",
    "both_on",
    "neither_on",
    "bf16_count",
)
BATCH = 1000
PER_MIDPOINT = "scales_exposing_midpoint"


def sweep_batch(scales: npt.NDArray[np.float32], fmt: str = "e4m3fn") -> dict[str, np.ndarray]:
    """Per-scale counts (both signs) for a batch of validated float32 scales.

    Returns:
        One int64 array per name in :data:`COLUMNS`: exposing inputs, signed
        midpoints with an exposing input, inputs with only x/s on the midpoint,
        only x*r on it, both, neither (the midpoint strictly between), and
        exposing inputs that are bfloat16 values widened to float32.
    """
    table = midpoint_table(fmt)
    first, count = candidate_windows(scales, table.values)
    bits, valid = window_bits(first, count)
    x = bits.view(np.float32)
    s = scales[:, None, None]
    m = table.values.astype(np.float32)[None, :, None]
    tie = table.tie_up[None, :, None]
    with np.errstate(over="ignore"):
        d = x / s
        q = x * (np.float32(1.0) / s)
    up_d = (d > m) | ((d == m) & tie)
    up_q = (q > m) | ((q == m) & tie)
    hit = valid & table.exposable[None, :, None] & (up_d != up_q)
    on_d, on_q = hit & (d == m), hit & (q == m)
    bf16 = hit & ((bits & np.uint32(0xFFFF)) == 0)
    cols = (
        hit,
        hit.any(axis=2),
        on_d & ~on_q,
        on_q & ~on_d,
        on_d & on_q,
        hit & ~on_d & ~on_q,
        bf16,
    )
    out = {
        name: 2 * c.reshape(c.shape[0], -1).sum(axis=1, dtype=np.int64)
        for name, c in zip(COLUMNS, cols, strict=True)
    }
    out[PER_MIDPOINT] = hit.any(axis=2).sum(axis=0, dtype=np.int64)  # scales exposing each m
    return out


@dataclass(frozen=True, eq=False)
class SweepRecord:
    """Per-scale exposure counts of divide vs reciprocal.

    Args:
        format: format name.
        scales: float32 scales, shape (S,).
        columns: one int64 array of shape (S,) per name in :data:`COLUMNS`.
        reciprocal_error: ``(fl(1/s) * s - 1) * 2**24`` per scale, exact.
        wall_seconds: time taken.
        midpoints: the positive midpoints of the format, shape (K,).
        scales_exposing_midpoint: at how many scales each midpoint (either
            sign) has an exposing input, shape (K,).
    """

    format: str
    scales: npt.NDArray[np.float32]
    columns: dict[str, npt.NDArray[np.int64]]
    reciprocal_error: npt.NDArray[np.float64]
    wall_seconds: float
    midpoints: npt.NDArray[np.float64]
    scales_exposing_midpoint: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        self.scales.setflags(write=False)
        self.reciprocal_error.setflags(write=False)
        for col in self.columns.values():
            col.setflags(write=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; scales as float and ``float.hex``."""
        return {
            "format": self.format,
            "n_scales": int(self.scales.size),
            "scales": [float(s) for s in self.scales],
            "scales_hex": [float(s).hex() for s in self.scales],
            "reciprocal_error_ulps": [float(e) for e in self.reciprocal_error],
            **{k: [int(v) for v in a] for k, a in self.columns.items()},
            "wall_seconds": self.wall_seconds,
            "midpoints_hex": [float(m).hex() for m in self.midpoints],
            PER_MIDPOINT: [int(v) for v in self.scales_exposing_midpoint],
        }

    def to_json(self) -> str:
        """Stable JSON."""
        return json.dumps(self.to_dict(), sort_keys=True)


def sweep(
    scales: Iterable[float] | npt.NDArray[Any],
    executor: Executor | None = None,
    *,
    fmt: str = "e4m3fn",
    batch: int = BATCH,
    workers: int | None = None,
) -> SweepRecord:
    """Exposure counts of divide vs reciprocal at every scale.

    Args:
        scales: the scales (e.g. :func:`fp8lab.detect.log_scales`).
        executor: any concurrent.futures Executor; default local processes.
        fmt: format.
        batch: scales per task.
        workers: processes for the default executor; 1 runs in this process.

    Raises:
        ValueError: for an empty scale list or an invalid scale.
    """
    t0 = time.monotonic()
    arr = as_scales(scales)
    midpoint_table(fmt)  # fail on a bad format before any work
    parts = [arr[i : i + batch] for i in range(0, arr.size, batch)]
    if executor is None and workers is None and (ambient := ambient_cluster()):
        executor, workers = ambient.executor, ambient.workers
    workers = workers or default_workers()
    if executor is None and (workers == 1 or len(parts) == 1):
        results = [sweep_batch(p, fmt) for p in parts]
    else:
        if executor is not None:
            results = list(executor.map(sweep_batch, parts, [fmt] * len(parts)))
        else:
            with worker_pool(workers) as pool:
                results = list(pool.map(sweep_batch, parts, [fmt] * len(parts)))
    columns = {k: np.concatenate([r[k] for r in results]) for k in COLUMNS}
    per_midpoint: npt.NDArray[np.int64] = np.stack([r[PER_MIDPOINT] for r in results]).sum(axis=0)
    r = (np.float32(1.0) / arr).astype(np.float64)
    error = (r * arr.astype(np.float64) - 1.0) * 2.0**24  # 24x24-bit product: exact
    return SweepRecord(
        fmt,
        arr,
        columns,
        error,
        round(time.monotonic() - t0, 3),
        midpoint_table(fmt).values,
        per_midpoint,
    )
