"""Test the testers: each gate goes red on a planted defect, each comparator rejects."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import GateStatus, run_g1
from fp8lab.gates.compare import assert_bitexact, assert_max_ulp, compare_codes
from fp8lab.kernels import FunctionKernel
from fp8lab.kernels.planted import PLANTED_DEFECTS as PLANTED
from fp8lab.specs.formats import FORMATS
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun
from tests.defects import always_zero, raises, returns_float

# Which word classes each defect must trip, at the least.
EXPECTED_CLASSES = {
    "scale_ignored": {"random", "tie", "ladder"},
    "divide": {"tie"},
    "no_saturation": {"saturation"},
    "truncation": {"random", "tie"},
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_g1_goes_red_on_each_planted_defect(name: str) -> None:
    result = run_g1(PLANTED[name])
    assert result.status is GateStatus.FAIL
    assert result.assertions_failed > 0 and result.mismatches > 0
    hit = {cls for cls, n in result.mismatches_by_class.items() if n}
    assert EXPECTED_CLASSES[name] <= hit
    assert result.first_offenders


@pytest.mark.parametrize("func", [raises, returns_float])
def test_g1_fails_a_kernel_that_raises_or_returns_the_wrong_type(func: object) -> None:
    result = run_g1(FunctionKernel("broken", func))  # type: ignore[arg-type]
    assert result.status is GateStatus.FAIL
    assert result.reason and all(c.error for c in result.case_results)


def test_g1_fails_a_constant_kernel() -> None:
    assert run_g1(FunctionKernel("zero", always_zero)).status is GateStatus.FAIL


def test_exhaustive_goes_red_on_a_planted_defect() -> None:
    record = run_exhaustive(
        "tests.defects:truncate_encode",
        "scan",
        "e4m3fn",
        saturate=True,
        run=RangeRun(start=0x3F80_0000, stop=0x3F90_0000, workers=1),
    )
    assert record.status == "FAIL" and record.mismatches > 0


E4M3 = FORMATS["e4m3fn"]


@pytest.mark.parametrize(
    ("got", "want"),
    [
        (np.array([-0.0], np.float32), np.array([0.0], np.float32)),
        (np.array([np.nan], np.float32), np.array([0.0], np.float32)),
        (np.array([1.0], np.float32), np.array([np.nextafter(np.float32(1), np.float32(2))])),
    ],
)
def test_comparators_reject_signed_zero_nan_and_one_ulp(got: np.ndarray, want: np.ndarray) -> None:
    want = want.astype(got.dtype)
    with pytest.raises(AssertionError, match="not bit-exact"):
        assert_bitexact(got, want)
    with pytest.raises(AssertionError, match=r"ulp|NaN"):
        assert_max_ulp(got, want, 0)


def test_code_comparison_rejects_neighbours_and_separates_nan_codes() -> None:
    got = np.array([0x00, 0x39, 0x7F, 0x7F], np.uint8)
    want = np.array([0x80, 0x38, 0xFF, 0x7E], np.uint8)
    result = compare_codes(got, want, E4M3)
    assert result.mismatch.tolist() == [True, True, False, True]
    assert result.nan_code_mismatches == 1 and result.mismatches == 3


def test_comparators_report_measurements_and_refuse_empty_input() -> None:
    x = np.array([1.0, 2.0], np.float32)
    assert assert_bitexact(x, x.copy()) == 2
    assert assert_max_ulp(x, np.nextafter(x, np.float32(3)), 1) == 1
    assert assert_max_ulp(np.array([np.nan]), np.array([np.nan]), 0) == 0
    with pytest.raises(AssertionError, match="examined nothing"):
        assert_bitexact(x[:0], x[:0])
    with pytest.raises(AssertionError, match="examined nothing"):
        assert_max_ulp(x[:0], x[:0], 0)
    with pytest.raises(AssertionError, match="float64"):
        assert_bitexact(x, x.astype(np.float64))
    with pytest.raises(ValueError, match="compare codes"):
        compare_codes(x.astype(np.uint8), x.astype(np.uint8)[:1], E4M3)
