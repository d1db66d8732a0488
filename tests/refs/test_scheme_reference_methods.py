"""GQ's exact references, element arithmetic on integer arrays against one Fraction per element.

Every declared rule on every case of its population (and, for the rules that
compute in the input's dtype, a bfloat16 input); every modelled NVFP4 rule
at two global amaxes. The codes and scales must be the same bytes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.populations.schemes import scheme_population
from fp8lab.refs import reference_nvfp4_quant, reference_scheme_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES, Arithmetic, get_rule

_DERIVED = [f"vllm-per-tensor[arithmetic={a.value}]" for a in Arithmetic]
_DERIVED += [f"torchao-0.18-float8-rowwise[arithmetic={a.value}]" for a in Arithmetic]


@pytest.mark.parametrize("name", [*RULES, *_DERIVED])
def test_both_methods_give_the_same_bytes(name: str) -> None:
    rule = get_rule(name)
    for label, x in scheme_population(rule.element, 11, 128):
        inputs = [x, x.astype(ml_dtypes.bfloat16)] if label in ("random", "ties") else [x]
        for given in inputs:
            array = reference_scheme_quant(given, rule, method="array")
            scalar = reference_scheme_quant(given, rule, method="scalar")
            for got, want in zip(array, scalar, strict=True):
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), label


@pytest.mark.parametrize("name", [n for n, r in NVFP4_RULES.items() if r.element_source])
def test_both_nvfp4_methods_give_the_same_bytes(name: str) -> None:
    rule = NVFP4_RULES[name]
    for label, x in scheme_population("e2m1fn", 11, 256):  # its split rows need K = 256
        finite = np.abs(x[np.isfinite(x)])
        for g in (float(finite.max(initial=0.0)), 3.0):
            array = reference_nvfp4_quant(x, g, rule, method="array")
            scalar = reference_nvfp4_quant(x, g, rule, method="scalar")
            for got, want in zip(array, scalar, strict=True):
                assert got.tobytes() == want.tobytes(), label


def test_an_unknown_method_is_refused() -> None:
    x = np.ones((1, 128), np.float32)
    with pytest.raises(ValueError, match="unknown method"):
        reference_scheme_quant(x, RULES["rceil"], method="fast")
    with pytest.raises(ValueError, match="unknown method"):
        reference_nvfp4_quant(x, 1.0, next(iter(NVFP4_RULES.values())), method="fast")
