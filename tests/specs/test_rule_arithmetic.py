"""The ``arithmetic`` and ``input_zero_scale`` keys: what they accept, and reference = port.

With ``arithmetic = "input"`` a bfloat16 input has its scale and its element
quotient rounded to bfloat16 (compressed-tensors on a bfloat16 tensor); a
float32 input is unchanged. The exact reference rounds in integers, the
port through ml_dtypes, and they agree bit for bit.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from fp8lab.kernels.scheme import scheme_quant
from fp8lab.refs import reference_scheme_quant
from fp8lab.refs.float32_exact import round_bf16
from fp8lab.specs.scale_rules import RULES, Arithmetic, parse_rules, rule_text

CT = RULES["compressed-tensors-0.20-token"]
BF16 = ml_dtypes.bfloat16


def _population(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((6, 128)) * rng.choice([1e-3, 1.0, 300.0], (6, 1))).astype(np.float32)
    x[1] = 0.0  # a zero row: the zero scale
    x[2, :4] = [-0.0, 2.0**-133, -(2.0**-130), 3e38]
    x[3, 7] = np.nan
    x[4, 9] = -np.inf
    return x


def test_the_reference_rounds_to_bfloat16_as_ml_dtypes_does() -> None:
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    want = values.astype(BF16).astype(np.float32)
    got = np.float32([round_bf16(float(v)) for v in values])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(
    "name",
    [
        "compressed-tensors-0.20-tensor",
        "compressed-tensors-0.20-token",
        "compressed-tensors-0.20-group-128",
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_port_is_the_reference_on_bfloat16(name: str, seed: int) -> None:
    x = _population(seed).astype(BF16)
    codes, scales = scheme_quant(x, name)
    want_codes, want_scales = reference_scheme_quant(x, RULES[name])
    assert codes.tobytes() == want_codes.tobytes() and scales.tobytes() == want_scales.tobytes()
    assert want_scales.reshape(-1)[1 if name.endswith("token") else 0] != 0


def test_a_zero_scale_is_the_input_zero_scale_and_float32_is_unchanged() -> None:
    x = np.zeros((2, 8), np.float32)
    assert reference_scheme_quant(x.astype(BF16), CT)[1].tolist() == [2.0**-7] * 2
    assert reference_scheme_quant(x, CT)[1].tolist() == [2.0**-23] * 2
    twin = dataclasses.replace(CT, arithmetic=Arithmetic.FLOAT32, input_zero_scale=None)
    wide = _population(5)
    for rule_fn in (reference_scheme_quant, scheme_quant):
        a, sa = rule_fn(wide, CT)
        b, sb = rule_fn(wide, twin)
        assert a.tobytes() == b.tobytes() and sa.tobytes() == sb.tobytes()
    narrow = wide.astype(BF16)
    assert (reference_scheme_quant(narrow, CT)[0] != reference_scheme_quant(narrow, twin)[0]).any()


def test_the_keys_are_checked() -> None:
    text = rule_text(CT)
    assert parse_rules(text)[0] == CT
    bad = {
        "input_zero_scale = 0.0078125\n": "",  # input arithmetic with a zero_scale needs it
        'arithmetic = "input"': 'arithmetic = "float32"',  # and float32 refuses it
        'arithmetic = "input"\n': 'arithmetic = "bf16"\n',
    }
    for old, new in bad.items():
        with pytest.raises(ValueError, match=r"input_zero_scale|arithmetic"):
            parse_rules(text.replace(old, new))
    rceil = rule_text(RULES["rceil"]).replace('arithmetic = "float32"', 'arithmetic = "input"')
    with pytest.raises(ValueError, match="arithmetic = input goes with a float32 scale"):
        parse_rules(rceil)
