from __future__ import annotations

import numpy as np
import pytest

from fp8lab.refs import (
    ML_DTYPES_KEEPS_NAN_SIGN,
    ScanPolicy,
    ml_dtypes_encode,
    scan_encode,
    scan_pattern_range,
    scan_scalar,
)
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS
from tests.conftest import midpoint_probes, special_probes

POLICIES = [ScanPolicy(s, k) for s in (True, False) for k in (True, False)]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_three_evaluations_of_the_scan_agree(fmt: FormatSpec, policy: ScanPolicy) -> None:
    x = np.concatenate([midpoint_probes(fmt, np.float32), special_probes(fmt).astype(np.float32)])
    literal = np.array([scan_scalar(float(v), fmt, policy) for v in x], np.uint8)
    assert np.array_equal(scan_encode(x, fmt, policy), literal)
    patterns = x.view(np.uint32).astype(np.int64)
    by_range = np.array(
        [scan_pattern_range(int(p), int(p) + 1, fmt, policy)[0] for p in patterns], np.uint8
    )
    assert np.array_equal(by_range, literal)


@pytest.mark.parametrize(
    "start", [0, 0x3A00_0000, 0x43E0_0000, 0x7F7F_0000, 0x8000_0000 - 77, 0xFF80_0000 - 5]
)
def test_pattern_range_expansion_equals_midpoint_search(start: int) -> None:
    fmt = FORMATS["e4m3fn"]
    policy = ScanPolicy(True, True)
    stop = min(start + (1 << 20), 1 << 32)
    x = np.arange(start, stop, dtype=np.uint64).astype(np.uint32).view(np.float32)
    assert np.array_equal(scan_pattern_range(start, stop, fmt, policy), scan_encode(x, fmt, policy))


def test_pattern_range_covers_all_patterns_exactly() -> None:
    fmt = FORMATS["e5m2"]
    whole = scan_pattern_range((1 << 32) - 10, 1 << 32, fmt, ScanPolicy(False, True))
    assert whole.tolist() == [0xFE] * 10  # negative NaN patterns keep their sign
    with pytest.raises(ValueError, match="inside"):
        scan_pattern_range(5, 1 << 33, fmt, ScanPolicy(True, True))


def test_scan_refuses_non_floats() -> None:
    with pytest.raises(TypeError, match="floats"):
        scan_encode(np.arange(3), FORMATS["e4m3fn"], ScanPolicy(True, True))


def test_ml_dtypes_oracle_states_and_applies_its_policy() -> None:
    fmt = FORMATS["e4m3fn"]
    x = np.array([500.0, -500.0, np.inf, -np.nan, 464.0], np.float32)
    assert ML_DTYPES_KEEPS_NAN_SIGN
    assert ml_dtypes_encode(x, fmt, saturate=False).tolist() == [0x7F, 0xFF, 0x7F, 0xFF, 0x7E]
    assert ml_dtypes_encode(x, fmt, saturate=True).tolist() == [0x7E, 0xFE, 0x7E, 0xFF, 0x7E]
    with pytest.raises(TypeError, match="floats"):
        ml_dtypes_encode(np.arange(2), fmt, saturate=True)
