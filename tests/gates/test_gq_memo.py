"""GQ's remembered expectations: the reference's own, per rule and arguments, read-only."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fp8lab.gates import gq_memo
from fp8lab.gates.gq import gq_calls, run_gq
from fp8lab.kernels.scheme import SCHEME_PORTS
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES


def test_an_expectation_is_computed_once_per_rule_and_arguments() -> None:
    rule = RULES["vllm-per-token"]
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(2, 32)
    computed = []

    def compute() -> tuple[np.ndarray, np.ndarray]:
        computed.append(1)
        return reference_scheme_quant(x, rule)

    first = gq_memo.remembered_expectation(rule, (x,), compute)
    again = gq_memo.remembered_expectation(rule, (x.copy(),), compute)
    assert len(computed) == 1 and again is first
    want = reference_scheme_quant(x, rule)
    assert first[0].tobytes() == want[0].tobytes() and first[1].tobytes() == want[1].tobytes()
    with pytest.raises(ValueError, match="read-only"):
        first[0][0, 0] = 0
    y = x.copy()
    y.view(np.uint32)[1, 7] ^= 1  # one bit of one input
    gq_memo.remembered_expectation(rule, (y,), compute)
    gq_memo.remembered_expectation(replace(rule, name="other"), (x,), compute)
    gq_memo.remembered_expectation(rule, (x.reshape(4, 16),), compute)
    assert len(computed) == 4  # another input, rule or shape is another key


def test_a_failed_computation_is_not_kept() -> None:
    rule = RULES["vllm-per-token"]
    x = np.full((1, 8), 7.0, np.float32)

    def fail() -> tuple[np.ndarray, np.ndarray]:
        raise ValueError("no expectation")

    with pytest.raises(ValueError, match="no expectation"):
        gq_memo.remembered_expectation(rule, (x,), fail)
    with pytest.raises(ValueError, match="no expectation"):
        gq_memo.remembered_expectation(rule, (x,), fail)


def test_a_wrong_kernel_still_fails_after_the_right_one_filled_the_memo() -> None:
    port = SCHEME_PORTS["vllm-per-token"]
    calls = gq_calls("per-token", "vllm-per-token")
    assert run_gq(port, scheme="per-token", rule="vllm-per-token").status.name == "PASS"

    def off_by_one(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes, scales = port(x)
        codes = np.array(codes, copy=True)
        codes.reshape(-1)[0] ^= 1
        return codes, scales

    result = run_gq(off_by_one, scheme="per-token", rule="vllm-per-token", calls=calls)
    assert result.status.name == "FAIL" and result.assertions_failed >= 1


def test_the_keep_most_recently_used_are_kept_and_no_more() -> None:
    rule = replace(RULES["vllm-per-token"], name="kept-test")
    done = (np.zeros(1, np.uint8), np.ones(1, np.float32))
    computed: list[int] = []

    def call(i: int) -> None:
        x = np.array([i], np.int64)
        gq_memo.remembered_expectation(rule, (x,), lambda: (computed.append(i), done)[1])

    for i in range(gq_memo.KEEP):
        call(i)
    call(0)  # used again: 1 is now the least recently used
    call(gq_memo.KEEP)
    assert len(computed) == gq_memo.KEEP + 1 and len(gq_memo.KEPT) == gq_memo.KEEP
    call(0)
    call(1)
    assert computed[gq_memo.KEEP + 1 :] == [1]
