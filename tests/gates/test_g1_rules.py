"""G1 under a static rule: the built-in rules' ports, kernels written from each rule's
behaviour, the layouts, the codes' format and the reference's arithmetic."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates.g1 import run_g1
from fp8lab.gates.records import GateStatus
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.kernels.static_rule import STATIC_PORTS
from fp8lab.populations import g1_population
from fp8lab.refs.float32_exact import f32_div, f32_mul
from fp8lab.refs.static_quant import reference_quant_static, reference_static_quant
from fp8lab.specs.nan import NAN_POLICIES
from fp8lab.specs.rule_axes import Apply, Arithmetic, ScaleSource
from fp8lab.specs.static_rules import DEFAULT_STATIC_RULE, STATIC_RULES

F32 = np.float32


class Divide:
    """ONNX QuantizeLinear as its spec states it, written with numpy: x / s in float32,
    clipped to the format's range when saturating, cast to nearest even (ml_dtypes)."""

    def __init__(self, fmt: Any = ml_dtypes.float8_e4m3fn, saturate: bool = True) -> None:
        self.fmt, self.saturate, self.name = fmt, saturate, "numpy-divide"

    def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
        s = np.asarray(scale, F32)
        if s.ndim == 1:  # per row
            s = s[:, None]
        elif s.ndim == 2:  # per block along the row
            s = np.repeat(s, x.shape[1] // s.shape[1], axis=1)
        with np.errstate(all="ignore"):
            q = x.astype(F32) / s
            if self.saturate:
                top = F32(ml_dtypes.finfo(self.fmt).max)
                q = np.clip(q, -top, top)
            return q.astype(self.fmt).view(np.uint8)


@pytest.mark.parametrize("name", list(STATIC_RULES))
def test_every_static_rules_port_passes_it(name: str) -> None:
    result = run_g1(STATIC_PORTS[name], rule=name)
    assert result.status is GateStatus.PASS, result.reason
    assert result.rule == name and result.cases == 14 and result.assertions_failed == 0


def test_the_default_rule_is_the_seeds_and_its_words_are_the_seeds() -> None:
    assert DEFAULT_STATIC_RULE == "vllm-cpp-static"
    rule = STATIC_RULES[DEFAULT_STATIC_RULE]
    for s in (1.0, 0.0092, 0.77):
        words = g1_population(s).words
        for x in (words, words.astype(ml_dtypes.bfloat16)):
            assert np.array_equal(
                reference_static_quant(x, F32(s), rule), reference_quant_static(x, s)
            )
    result = run_g1(BUILTIN_KERNELS["vllm_cpp"])
    assert result.rule == "vllm-cpp-static"
    assert (result.cases, result.assertions, result.words) == (14, 84, 60522)


def _bf16(v: float) -> float:
    """``v`` rounded to bfloat16 in Fractions (8 significant bits, ties to even)."""
    if v == 0 or not np.isfinite(v):
        return v
    e = Fraction(abs(v)).numerator.bit_length() - Fraction(abs(v)).denominator.bit_length()
    e = e - 1 if Fraction(2) ** e > abs(Fraction(v)) else e
    step = Fraction(2) ** (max(e, -126) - 7)
    return float(round(Fraction(v) / step) * step)


def test_the_reference_rounds_once_per_operation() -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(600) * 50).astype(F32)
    s = F32(0.0123)
    base = STATIC_RULES["onnx-quantizelinear-e4m3fn"]
    recip = dataclasses.replace(base, apply=Apply.RECIPROCAL)
    narrow = dataclasses.replace(base, arithmetic=Arithmetic.INPUT)
    xb = x.astype(ml_dtypes.bfloat16)
    exact_div = np.array([f32_div(float(v), float(s)) for v in x], F32)
    exact_rec = np.array([f32_mul(float(v), f32_div(1.0, float(s))) for v in x], F32)
    sb = _bf16(float(s))
    exact_narrow = np.array([_bf16(f32_div(float(v), sb)) for v in xb.astype(F32)], F32)
    unit = dataclasses.replace(base, name="unit")
    for rule, xs, exact in (
        (base, x, exact_div),
        (recip, x, exact_rec),
        (narrow, xb, exact_narrow),
    ):
        want = reference_static_quant(exact, F32(1), unit)
        assert np.array_equal(reference_static_quant(xs, s, rule), want), rule.name


def test_a_kernel_written_from_onnx_formula_passes_onnx_and_is_named_under_the_seed() -> None:
    assert run_g1(Divide(), rule="onnx-quantizelinear-e4m3fn").status is GateStatus.PASS
    nosat = Divide(ml_dtypes.float8_e5m2, saturate=False)
    assert run_g1(nosat, rule="onnx-quantizelinear-e5m2-nosat").status is GateStatus.PASS
    result = run_g1(Divide(), rule="vllm-cpp-static", nan_policy=NAN_POLICIES["keep-sign"])
    assert result.status is GateStatus.FAIL and result.assertions_failed >= 3
    assert "your kernel divides (x / s): --rule onnx-quantizelinear-e4m3fn" in result.reason
    assert result.measured["explained_by"]["axes"] == {"apply": "divide"}


def test_per_row_and_per_block_kernels_written_by_hand_pass_and_a_shared_scale_fails() -> None:
    for name in ("onnx-quantizelinear-e4m3fn-axis", "onnx-quantizelinear-e4m3fn-block-32"):
        assert run_g1(Divide(), rule=name).status is GateStatus.PASS, name

    class FirstScale(Divide):
        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            return super().quantize(x, np.full_like(np.asarray(scale, F32), np.ravel(scale)[0]))

    for name in ("onnx-quantizelinear-e4m3fn-axis", "onnx-quantizelinear-e4m3fn-block-32"):
        result = run_g1(FirstScale(), rule=name)
        assert result.status is GateStatus.FAIL and result.assertions_failed >= 3, name


def test_codes_as_a_float8_array_of_the_rules_format_pass_and_of_another_are_one_line() -> None:
    class Float8(Divide):
        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            return super().quantize(x, scale).view(self.fmt)

    assert run_g1(Float8(), rule="onnx-quantizelinear-e4m3fn").status is GateStatus.PASS
    result = run_g1(Float8(ml_dtypes.float8_e5m2), rule="onnx-quantizelinear-e4m3fn")
    assert result.status is GateStatus.FAIL and result.mismatches == 0
    assert "kernel returned float8_e5m2 codes; the rule's format is e4m3fn" in result.reason


def test_a_dynamic_rule_or_an_unknown_name_is_refused() -> None:
    dynamic = dataclasses.replace(STATIC_RULES["vllm-cpp-static"], scale_source=ScaleSource.AMAX)
    with pytest.raises(ValueError, match="dynamic rule"):
        run_g1(Divide(), rule=dynamic)
    with pytest.raises(ValueError, match="unknown static rule"):
        run_g1(Divide(), rule="vllm-per-tensor")
