"""The exhaustive harness goes red whatever an encoder does to its input, NaN codes or itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import ALL_PATTERNS, RangeRun
from tests.in_process import assert_one_kernel_error_line

pytestmark = pytest.mark.process

M = "tests.meta.foreign_kernels"
ROOT = Path(__file__).resolve().parents[2]
AROUND_ONE = {"start": 0x3F80_0000, "stop": 0x3F90_0000}  # 1.0 .. 1.125: clipping changes codes
NEGATIVE_NANS = {"start": 0xFF80_0000, "stop": ALL_PATTERNS}


@pytest.mark.parametrize("user", ["clip_in_place_encoder", "sneaky_clip_encoder"])
def test_exhaustive_encoder_writing_its_input_gets_one_verdict_in_both_orders(user: str) -> None:
    spec = f"{M}:{user}"
    ab = run_exhaustive(
        spec, "fast", "e4m3fn", saturate=True, run=RangeRun(workers=1, **AROUND_ONE)
    )
    ba = run_exhaustive(
        "fast", spec, "e4m3fn", saturate=True, run=RangeRun(workers=1, **AROUND_ONE)
    )
    assert ab.status == ba.status != "PASS"
    assert (ab.mismatches, ab.fault != "") == (ba.mismatches, ba.fault != "")


def test_exhaustive_nan_code_disagreement_is_a_fail_without_a_fixed_policy_side() -> None:
    for a, b in ((f"{M}:nan_keeps_sign", "scan"), ("scan", f"{M}:nan_keeps_sign")):
        record = run_exhaustive(
            a, b, "e4m3fn", saturate=True, nan="canonical", run=RangeRun(workers=1, **NEGATIVE_NANS)
        )
        assert record.nan_code_mismatches == (1 << 23) - 1
        assert record.nan_code_exempt_side is None
        assert record.status == "FAIL"


def test_exhaustive_nan_code_exemption_names_the_fixed_policy_side() -> None:
    for a, b in (("fast", "ml_dtypes"), ("ml_dtypes", "fast")):
        record = run_exhaustive(
            a,
            b,
            "e4m3fn",
            saturate=False,
            nan="canonical",
            run=RangeRun(workers=1, **NEGATIVE_NANS),
        )
        assert record.status == "PASS" and record.nan_code_mismatches > 0
        assert record.nan_code_exempt_side == "ml_dtypes"
        assert record.nan_code_exempt_policy == "keep-sign"
        assert record.nan_code_unexplained == 0
    f32 = run_exhaustive(
        "fast",
        "f32tofp8",
        "e4m3fn",
        saturate=True,
        nan="keep-sign",
        run=RangeRun(workers=1, **NEGATIVE_NANS),
    )
    assert f32.status == "PASS" and f32.nan_code_mismatches > 0
    assert (f32.nan_code_exempt_side, f32.nan_code_exempt_policy) == ("f32tofp8", "canonical")
    same = run_exhaustive(
        "fast",
        "f32tofp8",
        "e4m3fn",
        saturate=True,
        nan="canonical",
        run=RangeRun(workers=1, **NEGATIVE_NANS),
    )
    assert same.nan_code_exempt_side is None and same.status == "PASS"


def test_exhaustive_exempt_side_does_not_hide_the_other_sides_nan_code() -> None:
    # ml_dtypes keeps the sign (exempt), but the user side must still emit the canonical code.
    record = run_exhaustive(
        f"{M}:nan_keeps_sign",
        "ml_dtypes",
        "e4m3fn",
        saturate=True,
        nan="canonical",
        run=RangeRun(workers=1, **NEGATIVE_NANS),
    )
    assert record.nan_code_exempt_side == "ml_dtypes"
    assert record.nan_code_unexplained > 0 and record.status == "FAIL"


@pytest.mark.parametrize("user", ["any_format", "any_format_spelled_format", "any_format_kwargs"])
def test_exhaustive_user_encoder_receives_the_format_and_policies_of_the_run(user: str) -> None:
    for fmt, saturate, nan in (("e5m2", False, "keep-sign"), ("e4m3fnuz", True, "canonical")):
        record = run_exhaustive(
            f"{M}:{user}",
            "scan",
            fmt,
            saturate=saturate,
            nan=nan,
            run=RangeRun(workers=1, **NEGATIVE_NANS),
        )
        assert record.status == "PASS", record.examples


def test_exhaustive_examples_are_the_lowest_patterns_whatever_the_completion_order() -> None:
    record = run_exhaustive(
        f"{M}:nan_keeps_sign",
        "scan",
        "e4m3fn",
        saturate=True,
        nan="canonical",
        run=RangeRun(chunk=1 << 20, workers=2, **NEGATIVE_NANS),
    )
    want = [f"0x{0xFF80_0001 + i:08x}" for i in range(5)]
    assert [row["input"] for row in record.examples["nan_code"]] == want
    from fp8lab.sweeps.exhaustive_chunks import ChunkResult, merge_chunks

    parts = [
        ChunkResult(4, {"other": 1}, {"other": [{"input": f"0x{v:08x}"}]}, 0, 0, "")
        for v in (0x40, 0x30, 0x20, 0x10, 0x08, 0x04)
    ]
    merged = merge_chunks(parts)
    assert [r["input"] for r in merged.examples["other"]] == [
        f"0x{v:08x}" for v in (4, 8, 0x10, 0x20, 0x30)
    ]
    assert merge_chunks(parts[::-1]) == merged


BROKEN = {
    "encoder_value_error": "ValueError: encoder refuses",
    "encoder_runtime_error": "RuntimeError: encoder exploded",
    "encoder_system_exit": "SystemExit",
    "encoder_wrong_shape": "uint8",
    "encoder_wrong_dtype": "int16",
    "encoder_list": "list",
}


# each defect on one side, the sides alternating (every defect and both sides, six runs)
@pytest.mark.parametrize(("user", "first"), [(u, i % 2 == 0) for i, u in enumerate(sorted(BROKEN))])
def test_exhaustive_broken_encoder_is_a_kernel_error_exit_4_in_one_line(
    user: str, first: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{M}:{user}"
    a, b = (spec, "fast") if first else ("fast", spec)
    rc = main(
        [
            "exhaustive",
            a,
            b,
            "--policy",
            "sat",
            "--workers",
            "1",
            "--quiet",
            "--start",
            "0x3f800000",
            "--stop",
            "0x3f800100",
        ]
    )
    out = capsys.readouterr()
    assert rc == 4
    assert_one_kernel_error_line(out.out + out.err, spec, BROKEN[user])


def test_exhaustive_crashed_worker_is_a_kernel_error_exit_4() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "fp8lab",
            "exhaustive",
            f"{M}:encoder_kills_worker",
            "fast",
            "--policy",
            "sat",
            "--workers",
            "2",
            "--quiet",
            "--start",
            "0x3f800000",
            "--stop",
            "0x3f810000",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert (
        "kernel-error" in proc.stdout + proc.stderr
        and "encoder_kills_worker" in proc.stdout + proc.stderr
    )
