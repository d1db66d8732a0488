"""``--nan any``: every NaN code of the format is the same NaN; no side is held to one."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.specs.formats import FORMATS
from fp8lab.sweeps.chunk_compare import compare_codes
from fp8lab.sweeps.exhaustive_chunks import chunk_patterns

START, STOP = 0xFF80_0000, 0xFF80_0400  # -inf, then negative NaNs


def _codes(keep_sign: bool) -> tuple[np.ndarray, np.ndarray]:
    x = chunk_patterns(START, STOP)
    canonical = np.where(np.isnan(x), 0x7F, 0xFE).astype(np.uint8)  # -inf saturates to -448
    other = canonical.copy()
    if keep_sign:
        other[np.isnan(x)] = 0xFF
    return canonical, other


@pytest.mark.parametrize("nan", ["canonical", "any"])
def test_a_nan_sign_disagreement_fails_canonical_and_passes_any(nan: str) -> None:
    x = chunk_patterns(START, STOP)
    result = compare_codes("fast", "scan", FORMATS["e4m3fn"], True, nan, START, x, _codes(True))
    assert result.by_class["nan_code"] == STOP - START - 1  # counted either way
    assert result.nan_code_unexplained == (0 if nan == "any" else STOP - START - 1)
    assert sum(v for k, v in result.by_class.items() if k != "nan_code") == 0


def test_any_leaves_real_mismatches_failures() -> None:
    x = chunk_patterns(START, STOP)
    a, b = _codes(False)
    b[0] = 0x7E  # -inf to +448: not a NaN-code difference
    result = compare_codes("fast", "scan", FORMATS["e4m3fn"], True, "any", START, x, (a, b))
    assert sum(v for k, v in result.by_class.items() if k != "nan_code") == 1


def test_the_command_takes_nan_any(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["exhaustive", "ml_dtypes", "scan", "--policy", "nosat", "--nan", "any"]
    span = ["--start", hex(START), "--stop", hex(STOP), "--workers", "1", "--quiet"]
    assert main([*argv, *span]) == 0
    out = capsys.readouterr().out
    assert "nan=any: PASS" in out and "every NaN code is the same NaN" in out
