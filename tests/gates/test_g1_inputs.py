"""G1 hands the kernel private read-only inputs and owns every expectation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.gates import GateStatus, run_g1
from fp8lab.kernels import BUILTIN_KERNELS, FunctionKernel

GOOD = BUILTIN_KERNELS["vllm_cpp"]


def clips_in_place(x: np.ndarray, scale: Any) -> np.ndarray:
    np.clip(x, -1, 1, out=x)
    return GOOD.quantize(x, scale)


def right_then_writes_nan(x: np.ndarray, scale: Any) -> np.ndarray:
    out = GOOD.quantize(x, scale)
    x[...] = np.nan
    return out


def writes_nan_then_zero(x: np.ndarray, scale: Any) -> np.ndarray:
    x.setflags(write=True)  # even a kernel that re-enables writes touches only its copy
    x[...] = np.nan
    return np.zeros(x.shape, np.uint8)


def exits(x: np.ndarray, scale: Any) -> np.ndarray:
    raise SystemExit(0)


class _LyingCodes(np.ndarray):
    """Codes whose comparisons claim equality with anything."""

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        return np.zeros(self.shape, np.bool_)

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        return np.ones(self.shape, np.bool_)


def returns_lying_codes(x: np.ndarray, scale: Any) -> np.ndarray:
    return np.full(x.shape, 0x38, np.uint8).view(_LyingCodes)


@pytest.mark.parametrize("func", [clips_in_place, right_then_writes_nan])
def test_a_kernel_writing_into_its_input_cannot_pass(func: Any) -> None:
    result = run_g1(FunctionKernel(func.__name__, func))
    assert result.status is GateStatus.FAIL
    assert "read-only" in result.reason


def test_offender_hex_comes_from_the_harness_copy() -> None:
    result = run_g1(FunctionKernel("scribbler", writes_nan_then_zero), scales=(1.0,))
    assert result.status is GateStatus.FAIL and result.first_offenders
    assert all(o.input_hex != "0x7fc00000" for o in result.first_offenders)
    assert result.first_offenders[0].input_hex != "0x7fc00000"


def test_a_kernel_that_exits_is_a_failed_case_not_an_exit() -> None:
    result = run_g1(FunctionKernel("exits", exits))
    assert result.status is GateStatus.FAIL
    assert all("SystemExit" in c.error for c in result.case_results)


def test_returned_codes_cannot_vouch_for_themselves() -> None:
    result = run_g1(FunctionKernel("liar", returns_lying_codes))
    assert result.status is GateStatus.FAIL and result.mismatches > 0
