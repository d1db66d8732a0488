"""Planted defects make the scheme comparison go red: one per rule family, and in the decoder.

Each defect is the port run under a rule with one field changed (the bug
classes GQ is built to catch) or with torchao's e8m0 reciprocal decoding byte 0 as
zero, compared against the reference of the true rule on the seeded
populations. A comparison that stays green here would not be a check.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.kernels import scheme as port_module
from fp8lab.kernels.scheme import nvfp4_block_scales, scheme_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_scheme_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import (
    RULES,
    AmaxNan,
    Apply,
    Clamp,
    E8m0Inf,
    E8m0Zero,
    Pow2,
    SignedZero,
)
from fp8lab.sweeps.range_run import RangeRun

DEFECTS = {
    "vllm-per-tensor": {"clamp": Clamp.MAX_THEN_MIN},  # swapped clamp order: NaN -> -448
    "vllm-per-token": {"min_scale": None},  # missing min-scale floor: zero row -> NaN codes
    "vllm-native-per-token": {"apply": Apply.DIVIDE},  # the CUDA op's x / s
    "vllm-per-group": {"block": 64},  # block size off
    "vllm-per-group-ue8m0": {"pow2": Pow2.NONE},  # UE8M0 rounding dropped
    "ocp-floor": {"pow2": Pow2.RCEIL, "scale_from": Apply.RECIPROCAL},  # FLOOR vs RCEIL
    "rceil": {"pow2": Pow2.OCP_FLOOR},  # RCEIL vs FLOOR
    "torchao-0.18-mxfp8-floor": {"e8m0_zero": E8m0Zero.OCP},  # byte 0 as 2**127
    "torchao-0.18-mxfp8-rceil": {"e8m0_inf": E8m0Inf.NAN_BYTE},  # inf amax as 0xFF
    "torchao-0.18-float8-tensorwise": {"amax_floor": 1e-10},  # vLLM's eps for torchao's
    "torchao-0.18-float8-rowwise": {"amax_nan": AmaxNan.SKIP},  # fmaxf for torch.amax
    "compressed-tensors-0.20-tensor": {"signed_zero": SignedZero.KEEP},  # no zero point: -0 kept
    # no eps: a zero row is 0 / 0 (bfloat16's eps goes with it)
    "compressed-tensors-0.20-token": {"zero_scale": None, "input_zero_scale": None},
    "compressed-tensors-0.20-group-128": {"apply": Apply.RECIPROCAL},  # x * (1/s) for x / s
    "compressed-tensors-0.20-channel": {"signed_zero": SignedZero.KEEP},  # -0 kept
}


def red_words(rule_name: str, **changes: object) -> int:
    """Words (codes + scales) where the defective port differs from the true reference."""
    true_rule = RULES[rule_name]
    bad_rule = dataclasses.replace(true_rule, **changes)  # type: ignore[arg-type]
    differ = 0
    for _, x in scheme_population(true_rule.element, 0):
        codes, scales = scheme_quant(x, bad_rule)
        ref_codes, ref_scales = reference_scheme_quant(x, true_rule)
        differ += int((codes != ref_codes).sum())
        if scales.shape != ref_scales.shape or scales.dtype != ref_scales.dtype:
            differ += ref_scales.size
        else:
            differ += int((scales.view(np.uint8) != ref_scales.view(np.uint8)).sum())
    return differ


def test_every_rule_has_a_planted_defect() -> None:
    assert set(DEFECTS) == set(RULES)


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_a_planted_defect_goes_red(name: str) -> None:
    assert red_words(name, **DEFECTS[name]) > 0
    assert red_words(name) == 0  # the same harness, no defect: green


def test_e8m0_byte_0_decoded_as_zero_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    """triton PR #11624's class: byte 0 is 2**-127, not 0 (here: its reciprocal 2**127)."""
    true_decode = port_module._e8m0_reciprocal

    def zero_for_byte_0(byte: np.ndarray) -> np.ndarray:
        out = true_decode(byte)
        return np.where(byte == 0, np.float32(0.0), out).astype(np.float32)

    x = np.full((1, 32), np.float32(1e-39))  # a float32-subnormal block: scale byte 0
    assert scheme_quant(x, "rceil")[1].tolist() == [[0]]
    monkeypatch.setattr(port_module, "_e8m0_reciprocal", zero_for_byte_0)
    codes, _ = scheme_quant(x, "rceil")
    ref_codes, _ = reference_scheme_quant(x, RULES["rceil"])
    assert (codes != ref_codes).any()


@pytest.mark.parametrize(("true", "planted"), [("te-nvfp4-divide", "te-nvfp4-reciprocal")])
def test_nvfp4_formula_swap_goes_red(true: str, planted: str) -> None:
    rng = np.random.default_rng(5)
    amax = np.abs(rng.standard_normal(20_000)).astype(np.float32)
    amax = np.append(amax, np.float32(np.nan))
    got = nvfp4_block_scales(amax, 1.0, NVFP4_RULES[planted])
    assert (got != reference_nvfp4_block_scales(amax, 1.0, NVFP4_RULES[true])).any()


def test_a_planted_sweep_defect_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's log2 model with every threshold off by one changes the count."""
    from fp8lab.sweeps import amax as amax_sweep

    true_count = amax_sweep.sweep_pair(
        "log2-vs-bits-ceil", run=RangeRun(start=0x4C00_0000, stop=0x5000_0000)
    )
    shifted = amax_sweep.ceil_thresholds() + 1
    monkeypatch.setattr(amax_sweep, "ceil_thresholds", lambda: shifted)
    planted = amax_sweep.sweep_pair(
        "log2-vs-bits-ceil", run=RangeRun(start=0x4C00_0000, stop=0x5000_0000)
    )
    assert true_count.differ > 0 and planted.differ != true_count.differ
