"""GF goes red on every planted chain defect, and on kernels that cheat."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from fp8lab.gates import GateStatus
from fp8lab.gates.gf import run_gf
from fp8lab.kernels.chain import PORTS
from tests.meta.chain_defects import DEFECTS

CPP = "vllm-cpp-standalone-rmsnorm-fp8"
CUDA = "vllm-cuda-fused-add-rmsnorm-static-fp8"


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_defect_fails_at_its_step(name: str) -> None:
    kernel, recipe, step = DEFECTS[name]
    result = run_gf(kernel, chain=kernel.chain, recipe=recipe)
    assert result.status is GateStatus.FAIL
    assert result.assertions_failed >= 3, result.assertions_failed
    # eps outside the sqrt: the defective trace's mean already lacks eps
    expected = "mean_eps" if name == "eps-outside-sqrt" else step
    assert result.measured["first_failing_step"] == expected


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_defect_moves_output_bytes_without_a_trace(name: str) -> None:
    kernel, recipe, _ = DEFECTS[name]

    def plain(*args: Any) -> Any:
        return kernel(*args)

    result = run_gf(plain, chain=kernel.chain, recipe=recipe)
    assert result.status is GateStatus.FAIL
    assert result.mismatches >= 3
    assert sum(c.assertions_failed > 0 for c in result.case_results) >= 3
    assert result.measured["prefix_steps_checked"] == []


def test_a_kernel_writing_into_its_inputs_fails() -> None:
    port = PORTS[CPP]

    def writer(x: Any, residual: Any, w: Any, scale: Any, eps: float) -> Any:
        x[...] = 0
        return port(x, residual, w, scale, eps)

    result = run_gf(writer, chain="rmsnorm", recipe=CPP)
    assert result.status is GateStatus.FAIL
    assert "read-only" in result.reason


def test_zeros_wrong_types_and_nothing_examined_fail() -> None:
    def zeros(x: Any, residual: Any, w: Any, scale: Any, eps: float) -> Any:
        return np.zeros(x.shape, np.uint8), residual

    def floats(x: Any, residual: Any, w: Any, scale: Any, eps: float) -> Any:
        return np.zeros(x.shape, np.float32), residual

    assert run_gf(zeros, chain="rmsnorm", recipe=CPP).status is GateStatus.FAIL
    bad = run_gf(floats, chain="rmsnorm", recipe=CPP)
    assert bad.status is GateStatus.FAIL and "want uint8" in bad.reason
    empty = run_gf(PORTS[CPP], chain="rmsnorm", recipe=CPP, scales=())
    assert empty.status is GateStatus.FAIL and empty.reason == "examined nothing"


def test_a_wrong_residual_output_fails() -> None:
    port = PORTS[CPP]

    def no_residual(x: Any, residual: Any, w: Any, scale: Any, eps: float) -> Any:
        return port(x, residual, w, scale, eps)[0], residual  # the input, not the sum

    result = run_gf(no_residual, chain="rmsnorm", recipe=CPP)
    assert result.status is GateStatus.FAIL
    assert result.measured["residual_mismatches"] > 0


def test_a_trace_cannot_vouch_for_wrong_codes_and_names_a_wrong_step() -> None:
    port = PORTS[CPP]

    class Liar:
        name = "liar"

        def __call__(self, *args: Any) -> Any:
            codes, res = port(*args)
            return codes ^ np.uint8(1), res

        def trace(self, *args: Any) -> Any:
            return port.trace(*args)

    class WrongStep:
        name = "wrong-step"

        def __call__(self, *args: Any) -> Any:
            return port(*args)

        def trace(self, *args: Any) -> Any:
            t = port.trace(*args)
            t["rsqrt"] = np.nextafter(t["rsqrt"], np.float32(np.inf))
            return t

    assert run_gf(Liar(), chain="rmsnorm", recipe=CPP).status is GateStatus.FAIL
    wrong = run_gf(WrongStep(), chain="rmsnorm", recipe=CPP)
    assert wrong.status is GateStatus.FAIL
    assert wrong.measured["first_failing_step"] == "rsqrt"
    assert wrong.mismatches == 0


def test_the_nan_code_is_the_recipes() -> None:
    """vLLM CUDA sends NaN to 0x7E; a kernel emitting vllm.cpp's 0x7F fails the CUDA recipe."""
    result = run_gf(PORTS[CPP], chain="rmsnorm", recipe=CUDA)
    assert result.status is GateStatus.FAIL
    assert any("nonfinite" in o.word_class for o in result.first_offenders) or result.mismatches


def test_standalone_difference_is_measured_not_judged() -> None:
    same = run_gf(PORTS[CPP], chain="rmsnorm", recipe=CPP)
    cuda = run_gf(PORTS[CUDA], chain="rmsnorm", recipe=CUDA)
    assert same.status is cuda.status is GateStatus.PASS
    assert same.measured["standalone_bytes_differ"] == 0
    assert cuda.measured["standalone_bytes_differ"] > 0


def test_unknown_chain_or_recipe_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown chain"):
        run_gf(PORTS[CPP], chain="layernorm", recipe=CPP)
    with pytest.raises(ValueError, match="unknown silu-mul recipe"):
        run_gf(PORTS[CPP], chain="silu-mul", recipe=CPP)


def test_junk_residuals_and_traces_fail_without_crashing_the_gate() -> None:
    port = PORTS[CPP]

    class Junk:
        name = "junk"

        def __call__(self, *args: Any) -> Any:
            return port(*args)[0], "not an array"

        def trace(self, *args: Any) -> Any:
            return {"rsqrt": {"a": 1}, "weight": [[1.0]]}

    result = run_gf(Junk(), chain="rmsnorm", recipe=CPP)
    assert result.status is GateStatus.FAIL
    assert result.measured["first_failing_step"] == "rsqrt"


@pytest.mark.parametrize(
    ("make", "got"),
    [
        (lambda r: r.astype(np.float64), "float64"),
        (lambda r: r.astype(np.float32).astype(str), "str"),
        (lambda r: r[:, :-1], "bfloat16 [35, 255]"),
    ],
)
def test_a_residual_out_of_another_type_fails_naming_what_was_expected(
    make: Callable[[np.ndarray], np.ndarray], got: str
) -> None:
    port = PORTS[CPP]

    def typed(*args: Any) -> Any:
        codes, res = port(*args)
        return codes, None if res is None else make(res)

    result = run_gf(typed, chain="rmsnorm", recipe=CPP)
    assert result.status is GateStatus.FAIL
    assert "residual_out: expected bfloat16 [35, 256], got " + got.split(" [")[0] in result.reason
