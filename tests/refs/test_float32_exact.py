"""The exact float32/float64 arithmetic of the references against the hardware's IEEE arithmetic.

numpy's float32 and float64 operations (one IEEE 754 rounding each, on this
CPU) are the oracle here, in the test only: the references never call them.
Operands: the special values crossed with each other, and a seeded draw of
bit patterns over every exponent (normals, subnormals, near overflow).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest

from fp8lab.refs.float32_exact import f32_div, f32_mul, f64_div, f64_mul, from_bits

SPECIALS = [
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    1.0,
    -1.0,
    448.0,
    2.0**-149,
    3.4028234663852886e38,
]


def _operands() -> list[tuple[float, float]]:
    rng = np.random.default_rng(20261204)
    drawn = [from_bits(int(b)) for b in rng.integers(0, 1 << 32, 400, dtype=np.uint64)]
    finite = [x for x in drawn if math.isfinite(x)]
    pairs = list(itertools.product(SPECIALS, SPECIALS))
    return pairs + list(zip(finite[::2], finite[1::2], strict=False)) + [(x, 3.0) for x in finite]


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


Exact = Callable[[float, float], float]


def _wrong(exact: Exact, dtype: type[np.floating], op: np.ufunc) -> list[tuple[float, ...]]:
    """Each operand pair where ``exact`` differs from ``op`` in ``dtype``."""
    wrong = []
    with np.errstate(all="ignore"):
        for a, b in _operands():
            want, got = float(op(dtype(a), dtype(b))), exact(a, b)
            if not _same(got, want):
                wrong.append((a, b, got, want))
    return wrong


@pytest.mark.parametrize(
    ("exact", "dtype", "op"),
    [
        (f32_mul, np.float32, np.multiply),
        (f32_div, np.float32, np.divide),
        (f64_mul, np.float64, np.multiply),
        (f64_div, np.float64, np.divide),
    ],
)
def test_one_rounding_equals_the_hardwares(
    exact: Exact, dtype: type[np.floating], op: np.ufunc
) -> None:
    assert _wrong(exact, dtype, op) == []


def test_a_planted_reciprocal_for_a_divide_goes_red() -> None:
    """``a * (1/b)`` for ``a / b``: the defect fp8lab exists to find, seen with margin."""
    wrong = _wrong(lambda a, b: f32_mul(a, f32_div(1.0, b)), np.float32, np.divide)
    assert len(wrong) >= 20
