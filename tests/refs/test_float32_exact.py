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
from fractions import Fraction

import numpy as np
import pytest

from fp8lab.refs.float32_exact import (
    bits_of,
    f32_div,
    f32_mul,
    f64_div,
    f64_mul,
    from_bits,
    round_bf16,
    round_f32,
)

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
    wrong: list[tuple[float, ...]] = []
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


def _round_by_fractions(value: Fraction, negative: bool) -> float:
    """The rounding as first written, all in ``Fraction``: the integer rounding's twin."""
    sign = -1.0 if negative else 1.0
    if value == 0:
        return math.copysign(0.0, sign)
    if value >= Fraction(2) ** 128 - Fraction(2) ** 103:
        return sign * math.inf
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    quantum = Fraction(2) ** (max(e, -126) - 23)
    q = value / quantum
    n = q.numerator // q.denominator
    rest = q - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return sign * float(n * quantum)


def _magnitudes() -> list[Fraction]:
    """Every float32 binade's edges, midpoints and their neighbours, plus seeded ratios."""
    rng = np.random.default_rng(20261207)
    found = [Fraction(0), Fraction(2) ** 128 - Fraction(2) ** 103, Fraction(2) ** 128]
    for e in range(-152, 129):
        for m in (0, 1, (1 << 22) - 1, 1 << 22, (1 << 23) - 1):
            base = Fraction(2) ** e * (1 + Fraction(m, 1 << 23))
            half = Fraction(2) ** (max(e, -126) - 24)  # half the quantum at this binade
            found += [base, base + half, base - half, base + half / 3, base - half / 7]
    for p, q in rng.integers(1, 1 << 62, (4000, 2), dtype=np.int64).tolist():
        found.append(Fraction(p, q) * Fraction(2) ** int(rng.integers(-160, 130)))
    return [v for v in found if v >= 0]


def test_the_integer_rounding_equals_its_fraction_twin() -> None:
    for value in _magnitudes():
        for negative in (False, True):
            got, want = round_f32(value, negative), _round_by_fractions(value, negative)
            assert _same(got, want), (value, negative, got, want)


def test_a_planted_tie_to_odd_goes_red() -> None:
    """Round half up instead of to even: caught on the designed midpoints."""

    def half_up(value: Fraction, negative: bool) -> float:
        nudged = value + Fraction(2) ** -300 if value else value
        return _round_by_fractions(nudged, negative)

    wrong = [v for v in _magnitudes() if not _same(round_f32(v, False), half_up(v, False))]
    assert len(wrong) >= 100


def _bf16_by_fractions(v: float) -> float:
    """bfloat16 rounding as first written, in ``Fraction``: the integer rounding's twin."""
    if not math.isfinite(v) or v == 0:
        return v
    step = Fraction(2) ** (max(math.floor(math.log2(abs(v))), -126) - 7)
    while step * 2**7 > abs(Fraction(v)) and step > Fraction(2) ** -133:
        step /= 2  # log2 of a float can round up at a binade's top
    while step * 2**8 <= abs(Fraction(v)):
        step *= 2
    r = round(Fraction(v) / step) * step  # round() on a Fraction: ties to even
    if abs(r) >= Fraction(2) ** 128:
        return math.copysign(math.inf, v)
    return math.copysign(float(r), v)


def _float32_probes() -> list[float]:
    """Every float32 binade's edges and bfloat16 midpoints with neighbours, specials, a draw."""
    rng = np.random.default_rng(20261207)
    bits = [int(b) for b in rng.integers(0, 1 << 32, 20000, dtype=np.uint64)]
    for e in range(0, 255):
        for m in (0, 1, 0x7F, 0x80, 0x81, 0x17F, 0x180, 0x181, 0x7FFF7F, 0x7FFF80, 0x7FFFFF):
            bits += [(e << 23) | m, (1 << 31) | (e << 23) | m]
    return [from_bits(b) for b in bits] + [math.inf, -math.inf, 0.0, -0.0]


def test_bf16_equals_its_fraction_twin_and_ml_dtypes() -> None:
    import ml_dtypes

    for v in _float32_probes():
        if math.isnan(v):
            continue
        got = round_bf16(v)
        assert _same(got, _bf16_by_fractions(v)), v
        assert _same(got, float(np.float32(v).astype(ml_dtypes.bfloat16))), v


def test_a_planted_truncation_to_bf16_goes_red() -> None:
    def truncated(v: float) -> float:
        return from_bits(bits_of(v) & 0xFFFF0000)

    wrong = [v for v in _float32_probes() if math.isfinite(v) and round_bf16(v) != truncated(v)]
    assert len(wrong) >= 1000
