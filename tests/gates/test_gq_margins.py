"""GQ kills every rule's divide/reciprocal twin with margin: at least three failed assertions.

For each GQ rule whose scale is not a power of two, the twin is the same rule
with the element step (``apply``) or the scale formula (``scale_from``)
flipped between ``x / s`` and ``x * float32(1/s)``, run as a kernel through
its exact reference. The ``divide-split`` case was designed for this
(:data:`fp8lab.populations.schemes.DIVIDE_SPLIT_AMAXES`); its elements are
re-derived here with the scan reference, not the codec that chose them. A
power-of-two scale has an exact reciprocal, so those rules' twins are the
rule itself: GQ must not fail them, except the ``scale_from`` twin of a rule
whose e8m0 exponent is ``ceil(float32 log2(d))`` (torchao RCEIL): there the
last ulp of ``d = amax / 448`` decides the byte where the ``log2`` rounds onto
an integer, and the ``log2-split`` case kills that twin. Neither may it fail the ``scale_from``
twin of a rule whose quotient is float64 (``M / amax`` and ``M * (1 / amax)``
in float64 round to the same float32 for every float32 amax:
``tests/specs/test_rule_axes.py``); a multiplier's element step ``x * s`` has
no divide twin.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.gates import GQ_RULES, run_gq
from fp8lab.populations.schemes import DIVIDE_SPLIT_AMAXES, divide_split_elements
from fp8lab.refs import ScanPolicy, reference_scheme_quant, scan_encode
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import RULES, Apply, E8m0Exponent, Pow2, Quotient, Storage

MARGIN = 3
FLIP = {Apply.DIVIDE: Apply.RECIPROCAL, Apply.RECIPROCAL: Apply.DIVIDE}
PAIRS = [
    (scheme, name, step)
    for scheme, names in GQ_RULES.items()
    for name in names
    if name in RULES
    for step in ("apply", "scale_from")
    if not (step == "apply" and RULES[name].storage is Storage.MULTIPLIER)
]


def _twin_failures(scheme: str, name: str, step: str) -> tuple[int, set[str]]:
    rule = RULES[name]
    twin = dataclasses.replace(rule, name=f"{name}-twin", **{step: FLIP[getattr(rule, step)]})
    result = run_gq(lambda x: reference_scheme_quant(x, twin), scheme=scheme, rule=name)
    failed = {c.name.split("#")[0] for c in result.case_results if c.assertions_failed}
    return result.assertions_failed, failed


@pytest.mark.parametrize(("scheme", "name", "step"), PAIRS, ids=[f"{n}-{s}" for _, n, s in PAIRS])
def test_the_divide_reciprocal_twin_dies_with_margin(scheme: str, name: str, step: str) -> None:
    failed, cases = _twin_failures(scheme, name, step)
    rule = RULES[name]
    if rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32 and step == "scale_from":
        # the byte is ceil(float32 log2(d)): one ulp of d can cross the log2's rounding point,
        # and the log2-split amaxes sit on it (the highest split of their binades)
        assert failed >= MARGIN and cases <= {"log2-split", "rule-split"}, (failed, cases)
        return
    if rule.pow2 is not Pow2.NONE:
        assert failed == 0, f"{name}: a power-of-two scale's twin is the rule itself"
        return
    if RULES[name].quotient is Quotient.FLOAT64 and step == "scale_from":
        assert failed == 0, f"{name}: in float64 the scale's twin rounds to the same float32"
        return
    assert failed >= MARGIN, f"{name} {step} twin: {failed} failed assertions in {cases}"
    assert "divide-split" in cases


def test_every_divide_split_element_splits_under_the_scan_reference() -> None:
    fmt = get_format("e4m3fn")
    policy = ScanPolicy(True, False)
    for amax in DIVIDE_SPLIT_AMAXES:
        x = divide_split_elements(amax, fmt)
        assert x.size >= 15, amax
        assert (x.view(np.uint32) & 0xFFFF).max() == 0  # bfloat16 values: both dtypes hold them
        s = np.float32(amax) / np.float32(448.0)
        quotient = scan_encode(x / s, fmt, policy)
        product = scan_encode(x * (np.float32(1.0) / s), fmt, policy)
        assert (quotient != product).all(), amax
