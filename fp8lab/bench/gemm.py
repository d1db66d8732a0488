"""GEMM benchmark: the exact reference and the models against np.matmul, one run.

Ratios are measured in one process, on the same operands, best of
``repeats``. BLAS threads are pinned by environment variables, which
OpenBLAS reads once at load: :func:`run_gemm_bench_pinned` runs
:func:`run_gemm_bench` in a fresh interpreter with ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` set to 1
(threadpoolctl is not a dependency). Run: ``fp8lab gemm-bench``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.kernels.matmul import matmul_vllm_cpp
from fp8lab.kernels.matmul_model import decode_operands
from fp8lab.kernels.matmul_models import pairwise, sequential
from fp8lab.populations.gemm import remap_nan_bytes
from fp8lab.refs.gemm_exact import exact_acc
from fp8lab.runtime.timing import best_of

__all__ = ["PIN_ENV", "GemmBenchRow", "run_gemm_bench", "run_gemm_bench_pinned"]

PIN_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@dataclass(frozen=True)
class GemmBenchRow:
    """One timed path, its baseline and the ratio time / baseline time."""

    name: str
    seconds: float
    baseline: str
    baseline_seconds: float
    ratio: float


def run_gemm_bench(
    m: int = 1024,
    n: int = 1024,
    k: int = 1024,
    *,
    repeats: int = 3,
    seed: int = 2024,
    include_kernel: bool = True,
) -> list[GemmBenchRow]:
    """Time the paths on one random [M,K] x [N,K] e4m3fn product (threads as they are)."""
    rng = np.random.default_rng(seed)
    a = remap_nan_bytes(rng.integers(0, 256, (m, k), dtype=np.uint8))
    b = remap_nan_bytes(rng.integers(0, 256, (n, k), dtype=np.uint8))
    a32, b32 = decode_operands(a, b)
    a64, b64 = a32.astype(np.float64), b32.astype(np.float64)
    base64 = best_of(lambda: a64 @ b64.T, repeats)
    base32 = best_of(lambda: a32 @ b32.T, repeats)
    paths: list[tuple[str, Callable[[], Any], str, float]] = [
        ("exact reference (codes in)", lambda: exact_acc(a, b), "np.matmul float64", base64),
        ("sequential f32 model", lambda: sequential(a32, b32), "np.matmul float32", base32),
    ]
    if include_kernel:
        paths.append(
            ("vllm_cpp kernel port (codes in)",
             lambda: matmul_vllm_cpp(a, b, 1.0, 1.0, "f32"), "np.matmul float32", base32)
        )  # fmt: skip
        paths.append(
            ("pairwise f32 model", lambda: pairwise(a32, b32), "np.matmul float32", base32)
        )
    rows = [GemmBenchRow("np.matmul float64", base64, "np.matmul float64", base64, 1.0)]
    rows.append(GemmBenchRow("np.matmul float32", base32, "np.matmul float32", base32, 1.0))
    for name, fn, base_name, base in paths:
        seconds = best_of(fn, repeats)
        rows.append(GemmBenchRow(name, seconds, base_name, base, seconds / base))
    return rows


def run_gemm_bench_pinned(
    m: int = 1024,
    n: int = 1024,
    k: int = 1024,
    *,
    repeats: int = 3,
    seed: int = 2024,
    include_kernel: bool = True,
) -> list[GemmBenchRow]:
    """:func:`run_gemm_bench` in a fresh interpreter with one BLAS and numba thread.

    Raises:
        RuntimeError: if the child process fails.
    """
    args = json.dumps([m, n, k, repeats, seed, include_kernel])
    env = {**os.environ, **dict.fromkeys(PIN_ENV, "1")}
    done = subprocess.run(
        [sys.executable, "-m", "fp8lab.bench.gemm", args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pinned benchmark failed: {done.stderr[-2000:]}")
    return [GemmBenchRow(**row) for row in json.loads(done.stdout)]


def _main(argv: Sequence[str]) -> None:
    m, n, k, repeats, seed, include_kernel = json.loads(argv[0])
    rows = run_gemm_bench(m, n, k, repeats=repeats, seed=seed, include_kernel=include_kernel)
    print(json.dumps([asdict(r) for r in rows]))


if __name__ == "__main__":  # pragma: no cover - the pinned child
    _main(sys.argv[1:])
