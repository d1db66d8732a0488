"""``rules infer`` goes red: a kernel no declaration reproduces is named as such, with the nearest.

The port of a named rule with the low bit of one code flipped on one call
fits no candidate; the search reports ``not-reproduced``, that rule as the
nearest (no axis changed), the one mismatching word in its word class, the
axes it held fixed and the call no declaration it tried explains.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.gates.gq import gq_calls
from fp8lab.gates.rule_candidates import HELD_FIXED
from fp8lab.gates.rule_inference import infer_rule, record_outputs
from fp8lab.kernels.scheme import SCHEME_PORTS


@pytest.mark.parametrize(
    ("scheme", "name"),
    [("per-token", "vllm-per-token"), ("mxfp8", "rceil"), ("nvfp4", "te-nvfp4-divide")],
)
def test_one_flipped_code_bit_reproduces_nothing(scheme: str, name: str) -> None:
    calls = gq_calls(scheme, name)
    outputs = record_outputs(SCHEME_PORTS[name], calls)
    target = next(i for i, c in enumerate(calls) if c.label == "random")
    codes, scales = outputs[target]
    flipped = codes.copy()
    flipped.reshape(-1)[3] ^= np.uint8(1)
    outputs[target] = (flipped, scales)
    found = infer_rule(scheme, "flipped", calls, outputs)
    assert found.status == "not-reproduced" and found.matching == ()
    assert found.nearest_named == name and found.differing == {}
    check: Any = found.check
    assert check.mismatches == 1 and dict(check.mismatches_by_class)["random"] == 1
    assert found.to_dict()["mismatches"]["words"] == 1
    if scheme != "nvfp4":  # the search names the call it could not explain, and what it held
        assert found.first_unexplained == f"{calls[target].name} (random): its codes"
        assert found.held_fixed == HELD_FIXED
