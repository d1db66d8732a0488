"""fp8lab.testing: assert_gate passes a correct kernel, fails a wrong one with offenders in hex."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fp8lab.kernels import quant_static
from fp8lab.testing import assert_gate, filing_records_to


def _divide(x: np.ndarray, scale: float) -> np.ndarray:
    return quant_static(np.asarray(x, np.float32) / np.float32(scale), np.float32(1.0))


def test_a_correct_kernel_returns_its_record() -> None:
    record = assert_gate("G1", quant_static)
    assert record.status.value == "PASS" and record.words > 0 and record.cases == 14


def test_a_wrong_kernel_raises_with_its_row_and_hex_offenders() -> None:
    with pytest.raises(AssertionError) as info:
        assert_gate("G1", _divide)
    text = str(info.value)
    assert text.startswith("G1 _divide: FAIL: 14 cases,") and "mismatches in" in text
    assert " x=0x" in text and " got 0x" in text and " want 0x" in text


def test_a_failure_points_at_the_callers_test_not_inside_fp8lab() -> None:
    with pytest.raises(AssertionError) as info:
        assert_gate("G1", _divide)
    shown = [entry.frame.code.name for entry in info.traceback.filter(info)]
    assert shown == ["test_a_failure_points_at_the_callers_test_not_inside_fp8lab"]


def test_a_policy_passed_is_held_and_a_name_is_refused() -> None:
    from fp8lab.specs.nan import NAN_POLICIES

    record = assert_gate("G1", quant_static, nan_policy=NAN_POLICIES["canonical"])
    assert (record.nan_policy, record.nan_policy_source) == ("canonical", "caller")
    with pytest.raises(ValueError, match="not a NaN policy"):
        assert_gate("G1", quant_static, nan_policy="canonical")


def test_records_are_filed_when_asked(tmp_path: Path) -> None:
    filing_records_to(tmp_path)
    try:
        assert_gate("G1", quant_static)
        with pytest.raises(AssertionError):
            assert_gate("G1", _divide)
    finally:
        filing_records_to(None)
    filed = sorted(tmp_path.glob("*.json"))
    records = [json.loads(p.read_text()) for p in filed]
    statuses = {r["kernel"]: r["status"] for r in records}
    assert statuses == {"quant_static": "PASS", "_divide": "FAIL"}
