"""FPRev probes: one kernel call answers "how many leaves sit under the node joining i and j".

Summand i is a huge positive mask, summand j the same mask negated, every
other summand one unit. A partial sum holding exactly one mask is that mask
(every unit added to it is absorbed), the node joining i and j cancels to 0,
and every later add is exact, so the output counts the units outside the
subtree joining i and j: ``L(i, j) = K - count`` (FPRev
§3.1). Three probes:

* :class:`SumProbe`, a summation ``f(x: float32[K]) -> float32``: masks
  ±2**127, units 1. Exact for K < 2**24.
* :class:`F32MatmulProbe`, ``g(A: float32[M,K], B: float32[N,K]) -> [M,N]``
  (A·Bᵀ): the same masks in every row of A, B all ones; one output read.
* :class:`Fp8MatmulProbe`, a :class:`~fp8lab.kernels.matmul_protocol.MatmulKernel` on
  e4m3fn codes: products are exact in float32, masks ±448·448 (≈ 2**17.6),
  units 2**-9·2**-9 = 2**-18, scales 1 and an f32 output (the epilogue is
  then exact). One unit is far below half an ulp of the mask (2**-7), but a
  partial of u units is absorbed only while u·2**-18 <= 2**-7, i.e. u <= 2048
  (a tie rounds to the mask, whose last bit is 0). So this probe is exact for
  K <= 2050, and beyond only for trees that never add a partial of more
  than 2048 units to a partial holding one mask (sequential chains; pairwise
  up to K = 4096; split-K with a sequential reduction and chunks <= 2048);
  the count it reads is checked to be an integer in [0, K-2] either way.

Every call goes through :func:`fp8lab.runtime.guard.call_kernel`; a count that is
not an integer in range raises :class:`ProbeError`.

Each probe also answers ``sums(rows)``: the output bits of summand vectors
that are zero except at a few positions (``{position: value}``), for the
fused-node sibling test (:mod:`fp8lab.order.siblings`). ``high_exp``
is the exponent of the large value that test uses (2**100 in float32; the
product 2**8·2**8 on e4m3fn codes), ``low_exp`` the lowest exponent of its
small value (60; -14, where 0.75·2**-14 is still an e4m3fn product).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fp8lab.order.fp8_probe import FP8_SAFE_K, FP8_UNIT_EXP, Fp8MatmulProbe, e4m3_products
from fp8lab.order.probe_common import (
    LcaProbe,
    ProbeError,
    Row,
    batches,
    bits,
    check_pairs,
    count_units,
    f32_row,
)
from fp8lab.runtime.guard import call_kernel

__all__ = [
    "F32MatmulProbe",
    "FP8_SAFE_K",
    "FP8_UNIT_EXP",
    "MASK_F32",
    "Fp8MatmulProbe",
    "LcaProbe",
    "ProbeError",
    "Row",
    "SumProbe",
    "e4m3_products",
    "f32_row",
]

MASK_F32 = np.float32(2.0**127)


@dataclass
class SumProbe:
    """Probe a summation callable ``f(x: float32[K]) -> float32``."""

    func: Callable[[np.ndarray], Any]
    k: int
    calls: int = 0
    queries: int = 0
    kind: str = "sum"
    high_exp: int = 100
    low_exp: int = 60

    def lca_sizes(self, i: int, js: Sequence[int]) -> list[int]:
        """One call of ``func`` per j."""
        return self.pair_sizes([(i, j) for j in js])

    def pair_sizes(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """L(i, j) for each pair, one call each."""
        check_pairs(self.k, pairs)
        out = []
        for i, j in pairs:
            x = np.ones(self.k, np.float32)
            x[i], x[j] = MASK_F32, -MASK_F32
            self.calls += 1
            self.queries += 1
            got = np.asarray(call_kernel(self.func, x)).reshape(())
            out.append(count_units(got, 1.0, self.k, i, j))
        return out

    def sums(self, rows: Sequence[Row]) -> list[int]:
        """One call per row; the float32 output's bits."""
        out = []
        for row in rows:
            self.calls += 1
            self.queries += 1
            out.append(bits(call_kernel(self.func, f32_row(self.k, row))))
        return out


@dataclass
class F32MatmulProbe:
    """Probe ``g(A [M,K], B [N,K]) -> A·Bᵀ`` in float32 at output ``position``.

    ``batch=True`` asks M questions per call, one per row of A, reading
    column ``position[1]`` of every row: it assumes every row sums in the
    same order (true of fp8lab's models; check a foreign kernel without it).
    """

    func: Callable[[np.ndarray, np.ndarray], Any]
    k: int
    m: int = 1
    n: int = 1
    position: tuple[int, int] = (0, 0)
    batch: bool = False
    calls: int = 0
    queries: int = 0
    kind: str = "f32_matmul"
    high_exp: int = 100
    low_exp: int = 60
    out: str = "f32"

    def __post_init__(self) -> None:
        if self.out not in ("f32", "bf16", "f16"):
            raise ValueError(f"out {self.out!r}: one of f32, bf16, f16")
        if self.out == "f16":  # the sibling test's values must be float16 values
            self.high_exp, self.low_exp = 14, -10

    def lca_sizes(self, i: int, js: Sequence[int]) -> list[int]:
        """One call per j, or per M of them with ``batch``."""
        return self.pair_sizes([(i, j) for j in js])

    def pair_sizes(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """L(i, j) for each pair: one call each, or per M of them with ``batch``."""
        check_pairs(self.k, pairs)
        if self.out != "f32":
            raise ValueError("a narrow output is probed by the grid (fp8lab.order.grid)")
        out: list[int] = []
        for group in batches(pairs, self.m if self.batch else 1):
            a = np.ones((self.m, self.k), np.float32)
            b = np.ones((self.n, self.k), np.float32)
            rows = list(range(len(group))) if self.batch else [self.position[0]]
            for r, (i, j) in zip(rows, group, strict=True):
                a[r, i], a[r, j] = MASK_F32, -MASK_F32
            self.calls += 1
            self.queries += len(group)
            got = np.asarray(call_kernel(self.func, a, b))
            if got.shape != (self.m, self.n):
                raise ProbeError(f"want a [{self.m},{self.n}] output, got shape {got.shape}")
            col = self.position[1]
            out.extend(
                count_units(got[r, col], 1.0, self.k, i, j)
                for r, (i, j) in zip(rows, group, strict=True)
            )
        return out

    def sums(self, rows: Sequence[Row]) -> list[int]:
        """Row r of A carries vector r (B all ones); one call per M rows with ``batch``."""
        out: list[int] = []
        for group in batches(rows, self.m if self.batch else 1):
            a = np.zeros((self.m, self.k), np.float32)
            at = list(range(len(group))) if self.batch else [self.position[0]]
            for r, row in zip(at, group, strict=True):
                a[r] = f32_row(self.k, row)
            self.calls += 1
            self.queries += len(group)
            got = np.asarray(call_kernel(self.func, a, np.ones((self.n, self.k), np.float32)))
            if got.shape != (self.m, self.n):
                raise ProbeError(f"want a [{self.m},{self.n}] output, got shape {got.shape}")
            out.extend(bits(got[r, self.position[1]]) for r in at)
        return out
