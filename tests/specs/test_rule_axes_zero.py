"""Two zero choices of a rule: a scale of exactly 0 replaced (``zero_scale``), and a -0 quotient
turned into +0 by a zero point (``signed_zero``).

Each is a key a rule file may leave out (None, ``keep``: today's choice); a
byte scale refuses both; the exact reference follows each on values worked
by hand, the port agrees with it on every population, and GQ holds a kernel
to each choice.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.gates import GateStatus, run_gq
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES, SignedZero, parse_rules, rule_text

EPS = float(np.finfo(np.float32).eps)  # 2**-23
# vLLM's torch per-token rule, its min-scale floor taken out for an eps that replaces a 0 scale
ZERO = dataclasses.replace(
    RULES["vllm-native-per-token"], name="zero", min_scale=None, zero_scale=EPS
)
PLUS = dataclasses.replace(ZERO, name="plus", signed_zero=SignedZero.PLUS_ZERO)


def test_a_rule_file_without_the_zero_keys_keeps_minus_zero_and_no_replacement() -> None:
    text = "\n".join(
        line
        for line in rule_text(RULES["vllm-per-group"]).splitlines()
        if not line.startswith(("signed_zero", "zero_scale"))
    )
    (rule,) = parse_rules(text)
    assert (rule.signed_zero, rule.zero_scale) == (SignedZero.KEEP, None)
    assert rule == RULES["vllm-per-group"]
    assert parse_rules(rule_text(PLUS)) == (PLUS,)


@pytest.mark.parametrize("change", [{"zero_scale": EPS}, {"signed_zero": SignedZero.PLUS_ZERO}])
def test_a_byte_scale_refuses_the_zero_keys(change: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="float32 scale"):
        dataclasses.replace(RULES["rceil"], **change)  # type: ignore[arg-type]


def test_only_a_scale_of_exactly_zero_is_replaced() -> None:
    x = np.float32([[0.0, 0.0], [1e-5, 0.0], [2.0**-149, 0.0], [448.0, -1.0]])
    codes, scales = reference_scheme_quant(x, ZERO)
    # a zero row and 2**-149 / 448 (0 in float32) get eps; 1e-5 / 448 < eps stays as it is
    assert scales.tolist() == [EPS, np.float32(1e-5) / np.float32(448.0), EPS, 1.0]
    assert codes[:, 0].tolist() == [0x00, 0x7E, 0x00, 0x7E]
    kept, _ = reference_scheme_quant(x, dataclasses.replace(ZERO, zero_scale=None))
    assert kept[0].tolist() == [0x7F, 0x7F]  # 0 / 0 without it: NaN


def test_a_zero_point_turns_minus_zero_and_only_it_into_plus_zero() -> None:
    # s = 2: -0; -2**-149 / 2, a quotient that underflows to -0; -2**-140 / 2, a nonzero quotient
    # the cast rounds to -0 (the zero point comes before the cast: it stays 0x80); -2 / 2
    x = np.float32([[896.0, -0.0, -(2.0**-149), -(2.0**-140), -2.0]])
    assert reference_scheme_quant(x, ZERO)[0].tolist() == [[0x7E, 0x80, 0x80, 0x80, 0xB8]]
    assert reference_scheme_quant(x, PLUS)[0].tolist() == [[0x7E, 0x00, 0x00, 0x80, 0xB8]]


@pytest.mark.parametrize("rule", [ZERO, PLUS], ids=lambda r: r.name)
def test_the_port_agrees_with_the_reference(rule: object) -> None:
    for _, x in scheme_population("e4m3fn", 5):
        codes, scales = scheme_quant(x, rule)  # type: ignore[arg-type]
        want_codes, want_scales = reference_scheme_quant(x, rule)  # type: ignore[arg-type]
        assert np.array_equal(codes, want_codes)
        assert np.array_equal(scales.view(np.uint32), want_scales.view(np.uint32))


def test_gq_holds_a_kernel_to_each_zero_choice() -> None:
    def port(rule: object):  # type: ignore[no-untyped-def]
        return lambda x: scheme_quant(x, rule)  # type: ignore[arg-type]

    assert run_gq(port(PLUS), scheme="per-token", rule=PLUS).status is GateStatus.PASS
    minus = run_gq(port(ZERO), scheme="per-token", rule=PLUS)
    assert minus.status is GateStatus.FAIL and minus.mismatches > 0
    floored = dataclasses.replace(PLUS, zero_scale=None, min_scale=EPS)  # a floor, not a swap
    assert run_gq(port(floored), scheme="per-token", rule=PLUS).status is GateStatus.FAIL
