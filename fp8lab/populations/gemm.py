"""G3 cases and their operands (G3).

A is x ~ uniform[-2, 2) in float32, quantized by the kernel under test's
static quant with ``s_in``; B is uniform random bytes in which the two NaN
codes are remapped to the largest finite code of the same sign (0x7F ->
0x7E = +448, 0xFF -> 0xFE = -448), so ±448 is twice as likely as any other
code. Each case draws from ``np.random.default_rng(seed)``: x first, then B.
The quant is foreign code: it is called through :func:`fp8lab.runtime.guard.call_kernel`
and its codes are copied into an array of our own.

Where a declaration says so (:func:`declared_cases`) a case hands one scale
per row of A and per column of the output (rowwise, as torch, vLLM and
FBGEMM ship fp8 GEMMs): each drawn after B as ``s·2**u``, u uniform in
[-1, 1), and A's row r quantized with its own scale; a float16 output; and
K and N of any size (one case of 5x13x1000).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels import quant_static
from fp8lab.runtime.guard import call_kernel
from fp8lab.specs.gemm_decl import GemmDeclaration

__all__ = [
    "LARGER_CASES",
    "LARGE_CASES",
    "ODD_CASE",
    "SEED_CASES",
    "G3Case",
    "declared_cases",
    "g3_operands",
    "g3_scales",
    "remap_nan_bytes",
]

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
    a_scale: str = "tensor"  # or "row": one scale per row of A
    b_scale: str = "tensor"  # or "column": one per column of the output

    @property
    def name(self) -> str:
        """``MxNxK/out/seed`` (``/rowwise`` with vector scales)."""
        vectors = (self.a_scale, self.b_scale) != ("tensor", "tensor")
        return f"{self.m}x{self.n}x{self.k}/{self.out}/seed{self.seed}" + "/rowwise" * vectors


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
ODD_CASE = G3Case(5, 13, 1000, 205, 0.035, 0.017, "f32")  # K and N no multiple of anything
INFERRED_SEED = 401  # the first seed of the cases at a declaration's inferred shapes


def declared_cases(
    decl: GemmDeclaration, cases: tuple[G3Case, ...], *, odd: bool = False
) -> tuple[G3Case, ...]:
    """``cases`` as ``decl`` takes them: its shapes, out dtypes, scales and multiples.

    A declaration with inferred classes gets one case per shape and out dtype
    it takes (seeds from 401); otherwise each case keeps its shape where K and
    N are the declared multiples, an out dtype the kernel does not take
    becomes its first, and ``odd`` adds :data:`ODD_CASE` for a kernel of any
    K and N. ``scales = none`` hands 1 and 1.
    """
    if decl.shapes:
        chosen = tuple(
            G3Case(m, n, k, INFERRED_SEED + i, 0.035, 0.017, out)
            for i, (m, n, k) in enumerate(decl.shapes)
            for out in decl.outputs
        )
    else:
        extra = (ODD_CASE,) if odd and decl.k_multiple == decl.n_multiple == 1 else ()
        chosen = tuple(
            replace(c, out=c.out if c.out in decl.outputs else decl.outputs[0])
            for c in (*cases, *extra)
            if c.k % decl.k_multiple == 0 and c.n % decl.n_multiple == 0
        )
    if decl.scales == "none":
        chosen = tuple(replace(c, s_in=1.0, s_w=1.0) for c in chosen)
    return tuple(replace(c, a_scale=decl.a_scale, b_scale=decl.b_scale) for c in chosen)


def g3_scales(case: G3Case) -> tuple[Any, Any]:
    """The case's scales as float32: one each, or one per row of A and per column of B."""
    rng = np.random.default_rng([case.seed, 1])  # apart from the operands' stream
    s_a: Any = np.float32(case.s_in)
    s_b: Any = np.float32(case.s_w)
    if case.a_scale == "row":
        s_a = (case.s_in * 2.0 ** rng.uniform(-1.0, 1.0, case.m)).astype(np.float32)
    if case.b_scale == "column":
        s_b = (case.s_w * 2.0 ** rng.uniform(-1.0, 1.0, case.n)).astype(np.float32)
    return s_a, s_b


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
    s_a = g3_scales(case)[0]
    if np.ndim(s_a):  # one scale per row: each row quantized with its own
        rows = [call_kernel(quant, x[r : r + 1], s_a[r]) for r in range(case.m)]
        shapes_ok = all(isinstance(r, np.ndarray) and r.shape == (1, case.k) for r in rows)
        got = np.concatenate(rows) if shapes_ok else rows[0]
    else:
        got = call_kernel(quant, x, case.s_in)
    if not isinstance(got, np.ndarray) or got.dtype != np.uint8 or got.shape != x.shape:
        kind = f"{got.dtype}{got.shape}" if isinstance(got, np.ndarray) else type(got).__name__
        raise ValueError(f"quant returned {kind}, want uint8{x.shape}")
    return np.array(got, np.uint8, copy=True), remap_nan_bytes(b)
