"""G3 cases and their operands (G3).

A is x ~ uniform[-2, 2) in float32, quantized by the kernel under test's
static quant with ``s_in``; B is uniform random bytes in which the two NaN
codes are remapped to the largest finite code of the same sign (0x7F ->
0x7E = +448, 0xFF -> 0xFE = -448), so ±448 is twice as likely as any other
code. Each case draws from ``np.random.default_rng(seed)``: x first, then B.
The quant is foreign code: it is called through :func:`fp8lab.runtime.guard.call_kernel`
and its codes are copied into an array of our own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels import quant_static
from fp8lab.runtime.guard import call_kernel

__all__ = ["LARGE_CASES", "LARGER_CASES", "SEED_CASES", "G3Case", "g3_operands", "remap_nan_bytes"]

QuantFn = Callable[[np.ndarray, Any], npt.NDArray[np.uint8]]


@dataclass(frozen=True)
class G3Case:
    """One G3 product: shape, seed, scales and output dtype."""

    m: int
    n: int
    k: int
    seed: int
    s_in: float
    s_w: float
    out: str

    @property
    def name(self) -> str:
        """``MxNxK/out/seed``."""
        return f"{self.m}x{self.n}x{self.k}/{self.out}/seed{self.seed}"


SEED_CASES = (
    G3Case(1, 64, 128, 101, 0.035, 0.017, "f32"),
    G3Case(4, 32, 256, 102, 0.035, 0.017, "f32"),
    G3Case(8, 48, 128, 103, 0.041, 0.0092, "bf16"),
    G3Case(3, 16, 64, 104, 1.0, 1.0, "f32"),
)
LARGER_CASES = (
    G3Case(16, 64, 1024, 201, 0.035, 0.017, "f32"),
    G3Case(16, 64, 4096, 202, 0.041, 0.0092, "bf16"),
    G3Case(64, 128, 512, 203, 0.13, 0.77, "f32"),
    # M = 64 above and M = 65 here straddle vLLM's swap_ab cut (M <= 64), with
    # N on the other side of it, so an epilogue that picks its order by the
    # wrong bound or the wrong axis differs from its model in some output.
    G3Case(65, 48, 256, 204, 0.13, 0.77, "f32"),
)
LARGE_CASES = (
    G3Case(1024, 1024, 1024, 301, 0.035, 0.017, "f32"),
    G3Case(1024, 1024, 4096, 302, 0.035, 0.017, "bf16"),
)


def remap_nan_bytes(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """0x7F -> 0x7E and 0xFF -> 0xFE; every other byte unchanged (a copy)."""
    out = codes.copy()
    out[(out & 0x7F) == 0x7F] -= 1
    return out


def g3_operands(
    case: G3Case, quant: QuantFn = quant_static
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """A [M,K] and B [N,K] codes for ``case``, A quantized by ``quant``.

    Raises:
        KernelFaultError: if ``quant`` raised or exited.
        ValueError: if it returned something other than [M,K] uint8 codes.
    """
    rng = np.random.default_rng(case.seed)
    x = rng.uniform(-2.0, 2.0, (case.m, case.k)).astype(np.float32)
    b = rng.integers(0, 256, (case.n, case.k), dtype=np.uint8)
    got = call_kernel(quant, x, case.s_in)
    if not isinstance(got, np.ndarray) or got.dtype != np.uint8 or got.shape != x.shape:
        kind = f"{got.dtype}{got.shape}" if isinstance(got, np.ndarray) else type(got).__name__
        raise ValueError(f"quant returned {kind}, want uint8{x.shape}")
    return np.array(got, np.uint8, copy=True), remap_nan_bytes(b)
