"""The FPRev probe of a MatmulKernel on e4m3fn codes, and the e4m3fn products it sums."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fp8lab.kernels.matmul_protocol import MatmulKernel
from fp8lab.order.probe_common import ProbeError, Row, batches, bits, check_pairs, count_units
from fp8lab.runtime.guard import call_kernel
from fp8lab.specs.formats import FORMATS

__all__ = ["FP8_SAFE_K", "FP8_UNIT_EXP", "Fp8MatmulProbe", "e4m3_products"]

FP8_UNIT_EXP = -18
FP8_SAFE_K = 2050  # units absorbed while u * 2**-18 <= 2**-7 = half an ulp of 448**2


@dataclass
class Fp8MatmulProbe:
    """Probe a MatmulKernel on e4m3fn codes (scales 1, f32 output) at ``position``."""

    kernel: MatmulKernel
    k: int
    m: int = 1
    n: int = 16
    position: tuple[int, int] = (0, 0)
    batch: bool = False
    calls: int = 0
    queries: int = 0
    kind: str = "fp8_matmul"
    high_exp: int = 16
    low_exp: int = -14
    out: str = "f32"
    _codes: tuple[int, int, int] = field(default=(0, 0, 0), repr=False)

    def __post_init__(self) -> None:
        fmt = FORMATS["e4m3fn"]
        if self.out not in ("f32", "bf16", "f16"):
            raise ValueError(f"out {self.out!r}: one of f32, bf16, f16")
        # mask = max finite, -mask, unit = smallest subnormal (code 1: 2**-9)
        self._codes = (fmt.max_code, fmt.sign_bit | fmt.max_code, 1)
        if self.out == "f16":  # 448**2 is past float16's largest; the grid sizes its probes
            self.high_exp = 14

    def lca_sizes(self, i: int, js: Sequence[int]) -> list[int]:
        """One call per j, or per min(M, N) of them with ``batch``.

        With ``batch``, row r of A and row r of B both carry question r, and
        output (r, r) answers it: it assumes every diagonal output sums in
        the same order (true of fp8lab's models).
        """
        return self.pair_sizes([(i, j) for j in js])

    def pair_sizes(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """L(i, j) for each pair, batched as :meth:`lca_sizes`."""
        check_pairs(self.k, pairs)
        if self.out != "f32":
            raise ValueError("a narrow output is probed by the grid (fp8lab.order.grid)")
        mask, neg, unit = self._codes
        out: list[int] = []
        for group in batches(pairs, min(self.m, self.n) if self.batch else 1):
            a = np.full((self.m, self.k), unit, np.uint8)
            b = np.full((self.n, self.k), unit, np.uint8)
            cells = [(r, r) for r in range(len(group))] if self.batch else [self.position]
            for (r, c), (i, j) in zip(cells, group, strict=True):
                a[r, i], a[r, j] = mask, neg
                b[c, i], b[c, j] = mask, mask
            self.calls += 1
            self.queries += len(group)
            got = np.asarray(call_kernel(self.kernel.matmul, a, b, 1.0, 1.0, "f32"))
            if got.shape != (self.m, self.n):
                raise ProbeError(f"want a [{self.m},{self.n}] output, got shape {got.shape}")
            unit_value = 2.0**FP8_UNIT_EXP
            out.extend(
                count_units(got[cell], unit_value, self.k, i, j)
                for cell, (i, j) in zip(cells, group, strict=True)
            )
        return out

    def sums(self, rows: Sequence[Row]) -> list[int]:
        """Each value a product of two e4m3fn codes; batched on the diagonal like ``lca_sizes``."""
        table = e4m3_products()
        out: list[int] = []
        for group in batches(rows, min(self.m, self.n) if self.batch else 1):
            a = np.zeros((self.m, self.k), np.uint8)
            b = np.zeros((self.n, self.k), np.uint8)
            cells = [(r, r) for r in range(len(group))] if self.batch else [self.position]
            for (r, c), row in zip(cells, group, strict=True):
                for pos, v in row.items():
                    if v not in table or not 0 <= pos < self.k:
                        raise ValueError(f"summand {pos}: {v!r} is no e4m3fn product")
                    a[r, pos], b[c, pos] = table[v]
            self.calls += 1
            self.queries += len(group)
            got = np.asarray(call_kernel(self.kernel.matmul, a, b, 1.0, 1.0, self.out))
            if got.shape != (self.m, self.n):
                raise ProbeError(f"want a [{self.m},{self.n}] output, got shape {got.shape}")
            out.extend(bits(got.astype(np.float32)[cell]) for cell in cells)
        return out


_PRODUCTS: dict[float, tuple[int, int]] = {}


def e4m3_products() -> dict[float, tuple[int, int]]:
    """Positive products of two finite e4m3fn codes -> one pair of codes giving it (exact)."""
    if not _PRODUCTS:
        fmt = FORMATS["e4m3fn"]
        vals = {c: float(fmt.exact_value(c)) for c in range(1, fmt.max_code + 1)}
        for ca, va in vals.items():
            for cb, vb in vals.items():
                _PRODUCTS.setdefault(va * vb, (ca, cb))
    return _PRODUCTS
