"""The ``element_rounding`` axis: ties away from zero in the reference, the port and GQ.

A kernel that rounds element ties away from zero passes GQ under a rule that
declares it and fails the RNE twin of that rule (GQ's tie cases), and the RNE
port fails the ties-away rule. The kernel here finds ties its own way: the
RNE code, its neighbour, and equal distances.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates import run_gq
from fp8lab.gates.records import GateStatus
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES, ElementRounding, parse_rules, rule_text

RNE = RULES["vllm-per-token"]
AWAY = dataclasses.replace(
    RNE, name="vllm-per-token-ties-away", element_rounding=ElementRounding.TIES_AWAY
)
E4M3 = ml_dtypes.float8_e4m3fn


def _ties_away_cast(q: np.ndarray) -> np.ndarray:
    """e4m3fn codes of float32 ``q`` (already clamped to +-448), ties away from zero."""
    codes = q.astype(E4M3).view(np.uint8)
    value = codes.view(E4M3).astype(np.float64)
    wide = q.astype(np.float64)
    short = np.isfinite(wide) & (np.abs(value) < np.abs(wide))  # RNE went toward zero
    other = np.where(short, codes + 1, codes - 1).astype(np.uint8)  # same sign, next magnitude
    other_value = other.view(E4M3).astype(np.float64)
    tie = short & (np.abs(wide - value) == np.abs(other_value - wide))
    return np.where(tie, other, codes).astype(np.uint8)


def ties_away_per_token(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """vLLM per-token (fmaxf amax, amax / 448 floored, x / s, fmaxf/fminf clamp), ties away."""
    x32 = np.asarray(x, np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        amax = np.fmax.reduce(np.abs(x32), axis=1, initial=np.float32(0))
        s = np.fmax(amax / np.float32(448), np.float32(RNE.min_scale))
        q = np.fmax(np.float32(-448), np.fmin(x32 / s[:, None], np.float32(448)))
    return _ties_away_cast(q), s


@pytest.mark.parametrize("elem_fn", [reference_scheme_quant, scheme_quant])
def test_ties_go_away_from_zero_and_nothing_else_moves(elem_fn) -> None:  # type: ignore[no-untyped-def]
    # scale 1 (amax 448): 1.0625 and 1.1875 are ties (RNE: 0x38, 0x3A), 2**-10 is the tie
    # between 0 and the least subnormal, 400 the tie between 384 and 416; 1.1 is no tie
    x = np.float32([[448.0, 1.0625, 1.1875, -1.0625, 2.0**-10, -(2.0**-10), 400.0, 1.1]])
    away, scales = elem_fn(x, AWAY)
    even, _ = elem_fn(x, RNE)
    assert scales.tolist() == [1.0]
    assert even[0].tolist() == [0x7E, 0x38, 0x3A, 0xB8, 0x00, 0x80, 0x7C, 0x39]
    assert away[0].tolist() == [0x7E, 0x39, 0x3A, 0xB9, 0x01, 0x81, 0x7D, 0x39]


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_the_port_is_the_reference_with_ties_away(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for name in ("vllm-per-tensor", "vllm-per-group", "rceil", "compressed-tensors-0.20-token"):
        rule = dataclasses.replace(RULES[name], element_rounding=ElementRounding.TIES_AWAY)
        x = (rng.standard_normal((4, 256)) * 40).astype(np.float32)
        x[:, 1:5] = [1.0625, -1.1875, 2.0**-10, 400.0]  # ties where the scale is near 1
        x[:, 0] = 448.0
        x[3, 9] = np.nan
        x = x.astype(dtype)
        want_codes, want_scales = reference_scheme_quant(x, rule)
        codes, scales = scheme_quant(x, rule)
        assert codes.tobytes() == want_codes.tobytes(), name
        assert scales.tobytes() == want_scales.tobytes(), name


def test_the_key_reads_and_writes() -> None:
    (again,) = parse_rules(rule_text(AWAY))
    assert again == AWAY and 'element_rounding = "ties-away"' in rule_text(AWAY)
    assert parse_rules(rule_text(RNE))[0].element_rounding is ElementRounding.RNE
    with pytest.raises(ValueError, match="element_rounding"):
        parse_rules(rule_text(RNE).replace('element_rounding = "rne"', 'element_rounding = "odd"'))


def test_gq_passes_ties_away_under_its_rule_and_fails_the_rne_twin() -> None:
    own = run_gq(ties_away_per_token, scheme="per-token", rule=AWAY)
    assert own.status is GateStatus.PASS, own
    twin = run_gq(ties_away_per_token, scheme="per-token", rule=RNE)
    assert twin.status is GateStatus.FAIL and twin.assertions_failed >= 3
    rne_port = run_gq(lambda x: scheme_quant(x, RNE), scheme="per-token", rule=AWAY)
    assert rne_port.status is GateStatus.FAIL and rne_port.assertions_failed >= 3
