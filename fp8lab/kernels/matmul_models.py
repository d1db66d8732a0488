"""Accumulator models for the studies: G3's numpy models, and a compiled sequential twin.

The order-faithful models themselves live in :mod:`fp8lab.refs.gemm_accumulators`
(numpy alone, written apart from every kernel; G3 checks kernels against
them) and are re-exported here, ``MODELS`` included. ``sequential`` here is
their compiled twin for the deviation studies and the benchmark (and the
GEMM mutants' accumulation): the same sum, each ``out[i, j]`` adding
k = 0, 1, ... in order from +0 in float32, equal bit for bit to the numpy
model and to the scalar twin (``tests/studies/test_gemm_models.py``).
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from fp8lab.refs.gemm_accumulators import (
    FAST_ACCUM_ROUNDINGS,
    MODELS,
    AccumulatorModel,
    fast_accum,
    fused,
    pairwise,
    round_mantissa,
    sequential_fma,
    split_k,
)

__all__ = [
    "FAST_ACCUM_ROUNDINGS",
    "MODELS",
    "AccumulatorModel",
    "fast_accum",
    "fused",
    "pairwise",
    "round_mantissa",
    "sequential",
    "sequential_fma",
    "split_k",
]

F32 = npt.NDArray[np.float32]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _sequential_rows(
    a: np.ndarray, bt: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    # Loops k-block, i, k, j: each out[i, j] still adds k = 0, 1, ... in
    # order, from +0 (a k-block finishes for every row before the next
    # starts, so 128 rows of B stay in cache). The j loop is independent
    # lanes and vectorises without reassociation. No fastmath: LLVM may not
    # contract x * b + acc into an FMA.
    m, k = a.shape
    n = bt.shape[1]
    for k0 in range(0, k, 128):
        k1 = min(k, k0 + 128)
        for i in range(m):
            row = out[i]
            for kk in range(k0, k1):
                x = a[i, kk]
                col = bt[kk]
                for j in range(n):
                    row[j] += x * col[j]


def sequential(a: F32, b: F32) -> F32:
    """``acc = 0; for k: acc = f32(acc + f32(a[k]*b[k]))`` (vllm.cpp MatmulFp8), compiled.

    Raises:
        ValueError: unless A is [M,K] and B is [N,K].
    """
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"want A [M,K] and B [N,K], got {a.shape} and {b.shape}")
    out = np.zeros((a.shape[0], b.shape[0]), np.float32)
    _sequential_rows(np.ascontiguousarray(a), np.ascontiguousarray(b.T), out)
    return out
