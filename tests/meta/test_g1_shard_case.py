"""G1's shard case goes red when the per-shard collapse is wrong.

The kernel under test is handed the shard scales and collapses them itself;
the gate's reference takes the max on its own, so a regression planted in
``collapse_shard_scales`` (the code the built-in kernels use) turns G1 red.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fp8lab.kernels.scale as scale_module
from fp8lab.gates import GateStatus, run_g1
from fp8lab.gates.g1 import G1_SHARD_SCALES
from fp8lab.kernels import BUILTIN_KERNELS, FunctionKernel, reciprocal
from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.mutants.catalogue import CATALOGUE
from fp8lab.mutants.runner import run_catalogue

_SHARD_CASES = ("s=max(0.3, 0.9, 0.0625)/float32", "s=max(0.3, 0.9, 0.0625)/bfloat16")


def _failed_cases(result: Any) -> set[str]:
    return {c.name for c in result.case_results if c.assertions_failed}


@pytest.mark.parametrize("wrong", [min, lambda v: v[0], lambda v: v[-1]])
def test_a_collapse_regression_in_the_kernel_side_helper_turns_g1_red(
    monkeypatch: pytest.MonkeyPatch, wrong: Any
) -> None:
    monkeypatch.setattr(
        scale_module,
        "collapse_shard_scales",
        lambda scales: np.float32(wrong([np.float32(v) for v in np.ravel(scales)])),
    )
    result = run_g1(BUILTIN_KERNELS["vllm_cpp"], shard_scales=G1_SHARD_SCALES)
    assert result.status is GateStatus.FAIL
    assert _failed_cases(result) == set(_SHARD_CASES)
    assert result.assertions_failed >= 3


def test_the_kernel_receives_the_shard_scales_themselves() -> None:
    seen: list[Any] = []

    def spy(x: np.ndarray, s: Any) -> np.ndarray:
        seen.append(np.array(s, copy=True))
        return BUILTIN_KERNELS["vllm_cpp"].quantize(x, s)

    assert (
        run_g1(FunctionKernel("spy", spy), shard_scales=G1_SHARD_SCALES).status is GateStatus.PASS
    )
    shards = [s for s in seen if np.ndim(s) == 1 and np.size(s) > 1]
    assert len(shards) == 2
    assert all(
        s.dtype == np.float32 and s.tolist() == list(np.float32(G1_SHARD_SCALES)) for s in shards
    )


def test_a_kernel_that_cannot_take_shard_scales_fails_the_shard_case() -> None:
    def scalar_only(x: np.ndarray, s: Any) -> np.ndarray:
        return BUILTIN_KERNELS["vllm_cpp"].encoder(widen_activation(x) * reciprocal(s))

    result = run_g1(FunctionKernel("scalar_only", scalar_only), shard_scales=G1_SHARD_SCALES)
    assert result.status is GateStatus.FAIL and "s=max" in result.reason


def test_k12_goes_through_the_collapse_and_is_killed_with_margin() -> None:
    k12 = [m for m in CATALOGUE if m.id == "K12"]
    (result,) = run_catalogue(("G1",), catalogue=k12)
    assert result.margin >= 3
    (seed_only,) = run_catalogue(("G1",), catalogue=k12, special_words=False)
    assert seed_only.margin == 0  # only the shard case can see it
