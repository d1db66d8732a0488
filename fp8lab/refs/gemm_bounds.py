"""Forward error bounds for an fp8 GEMM output against the exact product.

Sequential float32 summation (Higham, Accuracy and Stability, 2nd ed., §4.2):
the first add 0 + p0 is exact and the products are exact, so
K - 1 additions each contribute a factor (1 + δ), |δ| <= u = 2**-24, and
``|fl(Σp) - Σp| <= gamma_{K-1} Σ|p|`` with ``gamma_n = n·u / (1 - n·u)``. The folded
epilogue ``f32(alpha * acc)`` adds one more factor, and
(1 + θ_{K-1})(1 + δ) = 1 + θ_K, so against ``want = alpha · Σp``:

    |out - want| <= gamma_K · |alpha| · Σ|p|                     (f32 output)

The two-scalar epilogue ``f32(s_in · f32(s_w · acc))`` has two roundings and
an alpha that is not the rounded f32(s_in·s_w): gamma_{K+2}/(1 - u) instead.
A bf16 output r' = bf16(r) adds |r' - r| <= 2**-8 |r| <= 2**-8 (|want| + E):

    |out - want| <= (1 + 2**-8) · E + 2**-8 · |want|          (bf16 output)

These hold for any summation order whose tree has depth <= K - 1 (pairwise
and split-K included) and assume no overflow or underflow. The seed's
tolerance 4·K·FLT_EPSILON = 8·K·u is about 8 times gamma_K.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["U32", "U_BF16", "U_F16", "gamma", "tight_bound"]

U32 = 2.0**-24
U_BF16 = 2.0**-8
U_F16 = 2.0**-11


def gamma(n: int, u: float = U32) -> float:
    """``gamma_n = n·u / (1 - n·u)``.

    Raises:
        ValueError: when n·u >= 1 (no bound).
    """
    if n * u >= 1:
        raise ValueError(f"gamma_{n} undefined for u={u}: n*u >= 1")
    return n * u / (1 - n * u)


def tight_bound(
    abs_sum: npt.NDArray[np.float64],
    want: npt.NDArray[np.float64],
    alpha: Any,
    k: int,
    *,
    bf16_output: bool,
    two_scalar: bool = False,
    output_u: float | None = None,
) -> npt.NDArray[np.float64]:
    """The bound above, elementwise, for K products (``output_u``: a narrower output's u)."""
    g = gamma(k + 2) / (1 - U32) if two_scalar else gamma(k)
    e: npt.NDArray[np.float64] = g * np.abs(alpha) * abs_sum
    u = U_BF16 if bf16_output else output_u
    if u:
        e = (1 + u) * e + u * np.abs(want)
    return e
