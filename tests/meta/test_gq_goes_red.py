"""GQ goes red on planted defects, whatever the kernel does to its input or claims."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from fp8lab.cli.gates_table import format_table
from fp8lab.gates import GateStatus, run_gq
from fp8lab.gates.gq import _verdict, gq_calls
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4Order
from fp8lab.specs.scale_rules import (
    RULES,
    AmaxNan,
    Apply,
    Clamp,
    E8m0Inf,
    E8m0Zero,
    Pow2,
    SignedZero,
)

# rule -> (scheme, planted defect): one scale-rule bug class each
PLANTED = {
    "vllm-per-tensor": ("per-tensor", {"clamp": Clamp.MAX_THEN_MIN}),
    "vllm-per-token": ("per-token", {"min_scale": None}),
    "vllm-native-per-token": ("per-token", {"apply": Apply.DIVIDE}),
    "vllm-per-group": ("per-group", {"amax_floor": None}),
    "vllm-per-group-ue8m0": ("per-group", {"pow2": Pow2.NONE}),
    "ocp-floor": ("mxfp8", {"pow2": Pow2.RCEIL, "scale_from": Apply.RECIPROCAL}),
    "rceil": ("mxfp8", {"pow2": Pow2.OCP_FLOOR}),
    "torchao-0.18-mxfp8-floor": ("mxfp8", {"e8m0_zero": E8m0Zero.OCP}),
    "torchao-0.18-mxfp8-rceil": ("mxfp8", {"e8m0_inf": E8m0Inf.NAN_BYTE}),
    "torchao-0.18-float8-tensorwise": ("per-tensor", {"amax_floor": 1e-10}),
    "torchao-0.18-float8-rowwise": ("per-token", {"amax_nan": AmaxNan.SKIP}),
    "compressed-tensors-0.20-tensor": ("per-tensor", {"signed_zero": SignedZero.KEEP}),
    "compressed-tensors-0.20-token": ("per-token", {"zero_scale": None, "input_zero_scale": None}),
    "compressed-tensors-0.20-group-128": ("per-group", {"apply": Apply.RECIPROCAL}),
    "compressed-tensors-0.20-channel": ("per-token", {"signed_zero": SignedZero.KEEP}),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_defect_fails_gq(name: str) -> None:
    scheme, change = PLANTED[name]
    bad = dataclasses.replace(RULES[name], **change)  # type: ignore[arg-type]
    result = run_gq(lambda x: scheme_quant(x, bad), scheme=scheme, rule=name)
    assert result.status is GateStatus.FAIL and result.mismatches + result.nan_code_mismatches > 0
    assert result.first_offenders and any(result.mismatches_by_class.values())


def test_one_flipped_scale_byte_fails() -> None:
    def kernel(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes, scales = scheme_quant(x, "rceil")
        scales = scales.copy()
        scales.reshape(-1)[0] ^= 1
        return codes, scales

    result = run_gq(kernel, scheme="mxfp8", rule="rceil", input_dtypes=["float32"])
    assert result.status is GateStatus.FAIL
    assert result.mismatches == result.cases  # one scale word per case
    # a scale offender is no input word: it is named by its position, also in the table
    assert {o.input_hex for o in result.first_offenders} == {"scale[0]"}
    table = format_table([result])
    assert " scale[0] got 0x" in table and "x=scale[" not in table


# an input word's bits in hex, in its dtype's own width
INPUT_HEX = {"float32": re.compile(r"0x[0-9a-f]{8}"), "bfloat16": re.compile(r"0x[0-9a-f]{4}")}


def test_an_offender_gives_its_input_word_in_hex() -> None:
    """input_hex in the JSON record is the input word's bit pattern, in its own dtype's width."""
    scheme, rule = "per-token", "vllm-native-per-token"
    calls = {c.name: c for c in gq_calls(scheme, rule)}
    result = run_gq(
        lambda x: scheme_quant(x, "vllm-per-token"), scheme=scheme, rule=rule, max_offenders=10**6
    )
    assert result.status is GateStatus.FAIL
    offenders = json.loads(json.dumps(result.to_dict()))["first_offenders"]
    words = [o for o in offenders if not o["input_hex"].startswith("scale[")]
    for o in words:
        dtype = o["case"].rsplit("/", 1)[1]
        assert INPUT_HEX[dtype].fullmatch(o["input_hex"]), o
        x = calls[o["case"]].args[0].reshape(-1)
        bits = x[o["index"] : o["index"] + 1].view(f"uint{8 * x.itemsize}")[0]
        assert int(o["input_hex"], 16) == int(bits), o
    assert {o["case"].rsplit("/", 1)[1] for o in words} == {"float32", "bfloat16"}
    assert all(re.fullmatch(r"scale\[\d+\]", o["input_hex"]) for o in offenders if o not in words)
    bf16 = run_gq(
        lambda x: scheme_quant(x, "vllm-per-token"),
        scheme=scheme,
        rule=rule,
        input_dtypes=["bfloat16"],
    )
    table = format_table([bf16])  # the table prints what the record holds
    assert re.search(r"/bfloat16 \S+ word \d+ x=0x[0-9a-f]{4} got 0x", table), table


def test_writing_into_the_input_changes_no_verdict() -> None:
    def writes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = scheme_quant(x, "vllm-per-group")
        x.flags.writeable = True  # its own private copy: the harness never reads it
        x[...] = 0
        return out

    def raises_on_write(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x[0, 0] = 0  # read-only: numpy refuses, and the case fails
        return scheme_quant(x, "vllm-per-group")

    assert run_gq(writes, scheme="per-group", rule="vllm-per-group").status is GateStatus.PASS
    failed = run_gq(raises_on_write, scheme="per-group", rule="vllm-per-group")
    assert failed.status is GateStatus.FAIL and "read-only" in failed.reason


def test_a_kernel_that_exits_or_returns_junk_fails_its_cases() -> None:
    def exits(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise SystemExit(0)

    def junk(x: np.ndarray) -> object:
        codes, scales = scheme_quant(x, "vllm-per-token")
        return codes, scales.astype(np.float64)

    for func in (exits, junk):
        result = run_gq(func, scheme="per-token", rule="vllm-per-token")
        assert result.status is GateStatus.FAIL and result.assertions_failed == result.cases


def test_the_rule_is_the_callers_not_the_kernels() -> None:
    """A kernel cannot pass by declaring the rule it follows: GQ never asks."""

    def kernel(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return scheme_quant(x, "vllm-native-per-token")

    kernel.rule = "vllm-native-per-token"  # type: ignore[attr-defined]
    assert run_gq(kernel, scheme="per-token", rule="vllm-per-token").status is GateStatus.FAIL


def test_vacuity_guards() -> None:
    assert _verdict([], 0, 0) == (GateStatus.FAIL, "examined nothing")
    from fp8lab.gates import CaseResult

    case = CaseResult("zero/float32", 10, 1, 0, 0, 0, 0.0)
    assert _verdict([case], 0, 8)[1].startswith("vacuous")


def test_gq_that_examined_nothing_fails_through_its_api() -> None:
    from fp8lab.kernels.scheme import SCHEME_PORTS

    record = run_gq(SCHEME_PORTS["rceil"], scheme="mxfp8", rule="rceil", input_dtypes=[])
    assert record.status is GateStatus.FAIL and record.reason == "examined nothing"
    assert record.cases == record.words == 0


@pytest.mark.parametrize(
    ("scheme", "rule"),
    [
        ("per-group", dataclasses.replace(RULES["vllm-per-group"], amax_floor=None)),
        ("nvfp4", dataclasses.replace(NVFP4_RULES["te-nvfp4-divide"], order=Nvfp4Order.FUSED)),
    ],
)
def test_a_rule_object_under_a_published_name_must_be_that_rule(scheme: str, rule: object) -> None:
    """The record names the rule; a changed copy named like the published one is refused."""
    with pytest.raises(ValueError, match="differs from the published rule"):
        run_gq(lambda x: x, scheme=scheme, rule=rule)  # type: ignore[arg-type]


def test_given_calls_do_not_skip_the_input_dtype_check() -> None:
    """An unknown input dtype is refused whether GQ makes its calls or is handed them."""
    with pytest.raises(ValueError, match="unknown input dtypes"):
        run_gq(
            lambda x: x, scheme="per-token", rule="vllm-per-token", input_dtypes=["f64"], calls=[]
        )
