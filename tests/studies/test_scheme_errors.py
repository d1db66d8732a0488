"""Dequantization and the error per scheme against the exact value."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.codecs import decode
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.specs.scale_rules import RULES, Granularity, Storage
from fp8lab.studies.scheme_errors import ERROR_K, dequantize, relative_errors, scheme_errors


def test_e8m0_scale_bytes_decode_with_their_traps() -> None:
    codes = np.full((1, 96), 0x38, np.uint8)  # 1.0 in e4m3fn
    scales = np.array([[0, 127, 255]], np.uint8)
    out = dequantize(codes, scales, "rceil")
    assert out[0, 0] == 2.0**-127 and out[0, 32] == 1.0 and np.isnan(out[0, 64:]).all()


@pytest.mark.parametrize("name", sorted(RULES))
def test_dequantize_broadcasts_each_scale_over_what_it_covers(name: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 256)) * 10.0 ** rng.integers(-3, 3, (4, 1))).astype(np.float32)
    codes, scales = scheme_quant(x, name)
    got = dequantize(codes, scales, name)
    rule = RULES[name]
    values = decode(codes, rule.element, np.float64)
    for i, j in [(0, 0), (1, 31), (2, 32), (3, 127), (3, 128), (2, 255)]:
        if rule.granularity is Granularity.TENSOR:
            s = scales[0]
        elif rule.granularity is Granularity.ROW:
            s = scales[i]
        else:
            s = scales[i, j // (rule.block or 1)]
        s = 2.0 ** (int(s) - 127) if rule.scale_format == "e8m0fnu" else float(s)
        multiplier = rule.storage is Storage.MULTIPLIER  # torchao's 448 / amax: divide by it
        assert got[i, j] == (values[i, j] / s if multiplier else values[i, j] * s)
    with pytest.raises(ValueError, match=r"\[M, K\]"):
        dequantize(codes.reshape(-1), scales, name)


def test_exactly_representable_blocks_have_zero_error() -> None:
    values = np.array([448.0, 1.0, -0.5, 2.0**-6, 3.5, -240.0, 0.0, 0.125] * 4, np.float32)
    x = np.tile(values * np.float32(2.0**-20), (2, 4))  # amax 448 * 2**-20: a power-of-two scale
    errors, flushed = relative_errors(x, "ocp-floor")
    assert errors.size == 2 * 4 * 28 and not errors.any() and not flushed.any()


def test_a_planted_scale_off_by_one_byte_shows_as_error() -> None:
    x = np.tile(np.array([448.0, 1.0, 3.5, 2.0] * 8, np.float32), (1, 4))
    codes, scales = scheme_quant(x, "ocp-floor")
    exact = dequantize(codes, scales, "ocp-floor")
    assert np.array_equal(exact, x.astype(np.float64))
    wrong = dequantize(codes, scales + np.uint8(1), "ocp-floor")
    assert np.array_equal(wrong, 2 * x.astype(np.float64))


def test_scheme_errors_per_rule() -> None:
    rows, errors = scheme_errors(seed=0)
    assert [r.rule for r in rows] == list(RULES) and set(errors) == set(RULES)
    assert all(r.words == 8 * ERROR_K == errors[r.rule].size for r in rows)
    by = {r.rule: r for r in rows}
    assert by["vllm-per-tensor"].flushed_to_zero > 8 * ERROR_K // 2
    assert by["vllm-per-group"].flushed_to_zero == 0 and by["rceil"].max < 0.5


def test_a_multiplier_scale_divides() -> None:
    rule = "torchao-0.18-float8-tensorwise"
    x = np.float32([[3.0, -1.5, 0.25, 100.0]])
    codes, scales = scheme_quant(x, rule)
    got = dequantize(codes, scales, rule)
    assert np.all(np.abs(got - x) <= 0.07 * np.abs(x))  # e4m3fn's half step, not 448 / amax off
