"""The rule axes beyond vLLM's: a float64 quotient, a multiplier scale, NaN codes compared as one.

Each axis is a named key of a rule file with today's choice as its default;
a rule that combines them wrongly is refused; the exact reference follows
each choice (checked here on values worked by hand) and the port agrees with
it under GQ (the built-in run of every rule).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import (
    RULES,
    Apply,
    NanCode,
    Quotient,
    Storage,
    parse_rules,
    rule_text,
)

TENSORWISE = RULES["torchao-0.18-float8-tensorwise"]


def test_a_rule_file_without_the_new_keys_keeps_todays_choices() -> None:
    text = "\n".join(
        line
        for line in rule_text(RULES["vllm-per-token"]).splitlines()
        if not line.startswith(("quotient", "storage", "nan_code"))
    )
    (rule,) = parse_rules(text)
    assert (rule.quotient, rule.storage, rule.nan_code) == (
        Quotient.FLOAT32,
        Storage.DIVISOR,
        NanCode.CANONICAL,
    )
    assert rule == RULES["vllm-per-token"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"storage": Storage.DIVISOR}, "multiplier"),
        ({"apply": Apply.RECIPROCAL}, "multiplier"),
        ({"scale_from": Apply.MULTIPLY}, "multiplier"),
    ],
)
def test_a_rule_that_mixes_the_axes_wrongly_is_refused(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TENSORWISE, **change)  # type: ignore[arg-type]


def test_a_multiplier_scale_is_m_over_amax_and_multiplies() -> None:
    x = np.float32([[3.0, -1.5, 0.25, 0.0]])
    codes, scales = reference_scheme_quant(x, TENSORWISE)
    assert scales.tolist() == [np.float32(448.0 / 3.0)]
    # 3 * (448/3 in float32) = 448.00000...: 448; -1.5 * s = -224
    assert codes[0, :2].tolist() == [0x7E, 0xF6]


def test_the_float64_floor_is_the_double_1e_12() -> None:
    x = np.full((1, 4), np.float32(1e-13))
    _, scales = reference_scheme_quant(x, TENSORWISE)
    assert scales[0] == np.float32(448.0 / 1e-12)  # the floor in float64, one rounding at the end


def test_a_float64_quotient_of_float32_operands_rounds_as_a_float32_one() -> None:
    """Division of two float32 values in double, then to float32, is the float32 quotient
    (53 >= 2 * 24 + 2): so a float64 quotient matters only with a constant that is not a
    float32 or a reciprocal form, and GQ cannot tell the two apart on torchao's rule."""
    rng = np.random.default_rng(7)
    amax = rng.uniform(1e-6, 1e6, 10_000).astype(np.float32)
    wide = (np.float64(448.0) / amax.astype(np.float64)).astype(np.float32)
    assert np.array_equal(wide, np.float32(448.0) / amax)


def test_in_float64_m_over_amax_and_m_times_its_reciprocal_round_alike() -> None:
    """Every float32 amax of [1, 2) (so, by exact scaling, every normal one): the twin of
    torchao's scale formula gives the same float32 scale, so GQ must pass it."""
    amax = np.arange(0x3F800000, 0x40000000, dtype=np.uint32).view(np.float32).astype(np.float64)
    divide = (448.0 / amax).astype(np.float32)
    reciprocal = (448.0 * (1.0 / amax)).astype(np.float32)
    assert np.array_equal(divide, reciprocal)
    assert np.float32(448.0 / 1e-12) == np.float32(448.0 * (1.0 / 1e-12))  # the floor


def _signed_nan(codes: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``codes`` with every NaN code given the sign of its input, as a CPU's arithmetic may."""
    out = codes.copy()
    nan = (codes & 0x7F) == 0x7F
    out[nan & np.signbit(x.astype(np.float32))] = 0xFF
    return out


def test_any_nan_code_is_the_same_nan_and_nothing_else_is() -> None:
    from fp8lab.gates import GateStatus, run_gq
    from fp8lab.kernels.scheme import scheme_quant

    name = "torchao-0.18-float8-tensorwise"

    def signed(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes, scales = scheme_quant(x, name)
        return _signed_nan(codes, x), scales

    def wrong(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes, scales = signed(x)
        codes.reshape(-1)[0] ^= 0x01  # one finite code off
        return codes, scales

    assert run_gq(signed, scheme="per-tensor", rule=name).status is GateStatus.PASS
    canonical = dataclasses.replace(RULES[name], name="mine", nan_code=NanCode.CANONICAL)
    held = run_gq(signed, scheme="per-tensor", rule=canonical)
    assert held.status is GateStatus.FAIL and held.nan_code_mismatches > 0
    assert run_gq(wrong, scheme="per-tensor", rule=name).status is GateStatus.FAIL


def test_an_ocp_floor_exponent_from_a_float32_log2_agrees_port_and_reference() -> None:
    from fp8lab.kernels.scheme import amax_scales
    from fp8lab.specs.scale_rules import E8m0Exponent

    rule = dataclasses.replace(
        RULES["ocp-floor"], name="log2", e8m0_exponent=E8m0Exponent.LOG2_FLOAT32
    )
    tops = (2.0 ** np.arange(-126, 127)).astype(np.float32)
    below = np.concatenate([tops.view(np.uint32) - k for k in (1, 2, 3)]).view(np.float32)
    amax = np.concatenate([below, np.float32([0, 1e-45, 3.0, 448.0, np.inf, np.nan])])
    port = amax_scales(amax, rule)
    x = np.zeros((amax.size, 32), np.float32)
    x[:, 0] = amax
    _, ref = reference_scheme_quant(x, rule)
    assert np.array_equal(port, ref.reshape(-1))
    bits = amax_scales(amax, RULES["ocp-floor"])
    assert (port != bits).sum() > 100  # just below 2**k the float32 log2 rounds up to k
