"""The exact reference is exact: against fractions.Fraction, on every path."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fp8lab.refs import gemm_exact as reference
from fp8lab.refs.gemm_exact import (
    EXACT_F64_MAX_K,
    FLT_EPSILON,
    exact_acc,
    exact_acc_units,
    seed_reference,
)
from fp8lab.specs.formats import FORMATS

E4M3 = FORMATS["e4m3fn"]
FINITE = np.array([c for c in range(256) if not E4M3.is_nan_code(c)], np.uint8)


def finite_codes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.choice(FINITE, size=shape)


def fraction_product(a: np.ndarray, b: np.ndarray) -> list[list[Fraction]]:
    table = {int(c): E4M3.exact_value(int(c)) for c in FINITE}
    return [
        [sum((table[int(x)] * table[int(y)] for x, y in zip(ra, rb, strict=True)), Fraction(0))
         for rb in b]
        for ra in a
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_float64_blas_is_exact_against_fractions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 300))
    a, b = finite_codes(rng, (3, k)), finite_codes(rng, (5, k))
    if seed == 0:  # the extremes: every product +-448*448 or the smallest subnormals
        a[:], b[:] = 0x7E, 0xFE
        a[1], b[1] = 0x01, 0x81
    want = fraction_product(a, b)
    got = exact_acc(a, b)
    units = exact_acc_units(a, b)
    for i in range(3):
        for j in range(5):
            assert Fraction(float(got[i, j])) == want[i][j]
            assert Fraction(int(units[i, j]), 2**18) == want[i][j]


def test_cancellation_is_exact() -> None:
    # 448*448 + (-448*448) + 2**-18: float32 or a careless order would lose the tail.
    a = np.array([[0x7E, 0x7E, 0x01]], np.uint8)
    b = np.array([[0x7E, 0xFE, 0x01]], np.uint8)
    assert exact_acc(a, b)[0, 0] == 2.0**-18


def test_integer_and_object_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    a, b = finite_codes(rng, (2, 64)), finite_codes(rng, (3, 64))
    want = exact_acc(a, b)
    monkeypatch.setattr(reference, "EXACT_F64_MAX_K", 16)
    assert np.array_equal(exact_acc(a, b), want)  # via int64 units
    monkeypatch.setattr(reference, "INT64_MAX_K", 16)
    units = exact_acc_units(a, b)
    assert units.dtype == object
    assert np.array_equal(np.ldexp(units.astype(np.float64), -18), want)


def test_beyond_the_float64_bound_the_integer_path_is_exact() -> None:
    k = EXACT_F64_MAX_K + 16
    a = np.full((1, k), 0x7E, np.uint8)  # 448 * 448 * k > 2**53 units: float64 would round
    b = np.full((1, k), 0x7E, np.uint8)
    b[0, -1] = 0x01  # plus 448 * 2**-9: a tail below float64's ulp at this size
    units = exact_acc_units(a, b)
    assert int(units[0, 0]) == (k - 1) * (448 * 448 * 2**18) + 448 * 2**9
    assert exact_acc(a, b)[0, 0] == float(Fraction(int(units[0, 0]), 2**18))


def test_nan_codes_and_bad_operands_are_refused() -> None:
    ok = np.zeros((2, 16), np.uint8)
    with pytest.raises(ValueError, match="NaN codes"):
        exact_acc(np.full((2, 16), 0x7F, np.uint8), ok)
    with pytest.raises(ValueError, match="rank-2 uint8"):
        exact_acc(ok.astype(np.int8), ok)
    with pytest.raises(ValueError, match="K differs"):
        exact_acc(ok, ok[:, :8])
    with pytest.raises(ValueError, match="out_dtype"):
        seed_reference(ok, ok, 1.0, 1.0, "f8")


def test_seed_reference_tolerance_formula() -> None:
    rng = np.random.default_rng(3)
    a, b = finite_codes(rng, (2, 32)), finite_codes(rng, (4, 32))
    f32 = seed_reference(a, b, 0.041, 0.0092, "f32")
    bf16 = seed_reference(a, b, 0.041, 0.0092, "bf16")
    alpha = float(np.float32(np.float32(0.041) * np.float32(0.0092)))
    assert f32.alpha == alpha
    assert np.array_equal(f32.want, alpha * exact_acc(a, b))
    assert np.array_equal(f32.tolerance, 4 * 32 * FLT_EPSILON * alpha * f32.abs_sum)
    assert np.array_equal(bf16.tolerance, f32.tolerance + 0.004 * np.abs(f32.want))
