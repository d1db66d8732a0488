"""gate_g1's host-built CUDA checks: G2h PASS or PENDING is as expected, anything else is not."""

from __future__ import annotations

import dataclasses

import pytest

from fp8lab.cuda.host_build import CudaHostBuildError
from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.studies import cuda_host
from fp8lab.studies.cuda_host import conversion_facts, g2h_unexpected

PASSED = GateResult(
    gate="G2h",
    kernel="upstream",
    status=GateStatus.PASS,
    reason="",
    cases=3,
    assertions=6,
    assertions_failed=0,
    words=100,
    mismatches=0,
    nan_code_mismatches=0,
    measured={"nan->signed": 0, "nan->canonical": 4},
)


def test_a_pass_with_canonical_nans_and_a_pending_with_a_reason_are_expected() -> None:
    assert g2h_unexpected(PASSED) == []
    pending = dataclasses.replace(
        PASSED, status=GateStatus.PENDING, reason="g++ not found", words=0, measured={}
    )
    assert g2h_unexpected(pending) == []


@pytest.mark.parametrize(
    "planted",
    [
        {"status": GateStatus.FAIL, "reason": "CPU and CUDA quant differ in 1 of 3 cases"},
        {"words": 0},
        {"measured": {"nan->signed": 1, "nan->canonical": 3}},
        {"measured": {"nan->signed": 0, "nan->canonical": 0}},
        {"measured": {}},
        {"status": GateStatus.PENDING, "reason": ""},
        {"status": GateStatus.PENDING, "reason": "owed"},
    ],
)
def test_a_fail_a_vacuous_pass_signed_nans_or_a_pending_that_ran_go_red(
    planted: dict[str, object],
) -> None:
    assert g2h_unexpected(dataclasses.replace(PASSED, **planted))  # type: ignore[arg-type]


def test_a_compile_error_is_raised_not_called_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise CudaHostBuildError("cuda_fp8.hpp unreadable")

    monkeypatch.setattr(cuda_host, "check_conversion_facts", broken)
    with pytest.raises(CudaHostBuildError):
        conversion_facts()
