"""G2h: the CPU kernel against the CUDA source built for the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GateStatus, run_g2h
from fp8lab.gates.g2h import G2H_SCOPE
from fp8lab.populations import g1_population
from fp8lab.specs.gates import GATES, load
from tests.cuda.conftest import host_library, needs_gxx

# the 448/464 top, e5m2's 57344/61440 top, the smallest subnormals, the inf/NaN edge
PATTERNS = (
    (0x43DF_F000, 0x43E8_1000),
    (0x475F_F000, 0x4778_1000),
    (0x3A00_0000, 0x3A90_0000),
    (0x7F7F_F000, 0x7F80_4000),
    (0xFF7F_F000, 0xFF80_4000),
)
WORDS = g1_population(1.0).words.size


@needs_gxx
def test_g2h_passes_the_upstream_kernel_and_counts_what_it_examined() -> None:
    host_library()
    result = run_g2h(patterns=PATTERNS)
    assert result.status is GateStatus.PASS, result.reason
    assert result.gate == "G2h" and result.kernel == "upstream"
    # Both encoders (e4m3fn, e5m2) over every range.
    assert result.cases == 14 + 2 * len(PATTERNS)
    assert result.assertions == 14 + 4 * len(PATTERNS)
    assert result.words == 14 * WORDS + 2 * sum(b - a for a, b in PATTERNS)
    nans = 2 * 0x3FFF
    # The header's e5m2 NaN is 0x7F, not fp8lab's canonical 0x7E: a NaN code all the same.
    assert result.measured == {
        "nan->canonical": nans,
        "nan->signed": 0,
        "nan->not-nan": 0,
        "e5m2 nan->canonical": 0,
        "e5m2 nan->signed": 0,
        "e5m2 nan->not-nan": 0,
    }


def test_the_record_says_what_it_proves_and_what_it_does_not() -> None:
    assert "cuda_fp8.hpp" in G2H_SCOPE and "-NaN gives 0x7F" in G2H_SCOPE
    assert "Does not prove: the sm_89+ device instruction cvt.rn.satfinite.e4m3x2.f32" in G2H_SCOPE
    assert load(GATES["G2h"].runner) is run_g2h


@needs_gxx
def test_g2h_that_examined_nothing_fails() -> None:
    host_library()
    result = run_g2h(scales=(), input_dtypes=(), patterns=())
    assert result.status is GateStatus.FAIL and result.reason == "examined nothing"
    assert result.scope == G2H_SCOPE


def test_g2h_without_headers_is_pending(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FP8LAB_CUDA_INCLUDE", str(tmp_path))
    result = run_g2h(patterns=PATTERNS)
    assert result.status is GateStatus.PENDING and result.words == 0
    assert "CUDA headers not found" in result.reason


@needs_gxx
def test_cli_runs_g2h_on_the_upstream_kernel(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    host_library()
    monkeypatch.setattr("fp8lab.gates.g2h.G2H_PATTERNS", PATTERNS[:1])
    assert main(["gates", "--gate", "G2h"]) == 0
    out = capsys.readouterr().out
    assert "G2h   upstream  PASS" in out and "measured: nan->canonical=0" in out
