"""GEMM inference names what a kernel does, from kernels written from the behaviour alone.

Each planted kernel (tests/gemm/planted_kernels.py) does one thing: scales every
product before the add, rounds a float32 sum once to bfloat16 or float16, rounds
every add to bfloat16, answers its first call otherwise, or sums in an order that
depends on the values. Inference must name each, G3 must pass it under the
declaration inference wrote and fail it under the sequential folded one, and a
value-dependent order stays not-fixed with the failed test and an input named.
"""

from __future__ import annotations

import dataclasses

import pytest

from fp8lab.gates.g3 import run_g3_report
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
from fp8lab.order import sizing
from fp8lab.order.gemm_infer import GemmInferenceError, infer_gemm
from fp8lab.populations.gemm import SEED_CASES
from fp8lab.specs.gemm_decl import GEMMS
from tests.gemm import planted_kernels as planted

SHAPE = (4, 16, 32)
SEQUENTIAL_FOLDED = dataclasses.replace(GEMMS["vllm_cpp"], k_multiple=1, n_multiple=1)


def kernel(func: object) -> FunctionMatmulKernel:
    return FunctionMatmulKernel(func.__name__, func)  # type: ignore[attr-defined, arg-type]


@pytest.mark.parametrize(
    ("func", "out", "rowwise", "want"),
    [
        (planted.product_scaled, "f32", False, ("product", "a-first", "float32", "once")),
        (planted.product_scaled, "f32", True, ("product", "a-first", "float32", "once")),
        (planted.bf16_once, "bf16", False, ("none", "b-first", "bfloat16", "once")),
        (planted.bf16_per_add, "bf16", False, ("none", "b-first", "bfloat16", "per-add")),
        (planted.f16_blas, "f16", False, ("none", "b-first", "float16", "once")),
    ],
)
def test_each_planted_gemm_is_named_and_passes_only_its_own_declaration(
    func: object, out: str, rowwise: bool, want: tuple[str, ...]
) -> None:
    found = infer_gemm(kernel(func), SHAPE, out=out, rowwise=rowwise)
    decl = found.declaration
    assert (decl.scales, decl.scale_order, decl.output, decl.output_rounding) == want
    assert decl.a_scale == ("row" if rowwise else "tensor") and decl.outputs == (out,)
    assert found.order.verdict == "reproduced" and found.order.first_call["differs"] == 0
    assert run_g3_report(kernel(func), declaration=decl).result.status.value == "PASS"
    wrong = dataclasses.replace(SEQUENTIAL_FOLDED, outputs=(out,), a_scale=decl.a_scale,
                                b_scale=decl.b_scale)  # fmt: skip
    failed = run_g3_report(kernel(func), declaration=wrong, cases=SEED_CASES[:2]).result
    assert failed.status.value == "FAIL" and failed.mismatches_by_class["bitwise"] > 0


def test_a_question_past_the_outputs_count_is_asked_in_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bfloat16 says counts up to 256 exactly; with a cap of 8 units a call, K = 32 asks each
    # question in 4 calls and adds the counts, as K > 258 does at the real cap
    monkeypatch.setitem(
        sizing.FP8_SIZES, "bf16", dataclasses.replace(sizing.FP8_SIZES["bf16"], cap=8)
    )
    found = infer_gemm(kernel(planted.bf16_once), (1, 16, 32), out="bf16")
    assert found.order.classes[0].family == "sequential" and found.order.calls > 4 * 30
    assert found.declaration.output == "bfloat16" and found.order.verdict == "reproduced"


def test_a_first_call_effect_is_named_and_never_read_as_a_tree() -> None:
    found = infer_gemm(planted.FirstCallDifferent(), SHAPE)
    assert (
        found.order.first_call["differs"] > 0 and "first call" in found.order.first_call["finding"]
    )
    assert [c.family for c in found.order.classes] == ["sequential"]
    assert found.declaration.scales == "folded"
    fresh = planted.FirstCallDifferent()
    report = run_g3_report(fresh, declaration=found.declaration)
    assert report.result.status.value == "PASS" and "first-call effect" in report.result.reason
    assert run_g3_report(planted.FirstCallDifferent(), declaration=found.declaration,
                         warmup=0).result.status.value == "FAIL"  # fmt: skip
    with pytest.raises(GemmInferenceError) as cold:
        infer_gemm(planted.FirstCallDifferent(), SHAPE, warmup=0)
    assert cold.value.record is not None
    assert cold.value.record.failed_tests[0]["test"] in ("first-call", "fits-a-tree")


def test_a_value_dependent_order_is_not_fixed_with_the_failed_test_and_an_input() -> None:
    with pytest.raises(GemmInferenceError, match="not-fixed") as caught:
        infer_gemm(kernel(planted.reversed_if_negative), SHAPE)
    record = caught.value.record
    assert record is not None and record.verdict == "not-fixed"
    (test,) = record.failed_tests
    assert test["test"] == "models-reproduce"
    assert set(test["input"]) == {"seed", "draw", "output", "got", "want"}
