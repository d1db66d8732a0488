"""G1 under each built-in static rule R kills the port of every neighbour R[A:=v] with
margin, or the neighbour is moot with its proof; the neighbour explanation reads outputs only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.gates.g1 import run_g1
from fp8lab.gates.records import GateStatus
from fp8lab.kernels.static_rule import static_quant
from fp8lab.specs.rule_axes import Clamp
from fp8lab.specs.scale_rules import ScaleRule
from fp8lab.specs.static_rules import STATIC_RULES, static_neighbours

MARGIN = 3


class Port:
    """The static port of ``rule`` (any rule object) as a G1 kernel."""

    def __init__(self, rule: ScaleRule, nan_policy: str | None = None) -> None:
        self.rule, self.name = rule, rule.name
        if nan_policy:
            self.nan_policy = nan_policy

    def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
        return static_quant(x, scale, self.rule)


def moot(rule: ScaleRule, axis: str, value: object) -> str:
    """Why no kernel can tell R from R[axis := value], or "" when one can."""
    if axis == "nan_code":
        return "a comparison, not an output: a port making canonical NaNs meets both"
    if axis == "clamp" and value is Clamp.TORCH and rule.clamp is Clamp.NONE and rule.saturate:
        return "torch.clamp to +-max, then a saturating cast, is that cast (NaN passes both)"
    return ""


FLIPS = [
    (name, axis, value, other)
    for name, rule in STATIC_RULES.items()
    for axis, value, other in static_neighbours(rule)
]
FAST = {"vllm-cpp-static", "onnx-quantizelinear-e5m2-nosat"}


def _check(name: str, axis: str, value: object, other: ScaleRule) -> None:
    rule = STATIC_RULES[name]
    result = run_g1(Port(other), rule=name)
    why = moot(rule, axis, value)
    if why:
        assert result.status is GateStatus.PASS, f"{name}[{axis}={value}] declared moot: {why}"
        return
    assert result.status is GateStatus.FAIL, f"{name}[{axis}={value}] survives G1"
    assert result.assertions_failed >= MARGIN, (name, axis, value, result.assertions_failed)


@pytest.mark.parametrize(
    ("name", "axis", "value", "other"),
    [f for f in FLIPS if f[0] in FAST],
    ids=[f"{f[0]}-{f[1]}-{getattr(f[2], 'value', f[2])}" for f in FLIPS if f[0] in FAST],
)
def test_each_neighbour_of_two_rules_fails_with_margin_or_is_moot(
    name: str, axis: str, value: object, other: ScaleRule
) -> None:
    _check(name, axis, value, other)


@pytest.mark.slow(reason="every neighbour of every built-in static rule: 63 G1 runs, about 18 s")
def test_each_neighbour_of_every_rule_fails_with_margin_or_is_moot() -> None:
    for flip in FLIPS:
        _check(*flip)


def test_a_kernel_making_nan_codes_of_either_sign_fails_canonical_and_passes_any() -> None:
    rule = STATIC_RULES["onnx-quantizelinear-e4m3fn"]

    class SignedNan(Port):
        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            codes = super().quantize(x, scale)
            return np.where(np.isnan(x.astype(np.float32)) & np.signbit(x), 0xFF, codes).astype(
                np.uint8
            )

    assert run_g1(SignedNan(rule), rule=rule).status is GateStatus.PASS
    canonical = STATIC_RULES["vllm-cpp-static"]
    result = run_g1(SignedNan(canonical), rule=canonical)
    assert result.status is GateStatus.FAIL and result.assertions_failed >= MARGIN


def test_the_explanation_needs_every_mismatch_explained() -> None:
    divide = STATIC_RULES["onnx-quantizelinear-e4m3fn"]

    class AlmostDivide(Port):  # divides, and gets one more word wrong
        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            codes = super().quantize(x, scale).copy()
            codes.reshape(-1)[5] ^= 1
            return codes

    seed = "vllm-cpp-static"
    assert "your kernel divides" in run_g1(Port(divide, "keep-sign"), rule=seed).reason
    result = run_g1(AlmostDivide(divide, "keep-sign"), rule=seed)
    assert result.status is GateStatus.FAIL and "explained_by" not in result.measured


def test_a_neighbour_the_seed_words_miss_gets_split_words() -> None:
    rule = STATIC_RULES["vllm-cpp-static"]
    divide = next(o for a, _, o in static_neighbours(rule) if a == "apply")
    scales = (0.13, 0.77)  # two cases per dtype: fewer than three expose divide
    result = run_g1(Port(divide), rule=rule, scales=scales, input_dtypes=("float32",))
    assert result.mismatches_by_class.get("split", 0) > 0
