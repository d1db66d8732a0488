"""The exact rounding helpers and correctly rounded elementary functions.

Each correctly rounded result is proved against an independent algorithm:
``decimal`` at 60 digits (its ``sqrt`` and ``exp`` are correctly rounded in
that precision, General Decimal Arithmetic spec), whose error is far below the
distance from the true value to any float32 midpoint that the test checks it
keeps (a strict bracket with a margin).
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fp8lab.kernels.chain import exp_f64, rsqrt_f64
from fp8lab.refs.exact_float import (
    exp2_cr,
    exp_cr,
    f32_neighbours,
    round_f32_to_bf16,
    round_fraction_f32,
    rsqrt_cr,
)

CTX = decimal.Context(prec=60)
MARGIN = Fraction(1, 10**50)  # relative; decimal's error at 60 digits is below 1e-58


def _all_bf16() -> np.ndarray:
    v = np.arange(0x10000, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    return v[np.isfinite(v)]


def _bracketed(c: float, true: Fraction) -> bool:
    """``true`` lies strictly between the midpoints around float32 ``c``, with margin."""
    down, up = f32_neighbours(c)
    lo, hi = (Fraction(c) + Fraction(down)) / 2, (Fraction(c) + Fraction(up)) / 2
    slack = abs(true) * MARGIN
    return lo + slack < true < hi - slack


def test_round_fraction_matches_numpy_on_float64_values() -> None:
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**63, size=20000, dtype=np.uint64)
    vals = bits.view(np.float64)
    vals = vals[np.isfinite(vals) & (np.abs(vals) < 1e39) & (np.abs(vals) > 1e-47)]
    edges = [3.4028235677973366e38, 3.4028235677973362e38, 2.0**-150, 2.0**-150 * 1.5, 2.0**-149]
    for v in [*vals.tolist(), *edges, *(-e for e in edges)]:
        with np.errstate(over="ignore"):
            assert round_fraction_f32(Fraction(v)) == float(np.float32(v)), v


def test_bf16_rounding_matches_ml_dtypes() -> None:
    rng = np.random.default_rng(2)
    v = rng.integers(0, 2**32, size=200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    v = v[~np.isnan(v)]
    want = v.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(round_f32_to_bf16(v).view(np.uint32), want.view(np.uint32))
    assert np.isnan(round_f32_to_bf16(np.array([np.nan], np.float32))).all()


def test_rsqrt_is_correctly_rounded() -> None:
    rng = np.random.default_rng(3)
    rand = rng.integers(1, 0x7F800000, size=3000).astype(np.uint32).view(np.float32)
    bf = _all_bf16()
    samples = np.concatenate([bf[bf > 0][::7], rand])
    for m in samples.tolist():
        c = rsqrt_cr(m)
        true = Fraction(CTX.divide(1, CTX.sqrt(decimal.Decimal(m))))
        assert _bracketed(c, true), m
    assert rsqrt_cr(0.0) == math.inf and rsqrt_cr(math.inf) == 0.0 and math.isnan(rsqrt_cr(-1.0))


def _exp_true(x: float) -> Fraction:
    return Fraction(CTX.exp(decimal.Decimal(x)))


@pytest.mark.slow
def test_exp_is_correctly_rounded_on_every_bf16_input() -> None:
    checked = 0
    for x in _all_bf16().tolist():
        c = exp_cr(x)
        if x == 0 or not (-103.0 < x < 88.0):
            continue  # exact, or past the normal range (the shortcuts are tested below)
        assert _bracketed(c, _exp_true(x)), x
        checked += 1
    assert checked > 30000
    assert exp_cr(100.5) == math.inf and exp_cr(-121.0) == 0.0 and exp_cr(0.0) == 1.0


@pytest.mark.slow
def test_exp_and_exp2_on_random_float32() -> None:
    rng = np.random.default_rng(4)
    xs = rng.uniform(-100, 88, size=400).astype(np.float32).tolist()
    ln2 = CTX.ln(decimal.Decimal(2))
    for x in xs:
        assert _bracketed(exp_cr(x), _exp_true(x)), x
        if -125 < x < 127 and x != int(x):
            true2 = Fraction(CTX.exp(CTX.multiply(decimal.Decimal(x), ln2)))
            assert _bracketed(exp2_cr(x), true2), x
    assert exp2_cr(3.0) == 8.0 and exp2_cr(-149.0) == 2.0**-149 and exp2_cr(math.inf) == math.inf


@pytest.mark.slow
def test_the_ports_float64_exp_is_correctly_rounded_on_every_bf16_input() -> None:
    """The ports' ``exp_f64`` equals the exact reference wherever a bf16 gate reaches it."""
    x = _all_bf16()
    want = np.array([exp_cr(v) for v in x.tolist()], np.float32)
    with np.errstate(over="ignore"):
        assert np.array_equal(exp_f64(x).view(np.uint32), want.view(np.uint32))


def test_the_ports_float64_rsqrt_matches_on_random_float32() -> None:
    rng = np.random.default_rng(5)
    m = rng.integers(1, 0x7F800000, size=20000).astype(np.uint32).view(np.float32)
    want = np.array([rsqrt_cr(v) for v in m.tolist()], np.float32)
    assert np.array_equal(rsqrt_f64(m).view(np.uint32), want.view(np.uint32))
