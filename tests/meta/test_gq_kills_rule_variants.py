"""GQ under rule R kills every one-axis variant R[A=v] of every named rule with >= 3 failed calls.

For each named rule (the specs' and the libraries') and each row of its
shipped split table, the kernel is the in-process port of ``R[A=v]``, run on
GQ's calls for R (its seeded population and the ``rule-split`` calls derived
from the table). A call fails when the variant's words differ from R's: R's
port stands for GQ's exact reference here, as
``tests/kernels/test_scheme_rules.py`` holds the port to the reference on
every call of GQ's population, and NaN codes compare as GQ compares them
(one NaN under ``nan_code = "any"``). Rows that are not ``split`` are the
moot ones, each with the reason the table gives. One test runs GQ itself.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from fp8lab.codecs import decode
from fp8lab.gates import GQ_RULES, run_gq
from fp8lab.gates.gq import gq_calls
from fp8lab.gates.records import GateStatus
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.populations import rule_splits
from fp8lab.populations.rule_splits import variant
from fp8lab.populations.split_cache import cached_split_table
from fp8lab.specs.rule_file import derived_rule
from fp8lab.specs.scale_rules import RULES, Granularity, NanCode, ScaleRule

SCHEME = {n: s for s, names in GQ_RULES.items() for n in names if n in RULES}


def _words(x: np.ndarray, rule: ScaleRule) -> tuple[np.ndarray, np.ndarray]:
    """Per row: codes, and scale bytes (NaN codes and NaN scales as one under ``any``)."""
    if rule.granularity is Granularity.TENSOR:  # GQ calls a per-tensor kernel row by row
        rule = dataclasses.replace(rule, granularity=Granularity.ROW)
    codes, scales = scheme_quant(x, rule)
    codes, scales = codes.reshape(len(x), -1), scales.reshape(len(x), -1)
    if rule.nan_code is NanCode.ANY:
        codes = np.where(np.isnan(decode(codes, rule.element)), np.uint8(0x7F), codes)
        if scales.dtype.kind == "f":
            scales = np.where(np.isnan(scales), np.float32(np.nan), scales)
    return codes, scales.view(np.uint8)


def failed_calls(rule: ScaleRule, other: ScaleRule, calls: list[Any]) -> int:
    """GQ's calls for ``rule`` on which the port of ``other`` gives words the rule does not."""
    failed = 0
    for dtype in {c.args[0].dtype for c in calls}:
        mine = [c for c in calls if c.args[0].dtype == dtype]
        x = np.concatenate([c.args[0] for c in mine])
        owner = np.repeat(np.arange(len(mine)), [len(c.args[0]) for c in mine])
        with np.errstate(all="ignore"):
            (c1, s1), (c2, s2) = _words(x, rule), _words(x, other)
        bad = (c1 != c2).any(axis=1) | (s1 != s2).any(axis=1)
        failed += np.unique(owner[bad]).size
    return failed


@pytest.mark.parametrize("name", list(SCHEME))
def test_every_split_variant_fails_three_calls_and_every_other_says_why(name: str) -> None:
    rule = RULES[name]
    calls = gq_calls(SCHEME[name], rule)
    moot = []
    for row in cached_split_table(rule):
        if row.status != "split":
            assert row.reason, (name, row)
            moot.append((row.axis, row.value, row.status, row.reason))
            continue
        other = derived_rule(f"{name}[{row.axis}={row.value}]", RULES)
        failed = failed_calls(rule, other, calls)
        assert failed >= 3, f"GQ under {name} fails {other.name} on {failed} calls only"
    assert len(moot) < len(cached_split_table(rule))  # the moot ones are listed, not all


def test_without_the_derived_calls_the_log2_variant_under_rceil_escapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rule = RULES["rceil"]
    log2 = derived_rule("rceil[e8m0_exponent=log2-float32]", RULES)
    assert failed_calls(rule, log2, gq_calls("mxfp8", rule)) >= 3
    monkeypatch.setattr("fp8lab.gates.gq.split_cases", lambda *a, **k: [])
    assert failed_calls(rule, log2, gq_calls("mxfp8", rule)) < 3  # the gap the table closes


@pytest.mark.slow(reason="GQ's exact reference on three rules' populations")
@pytest.mark.parametrize(
    "name",
    [
        "rceil[e8m0_exponent=log2-float32]",
        "vllm-per-token[apply=reciprocal]",
        "ocp-floor[e8m0_nan=zero-byte]",
    ],
)
def test_gq_itself_kills_a_variant_with_three_failed_calls(name: str) -> None:
    other = derived_rule(name, RULES)
    base = name.partition("[")[0]
    result = run_gq(lambda x: scheme_quant(x, other), scheme=SCHEME[base], rule=base)
    assert result.status is GateStatus.FAIL and result.assertions_failed >= 3
    assert any(s.axis == name.split("[")[1].split("=")[0] for s in result.splits)
    assert variant(RULES[base], "nan_code", NanCode.ANY) is not None
    assert rule_splits.SPLIT_DTYPES == ("float32", "bfloat16")
