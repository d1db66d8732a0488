"""The integer array twin of the exact float32 arithmetic, against its scalar twin and the CPU.

Operands: every pair of special values, a seeded draw of bit patterns over
every exponent, and designed ones: products with exactly one bit below
float32's precision (an odd significand times 3, all ties), quotients that
land in the subnormals (ties there too), and operands at the overflow edge.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
import pytest

from fp8lab.refs import float32_exact_ndarray as nd
from fp8lab.refs.float32_exact import f32_div, f32_mul
from fp8lab.refs.float32_exact_ndarray import f32_div_ndarray, f32_mul_ndarray, scale_rows

_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 448.0, 0.5, 3.0]
_SPECIALS += [2.0**-149, -(2.0**-149), 3 * 2.0**-149, 2.0**-126, 2.0**-127, 2.0**127]
_SPECIALS += [3.4028234663852886e38, 1.7014118346046923e38, 2.0**-20, 2.0**20]


def _operands() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    rng = np.random.default_rng(20261206)
    f32 = np.float32
    pairs = np.array(list(itertools.product(_SPECIALS, _SPECIALS)), f32)
    drawn = rng.integers(0, 1 << 32, (3000, 2), dtype=np.uint64).astype(np.uint32).view(f32)
    odd = (rng.integers(1 << 22, 1 << 23, 1000) * 2 + 1).astype(np.float64)
    ties = np.stack([np.ldexp(odd, rng.integers(-60, 60, 1000)), np.full(1000, 3.0)], 1)
    subnormal = rng.integers(1, 1 << 23, 1000).astype(np.uint32).view(f32)
    halves = np.stack([subnormal, np.ldexp(f32(1), rng.integers(1, 8, 1000)).astype(f32)], 1)
    top = 3.4028234663852886e38
    edge = np.stack([np.full(200, top), 1 + np.ldexp(rng.integers(1, 64, 200), -23)], 1)
    parts = [pairs, drawn, ties.astype(f32), halves, edge.astype(f32), edge[:, ::-1].astype(f32)]
    both = np.concatenate(parts)
    return np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])


def _bits(x: npt.NDArray[np.float32]) -> npt.NDArray[np.uint32]:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


@pytest.mark.parametrize(
    ("array", "scalar", "op"),
    [(f32_mul_ndarray, f32_mul, np.multiply), (f32_div_ndarray, f32_div, np.divide)],
    ids=["mul", "div"],
)
def test_the_array_twin_equals_the_scalar_twin_and_the_cpu(array, scalar, op) -> None:  # type: ignore[no-untyped-def]
    a, b = _operands()
    got = array(a, b)
    want = np.array([scalar(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)], np.float32)
    assert np.array_equal(_bits(got), _bits(want))  # NaN included: both give 0x7FC00000
    with np.errstate(all="ignore"):
        cpu = op(a, b)
    number = ~np.isnan(cpu)
    assert np.array_equal(_bits(got)[number], _bits(cpu)[number])
    assert np.array_equal(np.isnan(got), np.isnan(cpu))


def test_the_operands_hold_ties_a_planted_rounding_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ties away from zero in place of ties to even: the designed ties see it."""
    a, b = _operands()
    good = (f32_mul_ndarray(a, b), f32_div_ndarray(a, b))

    def away(m: npt.NDArray[np.int64], e: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        top = nd._bit_length(m) - 1 + e
        quantum = np.maximum(top, -126) - 23
        shift = np.clip(quantum - e, 0, 62)
        half = np.where(shift > 0, np.left_shift(1, np.maximum(shift - 1, 0)), 1 << 62)
        kept = (m + np.where(shift > 0, half, 0)) >> shift
        value = np.ldexp(kept.astype(np.float64), np.maximum(quantum, e).astype(np.int32))
        return np.where(value >= 2.0**128, np.inf, value)

    monkeypatch.setattr(nd, "_rounded", away)
    planted = (f32_mul_ndarray(a, b), f32_div_ndarray(a, b))
    changed = [int(np.sum(_bits(g) != _bits(p))) for g, p in zip(good, planted, strict=True)]
    assert changed[0] >= 100 and changed[1] >= 40, changed  # 163 and 72 ties that go the other way


def test_rows_scale_alike_by_either_method() -> None:
    rng = np.random.default_rng(5)
    rows = (rng.standard_normal((6, 40)) * 1e3).astype(np.float32)
    rows[0, :3] = [np.nan, np.inf, -0.0]
    by = np.array([0.0, np.inf, 3.0, 1e-40, 7.0, np.nan], np.float32)
    for divide in (False, True):
        array = scale_rows(rows, by, divide=divide, method="array")
        scalar = scale_rows(rows, by, divide=divide, method="scalar")
        assert np.array_equal(_bits(array), _bits(scalar))
    with pytest.raises(ValueError, match="unknown method"):
        scale_rows(rows, by, divide=False, method="fast")
