"""Real summation code to infer, importable by ``fp8lab order --kernel``.

* :func:`numpy_matmul`: ``A @ Bᵀ`` in float32 (numpy's BLAS sgemm; its order
  depends on the shape and on the kernel OpenBLAS picks for this CPU).
* :func:`numpy_sum`: ``np.sum`` of a float32 vector (numpy's pairwise sum
  with 8 accumulators, as the machine's numpy builds it).
"""

from __future__ import annotations

import numpy as np

__all__ = ["numpy_matmul", "numpy_sum"]


def numpy_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b.T`` for float32 A [M,K] and B [N,K]."""
    return np.asarray(np.asarray(a, np.float32) @ np.asarray(b, np.float32).T)


def numpy_sum(x: np.ndarray) -> np.float32:
    """``np.sum(x)`` in float32."""
    return np.float32(np.sum(np.asarray(x, np.float32), dtype=np.float32))
