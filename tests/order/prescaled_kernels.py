"""A foreign-style kernel for the inferred-spec tests: operands scaled first, lanes order."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.kernels.matmul import decode_operands
from fp8lab.order import lanes_tree, tree_matmul

__all__ = ["lanes_prescaled"]


def lanes_prescaled(
    a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
) -> np.ndarray:
    """A foreign-style kernel: scale the operands, then sum in 4 strided lanes, rounded products."""
    a, b = decode_operands(a_codes, b_codes)
    a, b = a * np.float32(s_in), b * np.float32(s_w)
    out = tree_matmul(lanes_tree(a.shape[1], 4, "pairwise"), a, b)
    return out if out_dtype == "f32" else out.astype(ml_dtypes.bfloat16)
