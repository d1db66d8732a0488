"""``rules infer``'s search: every named rule is recovered from its own port, 0 mismatches.

Each named scale rule's port (:data:`fp8lab.kernels.scheme.SCHEME_PORTS`), the
NVFP4 rules with a modelled element path among them, is called on GQ's
population of its scheme; the search must count that rule's declaration among
the candidates that reproduce every call, and GQ must pass the declaration it
reports on the exact reference.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from fp8lab.gates.gq import GQ_RULES, gq_calls
from fp8lab.gates.nvfp4_candidates import nvfp4_candidates
from fp8lab.gates.records import GateStatus
from fp8lab.gates.rule_candidates import ENUM_AXES, HELD_FIXED, declaration, named_rules
from fp8lab.gates.rule_inference import infer_rule, record_outputs
from fp8lab.kernels.scheme import SCHEME_PORTS, nvfp4_quant, scheme_quant
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4Order, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, Apply, ScaleRule


class Candidate:
    """An NVFP4 declaration and the named rule it was reached from."""

    def __init__(self, rule: Nvfp4ScaleRule, base: str) -> None:
        self.rule, self.base = rule, base


SCHEMES = [s for s, names in GQ_RULES.items() if any(n in RULES for n in names)]
NAMED = [(s, n) for s in SCHEMES for n in GQ_RULES[s] if n in RULES]
NVFP4_NAMED = [n for n, r in NVFP4_RULES.items() if r.element_source is not None]


@pytest.mark.parametrize(("scheme", "name"), [*NAMED, *(("nvfp4", n) for n in NVFP4_NAMED)])
def test_a_named_rule_is_recovered_from_its_port(scheme: str, name: str) -> None:
    calls = gq_calls(scheme, name)
    found = infer_rule(scheme, name, calls, record_outputs(SCHEME_PORTS[name], calls))
    assert found.status == "reproduced"
    assert declaration(named_rules(scheme)[name]) in {declaration(r) for r in found.matching}
    assert found.nearest_named == name and found.differing == {}
    assert found.check is not None and found.check.status is GateStatus.PASS
    assert found.check.mismatches == found.check.nan_code_mismatches == 0
    assert found.calls_examined == len(calls) > 0
    record = found.to_dict()
    assert record["mismatches"]["words"] == 0 and record["matching_candidates"] >= 1
    assert set(record["ambiguous_axes"]) == set(found.ambiguous_axes)


def test_the_search_costs_its_axes_not_their_product() -> None:
    calls = gq_calls("per-token", "vllm-per-token")
    found = infer_rule(
        "per-token", "k", calls, record_outputs(SCHEME_PORTS["vllm-per-token"], calls)
    )
    product = 1
    for values in ENUM_AXES.values():
        product *= len(values)
    assert product > 10**9 and 0 < found.candidates_examined < 2_000
    assert found.status == "reproduced"
    for rule in found.matching:  # every match is a valid rule of the scheme's layout
        assert isinstance(rule, ScaleRule) and rule.name == "inferred-per-token"
        assert (rule.granularity, rule.block, rule.scale_format) == (
            RULES["vllm-per-token"].granularity,
            None,
            "float32",
        )


def test_nvfp4_candidates_are_distinct_and_vary_every_choice() -> None:
    found = [Candidate(rule, base) for rule, base in nvfp4_candidates()]
    keys = [declaration(c.rule) for c in found]
    assert len(set(keys)) == len(keys)
    assert list(GQ_RULES["nvfp4"]) == NVFP4_NAMED and len(NVFP4_NAMED) == 4
    assert keys[: len(NVFP4_NAMED)] == [declaration(NVFP4_RULES[n]) for n in NVFP4_NAMED]
    # order 4, clamp 2, inverse 2, tensor scale 2, bounds 2, amax NaN 2, NaN code 2; none refused
    assert len(found) == 4 * 2**6
    for c in found:
        assert isinstance(c.rule, Nvfp4ScaleRule) and c.rule.name == "inferred-nvfp4"
        assert c.base in NVFP4_NAMED and c.rule.element_source is not None
        assert c.rule.block == 16
    assert {c.rule.block_bounds for c in found} == {
        None,
        NVFP4_RULES["torchao-0.18-nvfp4"].block_bounds,
    }


def test_a_varied_nvfp4_rule_is_reported_with_the_field_changed() -> None:
    varied = replace(NVFP4_RULES["te-nvfp4-divide"], name="mine", order=Nvfp4Order.DIVIDE_DECODE)
    calls = gq_calls("nvfp4", "te-nvfp4-divide")
    outputs = record_outputs(lambda x, g: nvfp4_quant(x, g, varied), calls)
    found = infer_rule("nvfp4", "mine", calls, outputs)
    assert found.status == "reproduced" and found.nearest_named == "te-nvfp4-divide"
    assert found.differing == {"order": ("divide", "divide-decode")}
    assert declaration(varied) in {declaration(r) for r in found.matching}
    record = found.to_dict()
    assert set(record["chosen_rule"]) == {f.name for f in fields(Nvfp4ScaleRule)}
    assert record["differing_axes"] == {"order": ["divide", "divide-decode"]}


def test_outputs_of_the_wrong_form_are_a_kernel_fault() -> None:
    calls = gq_calls("per-token", "vllm-per-token")
    outputs = record_outputs(SCHEME_PORTS["vllm-per-token"], calls)
    codes, scales = outputs[0]
    bad = [(codes, scales.astype(np.float64)), *outputs[1:]]
    with pytest.raises(KernelFaultError, match="scales float64"):
        infer_rule("per-token", "k", calls, bad)
    with pytest.raises(KernelFaultError, match="tuple"):
        record_outputs(lambda x: x, calls[:1])


def test_the_record_names_every_field_of_the_chosen_rule() -> None:
    calls = gq_calls("mxfp8", "rceil")
    found = infer_rule("mxfp8", "k", calls, record_outputs(SCHEME_PORTS["rceil"], calls))
    record = found.to_dict()
    assert set(record["chosen_rule"]) == {f.name for f in fields(ScaleRule)}
    assert {"scheme", "kernel", "status", "calls_examined", "candidates_examined"} <= set(record)
    assert record["candidates_examined"] > 0 and record["held_fixed"] == HELD_FIXED
    assert record["first_unexplained_call"] == ""


def test_a_varied_rule_is_reported_as_its_nearest_named_rule_with_the_axis_changed() -> None:
    varied = replace(RULES["vllm-per-token"], name="mine", apply=Apply.RECIPROCAL)
    calls = gq_calls("per-token", "vllm-per-token")
    outputs = record_outputs(lambda x: scheme_quant(x, varied), calls)
    found = infer_rule("per-token", "mine", calls, outputs)
    assert found.status == "reproduced" and found.nearest_named == "vllm-per-token"
    assert found.differing == {"apply": ("divide", "reciprocal")}
    assert declaration(varied) in {declaration(r) for r in found.matching}
