"""Slow twins of the accumulator models: pure-Python loops of float32 scalars.

Each function has its vectorised twin's signature and order of operations,
written element by element: ``np.float32`` scalar arithmetic rounds every
operation to float32 (IEEE 754 binary32, RNE); the FMA twin forms a*b + c
exactly with ``fractions.Fraction`` and rounds it once.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

__all__ = [
    "SCALAR_MODELS",
    "fast_accum_scalar",
    "pairwise_scalar",
    "round_fraction_f32",
    "sequential_fma_scalar",
    "sequential_scalar",
    "split_k_scalar",
]

F32 = npt.NDArray[np.float32]


def _grid(a: np.ndarray, b: np.ndarray) -> tuple[list[list[np.float32]], list[list[np.float32]]]:
    to = [[np.float32(v) for v in row] for row in np.asarray(a, np.float32)]
    tb = [[np.float32(v) for v in row] for row in np.asarray(b, np.float32)]
    return to, tb


def _matrix(rows: list[list[np.float32]]) -> F32:
    return np.array(rows, np.float32).reshape(len(rows), -1)


def _seq(x: list[np.float32], y: list[np.float32]) -> np.float32:
    acc = np.float32(0.0)
    for p, q in zip(x, y, strict=True):
        acc = np.float32(acc + np.float32(p * q))
    return acc


def sequential_scalar(a: F32, b: F32) -> F32:
    """Twin of ``models.sequential``."""
    ta, tb = _grid(a, b)
    return _matrix([[_seq(r, c) for c in tb] for r in ta])


def round_fraction_f32(q: Fraction) -> np.float32:
    """The float32 nearest ``q``, ties to even (no overflow; +0 for zero)."""
    if q == 0:
        return np.float32(0.0)
    mag = abs(q)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1  # now 2**e <= mag < 2**(e+1)
    ulp = Fraction(2) ** max(e - 23, -149)
    value = round(mag / ulp) * ulp  # Fraction.__round__ is half-to-even
    return np.float32(math.copysign(float(value), q))


def sequential_fma_scalar(a: F32, b: F32) -> F32:
    """Twin of ``models.sequential_fma``: fmaf(a, b, acc) as exact then one rounding."""
    ta, tb = _grid(a, b)

    def one(x: list[np.float32], y: list[np.float32]) -> np.float32:
        acc = np.float32(0.0)
        for p, q in zip(x, y, strict=True):
            exact = Fraction(float(p)) * Fraction(float(q)) + Fraction(float(acc))
            acc = round_fraction_f32(exact)
        return acc

    return _matrix([[one(r, c) for c in tb] for r in ta])


def _tree(terms: list[np.float32]) -> np.float32:
    while len(terms) > 1:
        nxt = [np.float32(terms[i] + terms[i + 1]) for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms = nxt
    return terms[0]


def pairwise_scalar(a: F32, b: F32) -> F32:
    """Twin of ``models.pairwise``."""
    ta, tb = _grid(a, b)
    return _matrix(
        [[_tree([np.float32(p * q) for p, q in zip(r, c, strict=True)]) for c in tb] for r in ta]
    )


def split_k_scalar(a: F32, b: F32, *, block: int = 128) -> F32:
    """Twin of ``models.split_k``."""
    ta, tb = _grid(a, b)

    def one(x: list[np.float32], y: list[np.float32]) -> np.float32:
        acc = np.float32(0.0)
        for s in range(0, len(x), block):
            acc = np.float32(acc + _seq(x[s : s + block], y[s : s + block]))
        return acc

    return _matrix([[one(r, c) for c in tb] for r in ta])


def _round_bits(x: float, bits: int, rounding: str) -> float:
    if x == 0.0:
        return 0.0
    frac, exp = math.frexp(x)
    scaled = math.ldexp(frac, bits + 1)
    q = math.trunc(scaled) if rounding == "truncate" else round(scaled)
    return math.ldexp(float(q), exp - bits - 1)


def fast_accum_scalar(
    a: F32,
    b: F32,
    *,
    mantissa_bits: int = 13,
    rounding: str = "truncate",
    interval: int | None = 128,
) -> F32:
    """Twin of ``models.fast_accum`` (same assumptions)."""
    ta, tb = _grid(a, b)

    def one(x: list[np.float32], y: list[np.float32]) -> np.float32:
        step = len(x) if interval is None else interval
        acc = np.float32(0.0)
        for s in range(0, len(x), step):
            part = 0.0
            for p, q in zip(x[s : s + step], y[s : s + step], strict=True):
                part = _round_bits(part + float(np.float32(p * q)), mantissa_bits, rounding)
            acc = np.float32(acc + np.float32(part))
        return acc

    return _matrix([[one(r, c) for c in tb] for r in ta])


SCALAR_MODELS = {
    "sequential": sequential_scalar,
    "sequential_fma": sequential_fma_scalar,
    "pairwise": pairwise_scalar,
    "split_k": split_k_scalar,
    "fast_accum": fast_accum_scalar,
}
